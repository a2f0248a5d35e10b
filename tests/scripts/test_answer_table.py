"""scripts/answer_table.py: the "use this variant" table on small
hand-made rows: the shape classes, the winner among passing variants, the
margins over the runner-up and the best peer (by name or by a `kind`
column), the d_k and thread splits, and the markdown."""

import math
import unittest

import helpers as h

import answer_table as at  # scripts/, put on sys.path by helpers
import attnbench_csv as ab


def row(variant, time_ns, n_q=2048, n_kv=None, d_k=64, heads_q=8, heads_kv=None, causal=0,
        threads=1, pct_peak=50.0, status="ok", **extra):
    """A typed row as ab.load() gives it, every column present."""
    n_kv = n_q if n_kv is None else n_kv
    heads_kv = heads_q if heads_kv is None else heads_kv
    r = {name: None for name in ab.COLUMN_NAMES}
    # "failed: why" is the row's status and reason, as the CSV has them.
    status, _, reason = status.partition(": ")
    r.update(case=f"impl={variant},nq={n_q},nkv={n_kv},dk={d_k}", variant=variant, batch=1,
             heads_q=heads_q, heads_kv=heads_kv, n_q=n_q, n_kv=n_kv, d_k=d_k, d_v=d_k,
             causal=causal, threads=threads, limit="bandwidth" if n_q <= 16 else "fma",
             pct_peak=pct_peak, status=status, reason=reason,
             kind="peer" if variant in ("torch", "onnxruntime", "openvino") else "variant",
             time_ns_median=None if status == "skipped" else time_ns)
    r.update(extra)
    return r


def only(answers, **key):
    matches = [a for a in answers if all(a[k] == v for k, v in key.items())]
    assert len(matches) == 1, (key, matches)
    return matches[0]


class ShapeClasses(unittest.TestCase):
    def test_rules(self):
        cases = [
            (dict(n_q=1024), "prefill short"),
            (dict(n_q=1025), "prefill long"),
            (dict(n_q=128, causal=1), "causal"),
            (dict(n_q=16384, causal=1), "causal"),
            (dict(n_q=1, n_kv=4096, heads_q=32, heads_kv=8), "GQA decode"),
            (dict(n_q=16, n_kv=4096, heads_q=32, heads_kv=1, causal=1), "GQA decode"),
            (dict(n_q=1, n_kv=4096, heads_q=32, heads_kv=32), None),  # MHA decode
            (dict(n_q=17, n_kv=4096, heads_q=32, heads_kv=8), None),  # chunked prefill
            (dict(n_q=512, heads_q=32, heads_kv=8), "prefill short"),  # GQA prefill
        ]
        for shape, name in cases:
            with self.subTest(shape=shape):
                self.assertEqual(at.shape_class_of(row("avx512", 1.0, **shape)), name)

    def test_caption_states_every_rule(self):
        text = at.caption()
        for shape_class in at.SHAPE_CLASSES:
            self.assertIn(f"**{shape_class.name}**: {shape_class.rule}", text)
        self.assertIn("n_q = n_kv ≤ 1024", text)


class Winner(unittest.TestCase):
    def test_fastest_and_margin(self):
        rows = [row("avx512", 100, n_q=2048, pct_peak=60), row("avx512", 200, n_q=4096,
                                                               pct_peak=70),
                row("avx2", 200, n_q=2048), row("avx2", 300, n_q=4096),
                row("naive", 5000, n_q=2048)]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertEqual(a["variant"], "avx512")
        self.assertEqual(a["runner_up"], "avx2")
        self.assertAlmostEqual(a["margin"], math.sqrt(2.0 * 1.5))  # geomean of 200/100, 300/200
        self.assertEqual(a["pct_peak"], 65.0)  # median of 60 and 70
        self.assertIsNone(a["peer"])
        self.assertIsNone(a["peer_margin"])
        self.assertEqual((a["shapes"], a["shapes_total"]), (2, 2))

    def test_failed_row_disqualifies(self):
        rows = [row("avx512", 100, n_q=2048), row("avx512", 100, n_q=4096,
                                                  status="failed: rule A at row 3"),
                row("xsmm", 150, n_q=2048), row("xsmm", 160, n_q=4096),
                row("blas", 300, n_q=2048)]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertEqual((a["variant"], a["runner_up"]), ("xsmm", "blas"))
        self.assertAlmostEqual(a["margin"], 2.0)  # the one shared shape: 300 / 150

    def test_skipped_rows_are_not_measurements(self):
        rows = [row("naive", None, n_q=8192, status="skipped: over budget (est. 4.1 min)"),
                row("blocked", 900, n_q=8192)]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertEqual(a["variant"], "blocked")
        self.assertIsNone(a["runner_up"])
        self.assertEqual((a["shapes"], a["shapes_total"]), (1, 1))

    def test_no_passing_variant_no_row(self):
        rows = [row("avx512", 100, status="failed: guard bytes around the workspace overwritten"),
                row("avx2", None, status="skipped: needs avx2")]
        self.assertEqual(at.answer_rows(rows), [])
        self.assertIn("No passing rows", "\n".join(at.table_lines(rows)))

    def test_split_by_d_k_and_threads(self):
        rows = []
        for d_k, fast in ((64, "avx512"), (80, "xsmm"), (128, "avx2")):
            for threads in (1, 2):
                for v in ("avx512", "xsmm", "avx2"):
                    rows.append(row(v, 100 if v == fast else 130, n_q=512, d_k=d_k,
                                    threads=threads))
        answers = at.answer_rows(rows)
        self.assertEqual([(a["d_k"], a["threads"], a["variant"]) for a in answers],
                         [(64, 1, "avx512"), (64, 2, "avx512"), (80, 1, "xsmm"), (80, 2, "xsmm"),
                          (128, 1, "avx2"), (128, 2, "avx2")])

    def test_class_order(self):
        rows = [row("avx512", 1, n_q=1, n_kv=4096, heads_q=32, heads_kv=8),
                row("avx512", 1, n_q=512, causal=1), row("avx512", 1, n_q=4096),
                row("avx512", 1, n_q=512)]
        self.assertEqual([a["shape_class"] for a in at.answer_rows(rows)],
                         ["prefill short", "prefill long", "causal", "GQA decode"])


class Peers(unittest.TestCase):
    def test_peer_by_name(self):
        rows = [row("avx512", 100), row("avx2", 150), row("torch", 80), row("openvino", 120)]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertEqual(a["variant"], "avx512")  # a peer is never the answer
        self.assertEqual(a["runner_up"], "avx2")
        self.assertEqual(a["peer"], "torch")
        self.assertAlmostEqual(a["peer_margin"], 0.8)  # slower than torch: < 1x

    def test_peer_by_kind_column(self):
        rows = [row("avx512", 100, kind="ours"), row("avx2", 150, kind="ours"),
                row("mylib", 400, kind="peer")]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertEqual((a["variant"], a["runner_up"], a["peer"]), ("avx512", "avx2", "mylib"))
        self.assertAlmostEqual(a["peer_margin"], 4.0)

    def test_peer_margin_from_the_paired_rounds(self):
        # The peer alternated with the winner: its ratio is from those
        # rounds (140/110, 300/150), not from the winner's own medians
        # (100, 200), timed apart.
        rows = [row("avx512", 100, n_q=2048), row("avx512", 200, n_q=4096),
                row("onnxruntime", 140, n_q=2048, paired_variant="avx512",
                    paired_time_ns_median=110.0, paired_threads=1),
                row("onnxruntime", 300, n_q=4096, paired_variant="avx512",
                    paired_time_ns_median=150.0, paired_threads=1)]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertAlmostEqual(a["peer_margin"], math.sqrt(140 / 110 * 300 / 150))
        self.assertEqual((a["peer_paired"], a["peer_shapes"]), (2, 2))
        self.assertIn("| 1.60× (onnxruntime) |", "\n".join(at.table_lines(rows)))

    def test_peer_paired_with_another_cell_falls_back_to_the_medians(self):
        # Paired with avx2 (not the winner), at 2 threads, or with bf16
        # tensors: that paired time is not the winner's, so the two medians
        # stand in, and the cell says so.
        base = [row("avx512", 100, n_q=2048), row("avx2", 120, n_q=2048)]
        others = [dict(paired_variant="avx2", paired_time_ns_median=130.0),
                  dict(paired_variant="avx512", paired_time_ns_median=130.0, paired_threads=2),
                  dict(paired_variant="avx512", paired_time_ns_median=130.0,
                       paired_case="impl=avx512,nq=2048,q=bf16,kv=bf16,o=bf16")]
        for extra in others:
            with self.subTest(pairing=extra):
                rows = base + [row("torch", 260, n_q=2048, **extra)]
                a = only(at.answer_rows(rows), shape_class="prefill long")
                self.assertAlmostEqual(a["peer_margin"], 2.6)  # 260 / 100
                self.assertEqual(a["peer_paired"], 0)
                self.assertIn("| 2.60× (torch, unpaired) |", "\n".join(at.table_lines(rows)))

    def test_partly_paired_peer_margin_says_how_many(self):
        rows = [row("avx512", 100, n_q=2048), row("avx512", 200, n_q=4096),
                row("torch", 150, n_q=2048, paired_variant="avx512", paired_time_ns_median=125.0),
                row("torch", 300, n_q=4096)]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertAlmostEqual(a["peer_margin"], math.sqrt(150 / 125 * 300 / 200))
        self.assertIn("(torch, 1 of 2 shapes paired)", "\n".join(at.table_lines(rows)))

    def test_caption_says_which_ratio(self):
        self.assertIn("`paired_time_ns_median`", at.caption())
        self.assertIn("`unpaired`", at.caption())

    def test_failed_peer_is_ignored(self):
        rows = [row("avx512", 100), row("onnxruntime", 50, status="failed: rule A")]
        a = only(at.answer_rows(rows), shape_class="prefill long")
        self.assertIsNone(a["peer"])


class Markdown(unittest.TestCase):
    def test_table(self):
        rows = [row("avx512", 100, pct_peak=71.234), row("avx2", 180), row("torch", 250)]
        lines = at.section_answer(rows)
        self.assertEqual(lines[0], "## Use this variant")
        table = [line for line in lines if line.startswith("|")]
        self.assertEqual(table[0], "| " + " | ".join(at.HEADER) + " |")
        cells = [c.strip() for c in table[2].strip("|").split("|")]
        self.assertEqual(cells, ["prefill long", "64", "1", "**avx512**", "71.2", "1.80× (avx2)",
                                 "2.50× (torch, unpaired)", "1/1"])

    def test_cli_on_fixture(self):
        proc = h.run_script("answer_table.py", h.MATRIX)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith("## Use this variant\n"), proc.stdout[:200])
        self.assertIn("| prefill short | 64 | 1 |", proc.stdout)

    def test_cli_bad_file(self):
        proc = h.run_script("answer_table.py", "/nonexistent.csv")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("error: /nonexistent.csv: no such file", proc.stderr)


if __name__ == "__main__":
    unittest.main()
