"""ab.py times libattn's OpenMP threads in its own process: nothing else
there may run threads beside them, NumPy's OpenBLAS pool included. Its
interval of the median ratio is the distribution-free one of the tables."""

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


class MedianInterval(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, h.SCRIPTS)
        import ab  # noqa: E402  (numpy: the plotting venv runs these tests)
        cls.interval = staticmethod(ab.median_interval)

    def test_order_statistics_of_the_tables(self):
        # The k-th smallest and largest of n for 95 % (distribution-free
        # confidence interval of a median): n 10 -> 2, 20 -> 6, 30 -> 10.
        for n, k, coverage in [(6, 1, 0.96875), (10, 2, 0.978515625), (11, 2, 0.98828125),
                               (20, 6, 0.9586105), (30, 10, 0.9572261)]:
            values = [float(i) for i in range(n, 0, -1)]  # any order: n .. 1
            lo, hi, cov = self.interval(values)
            self.assertEqual((lo, hi), (k, n + 1 - k), f"n = {n}")
            self.assertAlmostEqual(cov, coverage, places=6, msg=f"n = {n}")

    def test_too_few_values(self):
        self.assertIsNone(self.interval([1.0, 1.1, 0.9, 1.2, 1.05]))

    def test_a_lower_level_narrows_it(self):
        values = [1.0 + 0.01 * i for i in range(21)]
        lo95, hi95, _ = self.interval(values)
        lo80, hi80, cov = self.interval(values, level=0.80)
        self.assertTrue(lo95 < lo80 <= hi80 < hi95 and cov >= 0.80)


if __name__ == "__main__":
    unittest.main()
