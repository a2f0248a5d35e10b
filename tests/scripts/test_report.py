"""scripts/report.py: the results README has the machine, the peaks, the
best variant per shape, the accuracy table and the plots (relative links)."""

import json
import os
import re
import tempfile
import unittest

import helpers as h

PLOTS = {
    "plots": {
        "gflops_vs_n_t1.png": {"title": "Prefill throughput vs n, 1 thread", "panels": []},
        "accuracy_bound.png": {"title": "Max error E_M per case", "panels": []},
    },
    "skipped": {"decode_bandwidth.png": "no memory-bound (limit=bandwidth, decode) rows"},
}


def write_plots_json(folder):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "plots.json"), "w") as f:
        json.dump(PLOTS, f)


def table_rows(text, heading):
    """The markdown table rows (lists of cells) under a '## heading'."""
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


class ReportMatrix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        src = h.copy_fixture(h.MATRIX, cls.tmp.name)
        write_plots_json(cls.tmp.name)
        cls.readme = os.path.join(cls.tmp.name, "README.md")
        cls.proc = h.run_script("report.py", src, "-o", cls.readme)
        with open(cls.readme, encoding="utf-8") as f:
            cls.text = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_status(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertEqual(self.proc.stderr, "")

    def test_machine_metadata(self):
        self.assertTrue(self.text.startswith("# attnbench on Intel(R) Xeon(R) Processor\n"))
        machine = dict(table_rows(self.text, "Machine"))
        self.assertEqual(machine["slug"], "intel-xeon-sapphirerapids-2c")
        self.assertEqual(machine["cores"], "2")
        self.assertEqual(machine["compiler"], "GNU 12.2.0")
        self.assertEqual(machine["caches"], "L1d 48.0 KiB, L2 2.00 MiB, L3 105 MiB")
        self.assertIn("2026-11-30T01:23:45Z", machine["date"])

    def test_peaks(self):
        rows = table_rows(self.text, "Measured peaks")
        self.assertIn(["avx512", "152", "302"], rows)
        self.assertIn(["read", "20.1", "30.2"], rows)

    def test_best_variant_per_shape(self):
        rows = table_rows(self.text, "Best variant per shape")
        self.assertEqual(len(rows), 30)  # 15 shapes x 2 thread counts
        by_cell = {(r[0], r[1]): r for r in rows}
        best = by_cell[("n=2048 d=128 H=8", "1")]
        self.assertEqual(best[2:4], ["fma", "**xsmm**"])
        self.assertEqual(best[7], "54.5")  # pct_peak of that row, 54.532
        decode = by_cell[("nq=1 nkv=4096 d=128 H=32/8 causal", "1")]
        self.assertEqual(decode[2:4], ["bandwidth", "**avx512**"])

    def test_accuracy_states_the_metric_computed(self):
        # E_M divides by M_ic, per row and column over the keys the row
        # sees (reference/metrics.c), not by one max|V| of the whole input.
        section = self.text.split("## Accuracy\n", 1)[1]
        self.assertIn("|ô_ic−o_ic| / M_ic, M_ic = max_j |V_jc| over the keys j that row i sees",
                      section)
        self.assertNotIn("max|V| in units", section)

    def test_accuracy_table(self):
        rows = {r[0]: r for r in table_rows(self.text, "Accuracy")}
        self.assertEqual(list(rows), list(h.VARIANTS))
        self.assertEqual(rows["blas"][1:], ["15", "21.4", "12301", "0.00930", "ok"])

    def test_plots_embedded_with_relative_links(self):
        self.assertIn("![Prefill throughput vs n, 1 thread](gflops_vs_n_t1.png)", self.text)
        self.assertIn("![Max error E_M per case](accuracy_bound.png)", self.text)
        self.assertIn("`decode_bandwidth.png`: no memory-bound", self.text)
        self.assertIn("[matrix.csv](matrix.csv)", self.text)


class ReportCases(unittest.TestCase):
    def test_plots_in_another_folder_are_linked_relatively(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = h.copy_fixture(h.PAIR_A, tmp)
            write_plots_json(os.path.join(tmp, "plots"))
            out = os.path.join(tmp, "README.md")
            proc = h.run_script("report.py", src, "-o", out, "--plots", os.path.join(tmp, "plots"))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out) as f:
                self.assertIn("](plots/gflops_vs_n_t1.png)", f.read())

    def test_without_plots_json_the_report_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = h.copy_fixture(h.PAIR_A, tmp)
            out = os.path.join(tmp, "README.md")
            proc = h.run_script("report.py", src, "-o", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("note: no ", proc.stderr)
            with open(out) as f:
                self.assertIn("No plots yet", f.read())

    def test_skipped_and_failed_status(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = h.read_rows(h.PAIR_B)
            rows[1]["status"], rows[1]["reason"] = "failed", "rule A at row 3, col 7"
            src = h.write_rows(os.path.join(tmp, "m.csv"), rows, h.header_of(h.PAIR_B), h.PAIR_B)
            out = os.path.join(tmp, "README.md")
            proc = h.run_script("report.py", src, "-o", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out) as f:
                text = f.read()
            accuracy = {r[0]: r for r in table_rows(text, "Accuracy")}
            self.assertEqual(accuracy["avx512"][-1], "1 skipped (needs avx512f)")
            self.assertTrue(accuracy["avx2"][-1].startswith("**FAILED** in 1 of 2 cells"))
            listed = table_rows(text, "Cells not measured or failing")
            self.assertIn(["avx512", "n=256 d=64 H=8", "1", "skipped: needs avx512f"], listed)
            self.assertTrue(any(re.match(r"failed: rule A", r[3]) for r in listed))


    def test_failed_counts_the_cells_that_ran(self):
        import report
        rows = [{"status": "failed", "reason": "rule A"}, {"status": "ok", "reason": ""},
                {"status": "skipped", "reason": "needs avx512f"},
                {"status": "skipped", "reason": "needs avx512f"}]
        self.assertEqual(report.accuracy_status(rows),
                         "**FAILED** in 1 of 2 cells run, 2 skipped (needs avx512f)")

    def test_pages_in_the_machine_table(self):
        """The pages under the run's buffers are part of how it was measured:
        the page says which, and the kernel's policy; an older sidecar
        without them gets no line (not a guess)."""
        import report
        huge = {"peak": {"pages": "huge"}, "thp_policy": "madvise"}
        text = "\n".join(report.section_machine(huge))
        self.assertRegex(text, r"\| pages \| transparent huge pages asked for \(madvise\).*"
                               r"THP policy: madvise \|")
        text = "\n".join(report.section_machine({"peak": {"pages": "base"}}))
        self.assertIn("| pages | 4 KiB pages (MADV_NOHUGEPAGE)", text)
        self.assertNotIn("THP policy", text)
        self.assertNotIn("| pages |", "\n".join(report.section_machine({"peak": {}, "cores": 2})))

    def test_no_sidecar_names_the_csvs_own(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "model-shapes.csv")
            with open(h.PAIR_A) as f_in, open(src, "w") as f_out:
                f_out.write(f_in.read())
            out = os.path.join(tmp, "README.md")
            proc = h.run_script("report.py", src, "-o", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out) as f:
                text = f.read()
        self.assertIn("No metadata file (`model-shapes.meta.json`) was found.", text)
        self.assertNotIn("matrix.meta.json", text)


class ReportHeader(unittest.TestCase):
    """The command the page gives to reproduce the run matches its preset:
    run_matrix.sh runs the quick and full presets only."""

    def header(self, preset):
        import report
        return " ".join(report.section_header({"preset": preset}, ["/r/m.csv"], "/r"))

    def test_quick_and_full_are_run_matrix(self):
        self.assertIn("`scripts/run_matrix.sh`.", self.header("quick"))
        self.assertIn("`scripts/run_matrix.sh --full`.", self.header("full"))

    def test_another_preset_is_the_attnbench_command(self):
        for preset in ("perf-targets", "decode"):
            with self.subTest(preset=preset):
                text = self.header(preset)
                self.assertIn(f"`build/attnbench matrix --preset {preset} --out FILE.csv`", text)
                self.assertNotIn("Reproduce on your machine with `scripts/run_matrix.sh", text)

    def test_shapes_point_at_the_case_names(self):
        text = self.header("shapes")
        self.assertIn("`build/attnbench matrix --shape SHAPE", text)
        self.assertIn("the shapes are in the rows' `case` names", text)
        self.assertNotIn("Reproduce on your machine with `scripts/run_matrix.sh", text)


class ReportPeers(unittest.TestCase):
    def test_peers_section_gives_the_paired_ratio_and_where_a_peer_wins(self):
        from test_plot import with_peer_rows
        with tempfile.TemporaryDirectory() as tmp:
            rows = with_peer_rows(h.read_rows(h.MATRIX))
            src = h.write_rows(os.path.join(tmp, "m.csv"), rows, h.header_of(h.MATRIX))
            out = os.path.join(tmp, "README.md")
            proc = h.run_script("report.py", src, "-o", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out) as f:
                text = f.read()
            peers = table_rows(text, "attnbench vs the frameworks")
            self.assertTrue(peers)
            ratios = {r[4] for r in peers}
            self.assertTrue(any(r.startswith("1.50× (torch)") for r in ratios), ratios)
            self.assertTrue(any(r.startswith("0.800× (torch)") for r in ratios), ratios)
            self.assertIn("Where a peer wins: torch at", text)
            best = table_rows(text, "Best variant per shape")
            self.assertFalse(any("torch" in r[3] for r in best), "a peer is never 'best variant'")
            self.assertTrue(any(r[-1].startswith("1.50× (torch)") for r in best))


class BestVsPeer(unittest.TestCase):
    """The Best table's `vs best peer` takes the paired ratio only when the
    peer alternated with that cell's best variant."""

    @staticmethod
    def best_table(peer_extra):
        import report
        from test_answer_table import row
        rows = [row("avx512", 100), row("avx2", 120),
                row("torch", 150, paired_time_ns_median=125.0, **peer_extra)]
        return table_rows("\n".join(report.section_best(rows)) + "\n", "Best variant per shape")

    def test_paired_with_the_best_variant(self):
        table = self.best_table({"paired_variant": "avx512"})
        self.assertEqual(table[0][-1], "1.20× (torch)")  # 150 / 125, the same rounds

    def test_paired_with_another_variant(self):
        # 125 is avx2's time in the peer's rounds: the ratio against avx512
        # is the medians', timed apart, and says so.
        table = self.best_table({"paired_variant": "avx2"})
        self.assertEqual(table[0][-1], "1.50× (torch, unpaired)")


class AboveRoof(unittest.TestCase):
    """A row above its roof is marked wherever its % of roof is printed."""

    def test_fmt_pct(self):
        import attnbench_csv as ab
        self.assertEqual(ab.fmt_pct({"pct_peak": 54.532, "roof_exceeded": 0}), "54.5")
        self.assertEqual(ab.fmt_pct({"pct_peak": 105.0, "roof_exceeded": 1}),
                         "105 (above the roof)")
        # Over 100 % is above the roof even where the flag was not written.
        self.assertTrue(ab.above_roof({"pct_peak": 101.0}))
        self.assertFalse(ab.above_roof({"pct_peak": None}))


class PairedRoofs(unittest.TestCase):
    """Rows whose roof was measured beside them: the peaks section gives the
    spread of those roofs per limit and thread count; a file without them
    (older, or --roof run) says nothing of the kind."""

    def test_spread_of_paired_roofs(self):
        import report
        rows = [{"roof_source": "paired", "status": "ok", "limit": "bandwidth", "threads": 2,
                 "peak_gbytes_per_s": gbs, "peak_gflops": 480.0} for gbs in (35.2, 47.9, 40.0)]
        rows.append({"roof_source": "paired", "status": "ok", "limit": "fma", "threads": 1,
                     "peak_gbytes_per_s": 30.0, "peak_gflops": 244.0})
        rows.append({"roof_source": "run", "status": "ok", "limit": "fma", "threads": 1,
                     "peak_gbytes_per_s": 30.0, "peak_gflops": 10.0})
        text = " ".join(report.paired_roof_ranges(rows))
        # matrix_roof_of_passes (harness/matrix_pair.c) keeps the best pass.
        self.assertIn("the fastest pass kept", text)
        self.assertNotIn("median", text)
        self.assertIn("FMA roof at 1 thread 244–244 GFLOP/s (1 row)", text)
        self.assertIn("read roof at 2 threads 35.2–47.9 GB/s (3 rows)", text)
        self.assertNotIn("10", text.split("spanned:")[1])
        self.assertEqual(report.paired_roof_ranges(rows[4:]), [])
        # A bf16 tensor variant's roof (near the run's bf16 peak) is its own kind.
        rows.append({"roof_source": "paired", "status": "ok", "limit": "fma", "threads": 1,
                     "peak_gbytes_per_s": 30.0, "peak_gflops": 520.0})
        peak = {"fma_gflops": {"avx512": {"1": 257.0}}, "bf16_gflops": {"avx512_bf16": {"1": 514.0}}}
        text = " ".join(report.paired_roof_ranges(rows, peak))
        self.assertIn("FMA roof at 1 thread 244–244 GFLOP/s (1 row)", text)
        self.assertIn("bf16 roof at 1 thread 520–520 GFLOP/s (1 row)", text)


class Peaks(unittest.TestCase):
    """The peaks section: the bf16 roofs when the sidecar has them, and
    without a sidecar, figures said to be the rows'."""

    PAIRED = [{"roof_source": "paired", "status": "ok", "limit": "fma", "threads": 1,
               "peak_gflops": 244.0, "peak_gbytes_per_s": 30.0}]

    def test_bf16_peak_listed_when_present(self):
        import report
        peak = {"fma_gflops": {"avx512": {"1": 257.0, "2": 510.0}},
                "bf16_gflops": {"avx512_bf16": {"1": 514.0, "2": 1020.0}}}
        text = "\n".join(report.section_peaks({"peak": peak}, []))
        self.assertIn("| bf16 peak, GFLOP/s | 1 thread | 2 threads |", text)
        self.assertIn("| avx512_bf16 | 514 | 1020 |", text)
        del peak["bf16_gflops"]  # an older sidecar: no such table
        self.assertNotIn("bf16", "\n".join(report.section_peaks({"peak": peak}, [])))

    def test_sgemm_beside_the_fma_roof_when_present(self):
        import report
        peak = {"fma_gflops": {"avx2": {"1": 130.0, "2": 260.0},
                               "avx512": {"1": 230.0, "2": 460.0}},
                "sgemm_gflops": {"1": 161.0, "2": 322.0},
                "sgemm_library": "OpenBLAS 0.3.21 SkylakeX"}
        text = "\n".join(report.section_peaks({"peak": peak}, []))
        self.assertIn("OpenBLAS 0.3.21 SkylakeX", text)
        self.assertIn("| GFLOP/s | 161 | 322 |", text)
        # against the best ISA's roof (avx512 here), not the first listed
        self.assertIn("| % of the FMA roof | 70.0 | 70.0 |", text)
        del peak["sgemm_gflops"]  # an older sidecar: no such table
        self.assertNotIn("sgemm", "\n".join(report.section_peaks({"peak": peak}, [])))

    def test_without_a_sidecar_the_figures_are_the_rows(self):
        import report
        text = " ".join(report.section_peaks({}, self.PAIRED))
        self.assertIn("the figures below are the roofs written in the CSV's rows", text)
        self.assertNotIn("figures of the run's start", text)
        with_sidecar = {"peak": {"fma_gflops": {"avx512": {"1": 257.0}}}}
        self.assertIn("figures of the run's start",
                      " ".join(report.section_peaks(with_sidecar, self.PAIRED)))


if __name__ == "__main__":
    unittest.main()
