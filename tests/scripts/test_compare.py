"""scripts/compare.py on the hand-made pair (fixtures/pair_a.csv, pair_b.csv):
exact ratios, the overlap rule, and rows present in one file only."""

import os
import tempfile
import unittest

import helpers as h

import compare  # scripts/, put on sys.path by helpers


def cell(rows, variant, n_kv, threads):
    matches = [r for r in rows if r["variant"] == variant and r["n_kv"] == str(n_kv)
               and r["threads"] == str(threads)]
    assert len(matches) == 1, (variant, n_kv, threads, len(matches))
    return matches[0]


class ComparePair(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.proc = h.run_script("compare.py", h.PAIR_A, h.PAIR_B, "-o", cls.tmp.name)
        with open(os.path.join(cls.tmp.name, "compare.csv"), newline="") as f:
            cls.rows = h.parse_csv_text(f.read())

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_significantly_faster(self):
        row = cell(self.rows, "naive", 256, 1)
        self.assertEqual(float(row["speedup"]), 2.0)
        self.assertEqual(float(row["gflops_ratio"]), 2.0)
        self.assertEqual((float(row["pct_peak_a"]), float(row["pct_peak_b"])), (10.0, 50.0))
        self.assertEqual(row["change"], "faster")

    def test_significantly_slower(self):
        row = cell(self.rows, "avx2", 256, 1)
        self.assertEqual(float(row["speedup"]), 0.8)
        self.assertEqual(float(row["gflops_ratio"]), 0.8)
        self.assertEqual(row["change"], "slower")

    def test_same_ratio_within_the_spread_is_not_flagged(self):
        row = cell(self.rows, "avx2", 256, 2)  # [500000, 600000] vs [580000, 700000]
        self.assertEqual(float(row["speedup"]), 0.8)
        self.assertEqual(row["change"], "within spread")

    def test_decode_row(self):
        row = cell(self.rows, "blas", 4096, 1)
        self.assertEqual(float(row["speedup"]), 0.5)
        self.assertAlmostEqual(float(row["gflops_ratio"]), 0.5, places=15)
        self.assertEqual(row["change"], "slower")

    def test_rows_in_one_file_only_are_listed(self):
        self.assertEqual(cell(self.rows, "blas", 512, 1)["change"], "only in A")
        self.assertEqual(cell(self.rows, "stream", 128, 2)["change"], "only in B")
        skipped = cell(self.rows, "avx512", 256, 1)
        self.assertEqual(skipped["change"], "not measured in both")
        self.assertEqual(skipped["status_b"], "skipped: needs avx512f")
        self.assertEqual(len(self.rows), 7)
        out = self.proc.stdout
        self.assertIn("only in A: blas n=512 d=64 H=8, 1 thread (ok)", out)
        self.assertIn("only in B: stream n=128 d=64 H=8, 2 threads (ok)", out)
        self.assertIn("not measured in both: avx512 n=256 d=64 H=8, 1 thread", out)

    def test_output_states_the_rule_and_the_summary(self):
        out = self.proc.stdout
        self.assertIn("intervals of the two rows do not overlap", out)
        self.assertIn("B vs A: 4 cells in both (1 faster, 2 slower, 1 within spread); "
                      "1 only in A, 1 only in B, 1 not measured in both", out)
        self.assertIn("AMD EPYC 7B12", out)
        with open(os.path.join(self.tmp.name, "compare.md")) as f:
            self.assertIn("| naive | n=256 d=64 H=8 | 1 | 4.19 ms | 2.10 ms | 2.00× |", f.read())

    def test_plot_drawn_with_significance(self):
        png = os.path.join(self.tmp.name, "compare.png")
        self.assertGreater(os.path.getsize(png), 10_000)
        record = h.load_json(os.path.join(self.tmp.name, "compare.json"))
        panels = record["plots"]["compare.png"]["panels"]
        self.assertEqual([p["title"] for p in panels], [
            "B over A: d_k=64, heads=8, 1 thread",
            "B over A: d_k=128, heads=32/8 kv, n_q=1, causal, 1 thread",
            "B over A: d_k=64, heads=8, 2 threads"])
        naive = next(s for s in panels[0]["series"] if s["name"] == "naive")
        self.assertEqual((naive["x"], naive["y"], naive["significant"]), ([256], [2.0], [True]))
        avx2 = next(s for s in panels[2]["series"] if s["name"] == "avx2")
        self.assertEqual((avx2["y"], avx2["significant"]), ([0.8], [False]))

    def test_help_states_the_rule(self):
        proc = h.run_script("compare.py", "--help")
        self.assertEqual(proc.returncode, 0)
        self.assertIn("do not overlap", " ".join(proc.stdout.split()))

    def test_one_file_is_a_usage_error(self):
        proc = h.run_script("compare.py", h.PAIR_A)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("at least two CSV files", proc.stderr)


class NotOkPairs(unittest.TestCase):
    """A failed row is still timed: its pair is marked in the tables and
    counted apart, never as an ordinary speed-up."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        rows = h.read_rows(h.PAIR_B)
        naive = cell(rows, "naive", 256, 1)  # 2x faster than A: "faster" when ok
        naive["status"], naive["reason"] = "failed", "rule A at row 3, col 7"
        b = h.write_rows(os.path.join(cls.tmp.name, "b.csv"), rows, h.header_of(h.PAIR_B),
                         h.PAIR_B)
        cls.proc = h.run_script("compare.py", h.PAIR_A, b, "-o", cls.tmp.name)
        with open(os.path.join(cls.tmp.name, "compare.md")) as f:
            cls.md = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_summary_counts_them_apart(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertIn("B vs A: 4 cells in both (2 slower, 1 within spread, 1 with a row not ok, "
                      "not counted as a change); 1 only in A", self.proc.stdout)
        self.assertNotIn("1 faster", self.proc.stdout)

    def test_tables_mark_them(self):
        for text in (self.proc.stdout, self.md):
            line = next(x for x in text.splitlines() if "naive" in x and "n=256" in x)
            self.assertTrue(line.rstrip(" |").endswith("B: failed: rule A at row 3, col 7"), line)
            ok_line = next(x for x in text.splitlines() if "avx2" in x and "n=256" in x)
            self.assertTrue(ok_line.rstrip(" |").endswith("ok"), ok_line)


class OverlapRule(unittest.TestCase):
    @staticmethod
    def change(a, b):
        """Pair.change of two rows with time intervals a = (min, max), b."""
        def row(lo, hi):
            return {"time_ns_median": (lo + hi) / 2, "time_ns_min": lo, "time_ns_max": hi}
        return compare.Pair(row(*a), row(*b)).change

    def test_touching_intervals_overlap(self):
        self.assertEqual(self.change((10, 20), (20, 30)), compare.WITHIN)
        self.assertEqual(self.change((10, 20), (5, 10)), compare.WITHIN)

    def test_disjoint_intervals(self):
        self.assertEqual(self.change((10, 20), (21, 30)), compare.SLOWER)
        self.assertEqual(self.change((10, 20), (1, 9)), compare.FASTER)

    def test_missing_spread(self):
        pair = compare.Pair({"time_ns_median": 5, "time_ns_min": None, "time_ns_max": 6},
                            {"time_ns_median": 5, "time_ns_min": 4, "time_ns_max": 6})
        self.assertEqual(pair.change, compare.UNKNOWN)


if __name__ == "__main__":
    unittest.main()
