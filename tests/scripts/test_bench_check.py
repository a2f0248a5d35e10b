"""tests/bench_check.py's own judgement where rounding meets a flag."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench_check  # noqa: E402


class RoofFlag(unittest.TestCase):
    def test_rounded_to_100_either_way(self):
        # 100.04 % prints as 100 under %.4g; 99.96 % too
        self.assertFalse(bench_check.roof_flag_contradicts(100.0, True))
        self.assertFalse(bench_check.roof_flag_contradicts(100.0, False))

    def test_clear_cases(self):
        self.assertFalse(bench_check.roof_flag_contradicts(130.2, True))
        self.assertFalse(bench_check.roof_flag_contradicts(85.3, False))

    def test_contradictions(self):
        self.assertTrue(bench_check.roof_flag_contradicts(100.1, False))
        self.assertTrue(bench_check.roof_flag_contradicts(130.2, False))
        self.assertTrue(bench_check.roof_flag_contradicts(99.9, True))
        self.assertTrue(bench_check.roof_flag_contradicts(50.0, True))


if __name__ == "__main__":
    unittest.main()
