"""f16/bf16 rows in the scripts: an old CSV (no q_dtype/kv_dtype/o_dtype
columns) reads as f32; a CSV with low-precision rows keeps each type its
own cell, gets the low_precision plot and the results page's section, and
every f32 view (best variant, accuracy, the other plots) ignores them."""

import os
import tempfile
import unittest

import helpers as h  # puts scripts/ on the path

import attnbench_csv as ab  # noqa: E402


def table_rows(text, heading):
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


class Reading(unittest.TestCase):
    def test_an_old_csv_without_the_columns_reads_as_f32(self):
        self.assertNotIn("kv_dtype", h.header_of(h.MATRIX))
        rows = ab.read_csv(h.MATRIX)
        self.assertTrue(rows)
        self.assertEqual({ab.types_of(r) for r in rows}, {("f32", "f32", "f32")})
        self.assertTrue(all(ab.dtype_label(r) == "f32" for r in rows))

    def test_each_type_is_its_own_cell(self):
        rows = ab.read_csv(h.MATRIX_DTYPES)
        loaded = ab.load([h.MATRIX_DTYPES]).rows
        self.assertEqual(len(loaded), len(rows))  # no type collapsed into another's key
        self.assertEqual({ab.dtype_label(r) for r in rows},
                         {"f32", "bf16", "f16", "f16kv", "bf16kv"})

    def test_a_bad_type_is_named(self):
        rows = h.read_rows(h.MATRIX_DTYPES)
        rows[0]["kv_dtype"] = "fp8"
        with tempfile.TemporaryDirectory() as tmp:
            src = h.write_rows(os.path.join(tmp, "m.csv"), rows, h.header_of(h.MATRIX_DTYPES),
                               h.MATRIX_DTYPES)
            proc = h.run_script("report.py", src, "-o", os.path.join(tmp, "README.md"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("column 'kv_dtype': 'fp8' is not f32, f16, bf16", proc.stderr)


class PlotLowPrecision(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.proc = h.run_script("plot.py", h.MATRIX_DTYPES, "-o", cls.tmp.name)
        ok = cls.proc.returncode == 0
        cls.record = h.load_json(os.path.join(cls.tmp.name, "plots.json")) if ok else None
        cls.rows = h.read_rows(h.MATRIX_DTYPES)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_speed_and_error_side_by_side_per_cell(self):
        self.assertGreater(os.path.getsize(os.path.join(self.tmp.name, "low_precision.png")),
                           20_000)
        panels = self.record["plots"]["low_precision.png"]["panels"]
        self.assertEqual([p["title"] for p in panels], [
            "n=4096 d=128 H=8, 2 threads: speed", "n=4096 d=128 H=8, 2 threads: accuracy",
            "nq=1 nkv=32768 d=128 H=32/8, 2 threads: speed",
            "nq=1 nkv=32768 d=128 H=32/8, 2 threads: accuracy"])
        for panel in panels:
            self.assertEqual(panel["kind"], "bars")
        self.assertTrue(panels[1]["ylog"])
        decode = h.series_by_name(panels[2])["avx2"]
        self.assertEqual(decode["x"], ["f32", "bf16kv", "f16kv"])
        f32 = h.find_row(self.rows, variant="avx2", n_q=1, kv_dtype="f32")
        bf16kv = h.find_row(self.rows, variant="avx2", n_q=1, kv_dtype="bf16")
        self.assertEqual(decode["y"], [float(f32["gflops"]), float(bf16kv["gflops"]),
                                       float(h.find_row(self.rows, variant="avx2", n_q=1,
                                                      kv_dtype="f16")["gflops"])])
        errors = h.series_by_name(panels[1])["avx512"]
        self.assertEqual(errors["x"], ["f32", "bf16", "f16"])
        self.assertEqual(errors["y"][1], float(h.find_row(self.rows, variant="avx512", n_q=4096,
                                                        q_dtype="bf16")["max_err_u"]))

    def test_a_failed_row_has_no_speed_bar_but_its_error_shows(self):
        panels = self.record["plots"]["low_precision.png"]["panels"]
        stream_speed = h.series_by_name(panels[0])["stream"]
        self.assertIsNone(stream_speed["y"][1])  # bf16 failed rule A
        self.assertIsNotNone(h.series_by_name(panels[1])["stream"]["y"][1])

    def test_the_f32_plots_read_f32_rows_only(self):
        decode = h.series_by_name(self.record["plots"]["decode_bandwidth.png"]["panels"][0])
        f32 = h.find_row(self.rows, variant="avx2", n_q=1, kv_dtype="f32")
        self.assertEqual(decode["avx2"]["x"], [32768])
        self.assertEqual(decode["avx2"]["y"], [float(f32["gbytes_per_s"])])
        for panel in self.record["plots"]["pct_peak_t2.png"]["panels"]:
            for s in panel["series"]:
                self.assertEqual(len(s["x"]), len(set(s["x"])), panel["title"])


class ReportLowPrecision(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        src = h.copy_fixture(h.MATRIX_DTYPES, cls.tmp.name)
        cls.proc = h.run_script("report.py", src, "-o", os.path.join(cls.tmp.name, "README.md"))
        with open(os.path.join(cls.tmp.name, "README.md"), encoding="utf-8") as f:
            cls.text = f.read()
        cls.rows = h.read_rows(h.MATRIX_DTYPES)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_each_low_precision_row_beside_its_f32_row(self):
        table = table_rows(self.text, "Low precision (f16/bf16)")
        self.assertEqual(len(table), 16)  # 4 variants x 2 types x 2 shapes
        by_key = {(r[2], r[3], r[0]): r for r in table}
        avx2 = by_key[("avx2", "bf16kv", "nq=1 nkv=32768 d=128 H=32/8")]
        f32 = h.find_row(self.rows, variant="avx2", n_q=1, kv_dtype="f32")
        low = h.find_row(self.rows, variant="avx2", n_q=1, kv_dtype="bf16")
        speedup = float(f32["time_ns_median"]) / float(low["time_ns_median"])
        self.assertEqual(avx2[6], f"{ab.fmt_num(speedup)}×")
        self.assertEqual(avx2[7], ab.fmt_num(float(low["pct_peak"])))
        self.assertEqual(avx2[8], ab.fmt_num(float(f32["pct_peak"])))
        self.assertEqual(avx2[9], ab.fmt_num(float(low["max_err_u"])))
        self.assertEqual(avx2[10], ab.fmt_num(float(f32["max_err_u"])))
        failed = by_key[("stream", "bf16", "n=4096 d=128 H=8")]
        self.assertEqual(failed[6], "–")
        self.assertTrue(failed[11].startswith("failed: rule A"), failed)

    def test_the_f32_tables_ignore_low_precision_rows(self):
        best = {(r[0], r[1]): r for r in table_rows(self.text, "Best variant per shape")}
        decode = best[("nq=1 nkv=32768 d=128 H=32/8", "2")]
        f32 = h.find_row(self.rows, variant="avx512", n_q=1, kv_dtype="f32")
        self.assertEqual(decode[4], ab.fmt_time_ns(float(f32["time_ns_median"])))
        accuracy = {r[0]: r for r in table_rows(self.text, "Accuracy")}
        self.assertEqual(accuracy["stream"][5], "ok")  # its failure is a bf16 row's
        self.assertLess(float(accuracy["avx512"][2]), 1000)

    def test_the_failed_row_is_listed_with_its_types(self):
        rows = table_rows(self.text, "Cells not measured or failing")
        self.assertEqual([(r[0], r[1]) for r in rows], [("stream", "n=4096 d=128 H=8 bf16")])

    def test_an_old_csv_has_no_low_precision_section(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = h.copy_fixture(h.MATRIX, tmp)
            proc = h.run_script("report.py", src, "-o", os.path.join(tmp, "README.md"))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(os.path.join(tmp, "README.md"), encoding="utf-8") as f:
                self.assertNotIn("## Low precision", f.read())


class CompareLowPrecision(unittest.TestCase):
    def test_types_are_compared_cell_by_cell(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = h.run_script("compare.py", h.MATRIX_DTYPES, h.MATRIX_DTYPES, "-o", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            rows = h.read_rows(os.path.join(tmp, "compare.csv"))
        timed = [r for r in h.read_rows(h.MATRIX_DTYPES) if r["status"] == "ok"]
        self.assertEqual(len(rows), len(timed) + 1)  # + the failed row, not measured in both
        self.assertEqual({(r["q_dtype"], r["kv_dtype"], r["o_dtype"]) for r in rows},
                         {("f32",) * 3, ("bf16",) * 3, ("f16",) * 3, ("f32", "f16", "f32"),
                          ("f32", "bf16", "f32")})
        self.assertTrue(all(float(r["speedup"]) == 1.0 for r in rows if r["speedup"]))


if __name__ == "__main__":
    unittest.main()
