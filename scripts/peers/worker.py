#!/usr/bin/env python3
"""A peer worker: one attention library in a process of its own, driven over
stdin/stdout JSON lines by harness/peer_client.c (docs/peers.md).

    python scripts/peers/worker.py PEER        PEER: torch | onnxruntime | openvino
"""

import importlib
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import protocol  # noqa: E402
from protocol import Skip  # noqa: E402

# layout (numpy) is imported with the library, so that a missing numpy is a
# hello with a reason too, not a worker that dies before saying anything.
layout = None

PEERS = {"torch": "peer_torch", "onnxruntime": "peer_onnxruntime", "openvino": "peer_openvino"}

# Spin-waiting off, set before anything is imported: a thread pool reads its
# environment once, at start-up. A spinning pool burns the cores of whoever
# shares the machine between calls, and flatters or ruins timings by turns.
# torch's wheel uses GNU OpenMP (libgomp): PASSIVE makes idle threads sleep
# at once. ONNX Runtime's switch is a session option (peer_onnxruntime.py);
# OpenVINO's CPU plugin runs on oneTBB, which has none (docs/peers.md).
SPIN_ENV = {"torch": {"OMP_WAIT_POLICY": "PASSIVE"}, "onnxruntime": {}, "openvino": {}}
# And no pool for NumPy's own OpenBLAS (the inputs' set-up only; no peer
# computes through it): it would start a thread per core but one at
# import, polling beside the peer's own pool.
NUMPY_ENV = {"OPENBLAS_NUM_THREADS": "1"}


class Worker:
    def __init__(self, name, module, channel):
        self.name = name
        self.module = module
        self.channel = channel
        self.adapters = []  # one per copy of the inputs; calls take them in turn
        self.next = 0
        self.buffer = None

    @property
    def adapter(self):
        return self.adapters[0] if self.adapters else None

    def call_next(self):
        """One call, on the next copy's adapter (decode: inputs rotated past the caches)."""
        adapter = self.adapters[self.next]
        self.next = (self.next + 1) % len(self.adapters)
        adapter.call()

    def reply(self, obj):
        protocol.send(self.channel, obj)

    def drop(self):
        self.adapters = []  # their tensors may be views of the buffer: release first
        self.next = 0
        if self.buffer is not None:
            self.buffer.close()
            self.buffer = None

    def setup(self, req):
        self.drop()
        shape = layout.Shape.from_json(req.get("shape"))
        threads = req.get("threads")
        if not isinstance(threads, int) or threads < 1:
            raise layout.ProblemError(f"threads = {threads!r} must be a whole number >= 1")
        copies = req.get("copies", 1)
        if not isinstance(copies, int) or not 1 <= copies <= layout.MAX_COPIES:
            raise layout.ProblemError(f"copies = {copies!r} must be a whole number from 1 to "
                                      f"{layout.MAX_COPIES}")
        # Before any array of this cell exists: NumPy advises huge pages
        # (or not) as it allocates.
        layout.use_pages(req.get("pages"))
        self.buffer = layout.SharedBuffer(req.get("buffer"), shape, req.get("types"), req.get("offsets"))
        adapters = []
        for copy in range(copies):
            # Each builds from private copies of the buffer's inputs (read()).
            adapter = self.module.Adapter(shape, self.buffer.types, threads)
            op = adapter.build(self.buffer)
            adapter.call()  # untimed: the first's output goes back to the client
            if copy == 0:
                self.buffer.write_o(adapter.output(), already_storage=True)
            adapters.append(adapter)
        self.adapters = adapters
        if copies > 1:
            op += f"; {copies} copies of the inputs, called in turn"
        return {"ok": True, "op": op}

    def timed(self, req, empty):
        reps = req.get("reps")
        if not isinstance(reps, int) or reps < 1:
            raise layout.ProblemError(f"reps = {reps!r} must be a whole number >= 1")
        if empty:
            return {"ok": True, "ns": protocol.timed_calls(protocol.empty_call, reps)}
        if self.adapter is None:
            raise layout.ProblemError("'time' before a successful 'setup'")
        call = self.adapter.call if len(self.adapters) == 1 else self.call_next
        with self.adapter.timing_context():
            ns = protocol.timed_calls(call, reps)
        return {"ok": True, "ns": ns}

    def handle(self, line):
        try:
            req = json.loads(line)
        except ValueError as e:
            return {"ok": False, "error": f"request is not JSON: {e}"}
        cmd = req.get("cmd") if isinstance(req, dict) else None
        try:
            if cmd == "setup":
                return self.setup(req)
            if cmd in ("time", "empty"):
                return self.timed(req, cmd == "empty")
            return {"ok": False, "error": f"unknown cmd {cmd!r}"}
        except Skip as e:
            self.drop()
            return {"ok": False, "skip": str(e)}
        except layout.ProblemError as e:
            self.drop()
            return {"ok": False, "error": str(e)}
        except Exception as e:  # the library's own failure: tell the client, stay up
            self.drop()
            traceback.print_exc(file=sys.stderr)
            return {"ok": False, "error": f"{self.name}: {type(e).__name__}: {e}"}

    def serve(self, stdin):
        for line in stdin:
            if not line.strip():
                continue
            if _is_quit(line):
                break
            self.reply(self.handle(line))
        self.drop()


def _is_quit(line):
    try:
        req = json.loads(line)
    except ValueError:
        return False
    return isinstance(req, dict) and req.get("cmd") == "quit"


def main(argv):
    channel = protocol.claim_stdout()
    name = argv[1] if len(argv) == 2 else None
    if name not in PEERS:
        protocol.send(channel, {"hello": name, "ok": False,
                                "reason": f"usage: worker.py PEER, PEER one of {', '.join(PEERS)}"})
        return 0
    global layout
    os.environ.update(SPIN_ENV[name])
    os.environ.update(NUMPY_ENV)
    try:
        layout = importlib.import_module("layout")
        module = importlib.import_module(PEERS[name])
        version = module.load()
    except Exception as e:  # ImportError, or a broken shared library
        protocol.send(channel, {"hello": name, "ok": False, "reason": f"cannot import {name}: {e}"})
        return 0
    protocol.send(channel, {"hello": name, "ok": True, "version": version, "pid": os.getpid()})
    Worker(name, module, channel).serve(sys.stdin)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
