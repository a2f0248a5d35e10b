"""Each peer lives in a process of its own: one worker per library, each
mapping its own library and none of the others' (two OpenMP / thread-pool
runtimes in one process would share, and skew, each other's threads)."""

import os
import subprocess
import unittest

from peer_case import PYTHON, Worker

MARKERS = {"torch": "libtorch_cpu.so", "onnxruntime": "onnxruntime_pybind11_state", "openvino": "libopenvino.so"}


class TestIsolation(unittest.TestCase):
    def test_one_library_per_process(self):
        if not os.path.exists(PYTHON):
            self.fail(f"{PYTHON} missing: run scripts/setup_peers.sh")
        workers = {peer: Worker(peer) for peer in MARKERS}
        try:
            pids = {peer: w.hello.get("pid") for peer, w in workers.items()}
            for peer, w in workers.items():
                self.assertTrue(w.hello.get("ok"), w.hello)
                self.assertEqual(pids[peer], w.proc.pid, "hello's pid is the spawned process")
            self.assertEqual(len(set(pids.values())), len(pids), f"distinct processes: {pids}")
            for peer, pid in pids.items():
                with open(f"/proc/{pid}/maps") as f:
                    maps = f.read()
                for other, marker in MARKERS.items():
                    with self.subTest(worker=peer, library=other):
                        if other == peer:
                            self.assertIn(marker, maps, f"{peer}'s worker maps its library")
                        else:
                            self.assertNotIn(marker, maps, f"{peer}'s worker must not map {other}")
        finally:
            codes = {peer: w.close() for peer, w in workers.items()}
        self.assertEqual(codes, {peer: 0 for peer in MARKERS}, "each worker exits 0 on quit")

    def test_no_numpy_pool(self):
        """A worker runs no thread beyond its library's own: NumPy (the
        inputs' set-up) must not start its OpenBLAS pool, a thread per core
        but one, polling beside the peer's. The yardstick is the same
        imports in a process of their own with that pool switched off."""
        if not os.path.exists(PYTHON):
            self.fail(f"{PYTHON} missing: run scripts/setup_peers.sh")
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        # OpenVINO's telemetry blocked as its adapter blocks it (peer_openvino.load).
        probe = ("import os, sys; sys.modules['openvino_telemetry'] = None; import numpy, {}; "
                 "print(len(os.listdir('/proc/self/task')))")
        for peer in MARKERS:
            with self.subTest(worker=peer):
                alone = subprocess.run([PYTHON, "-c", probe.format(peer)], capture_output=True, text=True,
                                       timeout=120, env=dict(env, OPENBLAS_NUM_THREADS="1"))
                self.assertEqual(alone.returncode, 0, alone.stderr)
                w = Worker(peer, env=env)
                try:
                    self.assertTrue(w.hello.get("ok"), w.hello)
                    threads = len(os.listdir(f"/proc/{w.proc.pid}/task"))
                finally:
                    w.close()
                self.assertEqual(threads, int(alone.stdout), f"{peer}'s worker's threads after hello")

    def test_eof_is_quit(self):
        """A harness that dies closes the worker's stdin: the worker must exit 0, not linger."""
        w = Worker("onnxruntime")
        self.assertTrue(w.hello.get("ok"), w.hello)
        w.proc.stdin.close()
        self.assertEqual(w.proc.wait(timeout=30), 0)
        w.proc.stdout.close()

    def test_unknown_peer_says_so(self):
        w = Worker("tensorflow")
        self.assertEqual(w.hello["ok"], False)
        self.assertIn("PEER one of", w.hello["reason"])
        self.assertEqual(w.close(), 0)

    def test_missing_library_is_a_reason(self):
        """A Python without the peers (the system one) gives a hello with the
        import error, and exits 0."""
        import sys

        w = Worker("openvino", python=sys.executable if "venv-peers" not in sys.executable else "/usr/bin/python3")
        if w.hello.get("ok"):
            w.close()
            self.skipTest("this interpreter has openvino")
        self.assertIn("cannot import openvino", w.hello["reason"])
        self.assertEqual(w.close(), 0)


if __name__ == "__main__":
    unittest.main()
