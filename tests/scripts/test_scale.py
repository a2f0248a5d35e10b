"""A row at a scale of its own (perf-targets' peaked-attention cell, its
case name carrying scale=) is a cell of its own: loading keeps it beside
the row of the same shape at the usual scale instead of replacing it, and
the plots and the results page's tables read the usual-scale row only."""

import os
import tempfile
import unittest

import helpers as h  # puts scripts/ on the path

import attnbench_csv as ab  # noqa: E402


def with_peaked_twin(tmp):
    """The fixture plus, for its first ok row, a copy at scale 2 that is 50x
    slower: the twin a denormal cliff would make."""
    rows = h.read_rows(h.MATRIX)
    usual = next(r for r in rows if r["status"] == "ok" and r["kind"] == "variant")
    peaked = dict(usual)
    peaked["case"] = usual["case"] + ",scale=2"
    peaked["time_ns_median"] = str(float(usual["time_ns_median"]) * 50)
    peaked["gflops"] = str(float(usual["gflops"]) / 50)
    peaked["pct_peak"] = str(float(usual["pct_peak"]) / 50)
    src = h.write_rows(os.path.join(tmp, "m.csv"), rows + [peaked], h.header_of(h.MATRIX))
    return src, usual, peaked


class Scale(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.src, self.usual, self.peaked = with_peaked_twin(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_scale_of_reads_the_case_name(self):
        self.assertEqual(ab.scale_of({"case": "impl=avx2,B=1,Hq=8,causal=0,scale=2"}), 2.0)
        self.assertEqual(ab.scale_of({"case": "impl=avx2,B=1,Hq=8,causal=0,q=bf16"}), 0.0)
        self.assertTrue(ab.usual_scale({"case": "impl=avx2,B=1,Hq=8"}))

    def test_loading_keeps_both_rows(self):
        rows = ab.read_csv(self.src)
        loaded = ab.load([self.src]).rows
        self.assertEqual(len(loaded), len(rows))
        cases = {r["case"] for r in loaded}
        self.assertIn(self.usual["case"], cases)
        self.assertIn(self.peaked["case"], cases)

    def test_plots_read_the_usual_row(self):
        out = os.path.join(self.tmp.name, "plots")
        proc = h.run_script("plot.py", self.src, "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("1 rows at a scale of their own", proc.stderr)
        record = h.load_json(os.path.join(out, "plots.json"))
        values = []
        for plot in record["plots"].values():
            for panel in plot["panels"]:
                for s in panel.get("series", []):
                    values += [y for y in s.get("y", []) if y is not None]
        self.assertIn(float(self.usual["gflops"]), values)
        self.assertNotIn(float(self.peaked["gflops"]), values)

    def test_the_page_reads_the_usual_row(self):
        page = os.path.join(self.tmp.name, "README.md")
        proc = h.run_script("report.py", self.src, "-o", page)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("left out of the tables", proc.stderr)
        with open(page, encoding="utf-8") as f:
            self.assertNotIn(self.peaked["case"], f.read())


if __name__ == "__main__":
    unittest.main()
