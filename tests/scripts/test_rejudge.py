"""scripts/rejudge.py: decode rows judged against the roof the roofline's
side rule names, from their own roof columns; and every committed result
file already is."""

import glob
import os
import tempfile
import unittest

from helpers import MATRIX_DTYPES, ROOT, header_of, read_rows, run_script, write_rows

import attnbench_csv as ab  # noqa: E402 (helpers puts scripts/ on the path)

# An MQA decode (32 query heads on one K/V head, d 128, n_kv 32768, f32):
# 16 flops a byte, above a ridge of 300 / 30 = 10; 2.15 ms a call.
MQA = {"case": "impl=avx2,B=1,Hq=32,Hkv=1,nq=1,nkv=32768,dk=128,dv=128,causal=0",
       "variant": "avx2", "kind": "variant", "batch": "1", "heads_q": "32", "heads_kv": "1",
       "n_q": "1", "n_kv": "32768", "d_k": "128", "d_v": "128", "causal": "0",
       "q_dtype": "f32", "kv_dtype": "f32", "o_dtype": "f32", "threads": "2",
       "time_ns_median": "2150000", "time_ns_min": "2100000", "time_ns_max": "2300000",
       "repetitions": "9", "gflops": "249.73", "gbytes_per_s": "15.6162", "limit": "bandwidth",
       "peak_gflops": "300", "peak_gbytes_per_s": "30", "pct_peak": "52.05",
       "roof_exceeded": "0", "roof_source": "paired", "workspace_bytes": "2048",
       "max_err_u": "1", "max_err_d_u": "1", "bound_u": "100", "nmse": "1e-12", "peer_op": "",
       "overhead_ns": "", "paired_variant": "", "paired_time_ns_median": "", "status": "ok",
       "reason": ""}
# The same cell with one query head per K/V head: 0.5 flops a byte.
MHA = dict(MQA, case=MQA["case"].replace("Hq=32,Hkv=1", "Hq=32,Hkv=32"), heads_kv="32",
           gflops="15.5", gbytes_per_s="31.03", pct_peak="103.4", roof_exceeded="1")
PREFILL = dict(MQA, case=MQA["case"].replace("nq=1,", "nq=4096,"), n_q="4096", limit="fma",
               pct_peak="83.2")
# The MQA cell at its ridge, to the 6 digits the matrix prints (the exact
# tie is 18.768310546875 GB/s): it keeps the side it was given.
AT_RIDGE = dict(MQA, variant="xsmm", case=MQA["case"].replace("avx2", "xsmm"),
                peak_gbytes_per_s="18.7683", pct_peak="83.21")
SKIPPED = dict(MQA, variant="avx512", case=MQA["case"].replace("avx2", "avx512"),
               time_ns_median="", time_ns_min="", time_ns_max="", repetitions="", gflops="",
               gbytes_per_s="", pct_peak="", roof_source="run", status="skipped",
               reason="needs avx512f, the CPU lacks it")


class RejudgeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.header = header_of(MATRIX_DTYPES) + ["roof_source"]
        self.csv = write_rows(os.path.join(self.tmp.name, "old.csv"),
                              [PREFILL, MQA, MHA, AT_RIDGE, SKIPPED], self.header,
                              MATRIX_DTYPES)

    def tearDown(self):
        self.tmp.cleanup()

    def test_rule(self):
        rows = {r["case"]: r for r in ab.read_csv(self.csv)}
        self.assertEqual(ab.roofline_limit(rows[MQA["case"]]), "fma")
        self.assertEqual(ab.roofline_limit(rows[MHA["case"]]), "bandwidth")
        self.assertEqual(ab.roofline_limit(rows[PREFILL["case"]]), "fma")
        unmeasured = dict(rows[MQA["case"]], peak_gbytes_per_s=None)
        self.assertEqual(ab.roofline_limit(unmeasured), "bandwidth")
        mqa = rows[MQA["case"]]
        # Tables list prefill before decode whichever roof a decode row is on.
        on_fma = dict(mqa, limit="fma")
        ordered = sorted([on_fma, rows[PREFILL["case"]], rows[MHA["case"]]],
                         key=ab.shape_sort_key)
        self.assertEqual(ordered[0]["case"], PREFILL["case"])
        self.assertEqual(ab.cell_flops(mqa), 2.0 * 256 * 32768 * 32)
        self.assertEqual(ab.cell_bytes(mqa), 4 * (32 * 128 * 2 + 32768 * 256))

    def test_rewrites_only_what_the_rule_moves(self):
        with open(self.csv, encoding="utf-8") as f:
            before = f.read().splitlines()
        check = run_script("rejudge.py", "--check", self.csv)
        self.assertEqual(check.returncode, 1, check.stdout + check.stderr)
        self.assertIn("2 rows would change", check.stdout)
        done = run_script("rejudge.py", self.csv)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        with open(self.csv, encoding="utf-8") as f:
            after = f.read().splitlines()
        changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
        self.assertEqual(len(before), len(after))
        self.assertEqual(changed, [2, 5])  # the MQA row and its skipped twin, not the tie
        rows = {r["case"]: r for r in read_rows(self.csv)}
        mqa = rows[MQA["case"]]
        self.assertEqual((mqa["limit"], mqa["pct_peak"], mqa["roof_exceeded"], mqa["roof_source"]),
                         ("fma", "83.24", "0", "run"))
        skipped = rows[SKIPPED["case"]]
        self.assertEqual((skipped["limit"], skipped["pct_peak"]), ("fma", ""))
        # The MHA row stays on the read roof, above it and flagged so.
        self.assertEqual((rows[MHA["case"]]["limit"], rows[MHA["case"]]["roof_exceeded"]),
                         ("bandwidth", "1"))
        again = run_script("rejudge.py", "--check", self.csv)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)

    def test_blank_lines_keep_records_in_place(self):
        with open(self.csv, encoding="utf-8") as f:
            lines = f.read().splitlines(keepends=True)
        with open(self.csv, "w", encoding="utf-8") as f:
            f.write("".join(lines[:2] + ["\n"] + lines[2:]))
        done = run_script("rejudge.py", self.csv)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        rows = {r["case"]: r for r in read_rows(self.csv)}
        self.assertEqual(rows[MQA["case"]]["limit"], "fma")
        self.assertEqual(rows[PREFILL["case"]]["pct_peak"], "83.2")
        self.assertEqual(rows[AT_RIDGE["case"]]["limit"], "bandwidth")

    def test_unreadable(self):
        bad = run_script("rejudge.py", os.path.join(self.tmp.name, "missing.csv"))
        self.assertEqual(bad.returncode, 2)
        self.assertIn("no such file", bad.stderr)

    def test_committed_results_follow_the_rule(self):
        files = sorted(glob.glob(os.path.join(ROOT, "results", "*", "*.csv")))
        self.assertTrue(files)
        result = run_script("rejudge.py", "--check", *files)
        self.assertEqual(result.returncode, 0, result.stdout[-2000:] + result.stderr)


if __name__ == "__main__":
    unittest.main()
