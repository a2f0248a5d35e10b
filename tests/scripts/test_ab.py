"""ab.py times libattn's OpenMP threads in its own process: nothing else
there may run threads beside them, NumPy's OpenBLAS pool included."""

import os
import subprocess
import sys
import unittest

import helpers as h

PROBE = ("import os, sys; sys.path.insert(0, sys.argv[1]); import ab; "
         "print(len(os.listdir('/proc/self/task')))")


class NoSecondPool(unittest.TestCase):
    def test_import_starts_no_thread(self):
        # Without ab.py's OPENBLAS_NUM_THREADS, NumPy's import alone starts
        # a thread per core but one; the environment here must not hide that.
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
        out = subprocess.run([sys.executable, "-c", PROBE, h.SCRIPTS], env=env, capture_output=True,
                             text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "1", "threads in ab.py's process after its imports")


if __name__ == "__main__":
    unittest.main()
