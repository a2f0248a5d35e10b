"""scripts/plot.py on the fixture matrix: every PNG is written and real, and
plots.json says the expected series were drawn with the CSV's values."""

import os
import tempfile
import unittest

import matplotlib.image

import helpers as h

EXPECTED_PNGS = {
    "gflops_vs_n_t1.png", "gflops_vs_n_t2.png", "pct_peak_t1.png", "pct_peak_t2.png",
    "speedup_vs_naive_t1.png", "speedup_vs_naive_t2.png", "speedup_vs_blas_t1.png",
    "speedup_vs_blas_t2.png", "thread_scaling.png", "decode_bandwidth.png",
    "accuracy_bound.png", "error_growth.png",
}


class PlotMatrix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = cls.tmp.name
        cls.proc = h.run_script("plot.py", h.MATRIX, "-o", cls.out)
        ok = cls.proc.returncode == 0
        cls.record = h.load_json(os.path.join(cls.out, "plots.json")) if ok else None
        cls.rows = h.read_rows(h.MATRIX)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def plot(self, name):
        return self.record["plots"][name]

    def test_every_expected_plot_is_drawn(self):
        self.assertEqual(set(self.record["plots"]), EXPECTED_PNGS)
        # The fixture has no peer rows and no f16/bf16 rows: only those plots are
        # left out, saying why.
        self.assertEqual(set(self.record["skipped"]),
                         {"vs_peers_t1.png", "vs_peers_t2.png", "low_precision.png"})
        self.assertIn("--peers", self.record["skipped"]["vs_peers_t1.png"])
        self.assertIn("no low-precision", self.record["skipped"]["low_precision.png"])

    def test_pngs_are_real_pictures(self):
        for name in EXPECTED_PNGS:
            path = os.path.join(self.out, name)
            self.assertGreater(os.path.getsize(path), 20_000, name)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
            pixels = matplotlib.image.imread(path)
            self.assertGreater(min(pixels.shape[:2]), 300, name)
            self.assertGreater(pixels.std(), 0.05, f"{name} is nearly blank")

    def test_titles_name_machine_and_date(self):
        for name in EXPECTED_PNGS:
            self.assertIn("Intel(R) Xeon(R) Processor, 2 cores, 2026-11-30",
                          self.plot(name)["subtitle"])

    def test_gflops_plot_has_every_variant_and_the_peak(self):
        plot = self.plot("gflops_vs_n_t1.png")
        self.assertEqual([p["title"] for p in plot["panels"]],
                         ["d_k=64, heads=8", "d_k=128, heads=8", "d_k=128, heads=32/8 kv, causal"])
        for panel in plot["panels"]:
            names = h.series_by_name(panel)
            self.assertEqual(set(names), set(h.VARIANTS) | {"measured FMA peak"})
            self.assertEqual(names["measured FMA peak"]["y"], [152.3, 152.3])
            self.assertTrue(panel["xlog"])
            self.assertIn("GFLOP/s", panel["ylabel"])
        d128 = h.series_by_name(plot["panels"][1])
        self.assertEqual(d128["avx512"]["x"], [128, 256, 512, 1024, 2048])
        row = h.find_row(self.rows, variant="avx512", n_kv=2048, d_k=128, heads_q=8, threads=1)
        self.assertEqual(d128["avx512"]["y"][-1], float(row["gflops"]))

    def test_gflops_plot_at_two_threads_uses_the_two_thread_peak(self):
        panel = self.plot("gflops_vs_n_t2.png")["panels"][0]
        self.assertEqual(h.series_by_name(panel)["measured FMA peak"]["y"], [301.7, 301.7])

    def test_variant_colours_are_fixed_across_plots(self):
        colours = {}
        for plot in self.record["plots"].values():
            for panel in plot["panels"]:
                for s in panel["series"]:
                    if s["variant"] is not None:
                        colours.setdefault(s["variant"], set()).add(s["colour"])
        self.assertEqual(set(colours), set(h.VARIANTS))
        for variant, seen in colours.items():
            self.assertEqual(len(seen), 1, variant)
        self.assertEqual(len({next(iter(c)) for c in colours.values()}), len(h.VARIANTS))

    def test_pct_peak_heatmaps_cover_prefill_and_decode(self):
        panels = self.plot("pct_peak_t1.png")["panels"]
        self.assertEqual([p["title"] for p in panels], [
            "d_k=64, heads=8 (prefill)", "d_k=128, heads=8 (prefill)",
            "d_k=128, heads=32/8 kv, causal (prefill)",
            "d_k=128, heads=32/8 kv, n_q=1, causal (decode)"])
        for panel in panels:
            self.assertEqual(panel["kind"], "heatmap")
            self.assertEqual([s["name"] for s in panel["series"]], list(h.VARIANTS))
        decode = h.series_by_name(panels[-1])["avx512"]
        self.assertEqual(decode["x"], [1024, 4096])
        row = h.find_row(self.rows, variant="avx512", n_q=1, n_kv=4096, threads=1)
        self.assertEqual(decode["y"][-1], float(row["pct_peak"]))

    def test_family_title_names_the_roof(self):
        """A decode family whose flops bind (MQA) is judged against the FMA
        roof, not called prefill."""
        import plot  # noqa: E402 (helpers puts scripts/ on the path)
        row = {"n_q": 1, "limit": "fma"}
        family = (128, 128, 32, 1, 1, 0, 1)
        self.assertEqual(plot.family_title(family, [row]),
                         "d_k=128, heads=32/1 kv, n_q=1 (decode, FMA roof)")
        self.assertEqual(plot.family_title(family, [row, dict(row, limit="bandwidth")]),
                         "d_k=128, heads=32/1 kv, n_q=1 (decode, FMA or read roof by row)")
        self.assertEqual(plot.family_title(family, [dict(row, limit="bandwidth")]),
                         "d_k=128, heads=32/1 kv, n_q=1 (decode)")
        self.assertEqual(plot.family_title((128, 128, 8, 8, 1, 0, None),
                                           [{"n_q": 4096, "limit": "fma"}]),
                         "d_k=128, heads=8 (prefill)")

    def test_speedup_over_naive_and_blas(self):
        over_naive = self.plot("speedup_vs_naive_t1.png")["panels"]
        over_blas = self.plot("speedup_vs_blas_t1.png")["panels"]
        self.assertEqual(len(over_naive), 4)
        self.assertEqual(len(over_blas), 4)
        self.assertNotIn("naive", h.series_by_name(over_naive[0]))
        self.assertNotIn("blas", h.series_by_name(over_blas[0]))
        self.assertIn("same speed", h.series_by_name(over_blas[0]))
        # blas is one of attnbench's variants; "peer" names the frameworks.
        title = self.plot("speedup_vs_blas_t1.png")["title"]
        self.assertTrue(title.startswith("Speed-up over the blas variant "), title)
        self.assertNotIn("peer", title)
        xsmm = h.series_by_name(over_naive[1])["xsmm"]  # d_k=128, heads=8
        naive = h.find_row(self.rows, variant="naive", n_kv=2048, d_k=128, heads_q=8, threads=1)
        fast = h.find_row(self.rows, variant="xsmm", n_kv=2048, d_k=128, heads_q=8, threads=1)
        expected = float(naive["time_ns_median"]) / float(fast["time_ns_median"])
        self.assertEqual(xsmm["x"][-1], 2048)
        self.assertAlmostEqual(xsmm["y"][-1], expected, places=12)

    def test_thread_scaling_against_the_peak(self):
        plot = self.plot("thread_scaling.png")
        for panel in plot["panels"]:
            names = h.series_by_name(panel)
            self.assertEqual(names["measured FMA peak"]["x"], [1, 2])
            self.assertEqual(names["measured FMA peak"]["y"], [152.3, 301.7])
            self.assertEqual(names["avx512"]["x"], [1, 2])

    def test_decode_bandwidth_has_the_measured_line(self):
        panels = self.plot("decode_bandwidth.png")["panels"]
        self.assertEqual(len(panels), 2)  # one family at 1 and at 2 threads
        names = h.series_by_name(panels[0])
        self.assertEqual(names["measured read bandwidth"]["y"], [20.1, 20.1])
        self.assertEqual(names["avx512"]["x"], [1024, 4096])
        self.assertIn("GB/s", panels[0]["ylabel"])

    def test_accuracy_beside_the_bound(self):
        panels = self.plot("accuracy_bound.png")["panels"]
        self.assertEqual([p["title"] for p in panels], [f"{v}: 15 cases" for v in h.VARIANTS])
        for variant, panel in zip(h.VARIANTS, panels):
            names = h.series_by_name(panel)
            errors = names[f"{variant} E_M"]
            self.assertEqual(len(errors["y"]), 15)
            self.assertEqual(len(errors["cases"]), 15)
            self.assertTrue(all(e < bound for bound, e in zip(errors["x"], errors["y"])))
            self.assertIn("E_M = rule-A bound", names)
            self.assertTrue(panel["ylog"])
        row = h.find_row(self.rows, variant="blas", n_q=1, n_kv=4096, threads=1)
        blas = h.series_by_name(panels[-1])["blas E_M"]
        self.assertEqual((blas["x"][-1], blas["y"][-1]),
                         (float(row["bound_u"]), float(row["max_err_u"])))

    def test_error_growth_has_variants_bounds_and_sqrt_guide(self):
        panel = self.plot("error_growth.png")["panels"][0]
        names = h.series_by_name(panel)
        for variant in h.VARIANTS:
            self.assertIn(variant, names)
            self.assertIn(f"{variant} rule-A bound", names)
        self.assertIn("∝ √n", names)
        self.assertEqual(names["naive"]["x"], [128, 256, 512, 1024, 2048])


def with_peer_rows(rows):
    """The fixture's rows plus a torch row per prefill cell, paired with the
    fastest variant of that cell: 1.5x slower at n <= 256, 0.8x above."""
    out = list(rows)
    cells = {}
    for r in rows:
        if r["status"] == "ok" and r["time_ns_median"]:
            key = tuple(r[k] for k in ("n_q", "n_kv", "d_k", "heads_q", "causal", "threads"))
            if key not in cells or float(r["time_ns_median"]) < float(cells[key]["time_ns_median"]):
                cells[key] = r
    for best in cells.values():
        peer = dict(best)
        t = float(best["time_ns_median"])
        ratio = 1.5 if int(best["n_kv"]) <= 256 else 0.8
        peer.update(variant="torch", kind="peer", case=best["case"].replace(
            f"impl={best['variant']}", "impl=torch"), time_ns_median=f"{t * ratio:.1f}",
            time_ns_min=f"{t * ratio * 0.99:.1f}", time_ns_max=f"{t * ratio * 1.02:.1f}",
            paired_variant=best["variant"], paired_time_ns_median=f"{t:.1f}",
            peer_op="torch.nn.functional.scaled_dot_product_attention()", overhead_ns="90")
        out.append(peer)
    return out


class PlotPeers(unittest.TestCase):
    def test_vs_peers_plot_has_each_peer_against_the_paired_variant(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = with_peer_rows(h.read_rows(h.MATRIX))
            src = h.write_rows(os.path.join(tmp, "p.csv"), rows, h.header_of(h.MATRIX))
            proc = h.run_script("plot.py", src, "-o", os.path.join(tmp, "out"))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            record = h.load_json(os.path.join(tmp, "out", "plots.json"))
            panels = record["plots"]["vs_peers_t1.png"]["panels"]
            torch = [s for p in panels for s in p["series"] if s["name"] == "torch"]
            self.assertTrue(torch)
            ys = sorted({round(y, 3) for s in torch for y in s["y"]})
            self.assertEqual(ys, [0.8, 1.5])


class PlotDecodeSides(unittest.TestCase):
    def test_a_decode_row_on_the_fma_side_keeps_its_point(self):
        """A cell near the ridge can split: one variant's own roofs put it
        on the FMA side. Its GB/s point stays in its family's panel."""
        with tempfile.TemporaryDirectory() as tmp:
            rows = h.read_rows(h.MATRIX)
            decode = [r for r in rows if r["n_q"] == "1" and r["status"] == "ok"]
            moved = decode[0]
            moved["limit"] = "fma"
            src = h.write_rows(os.path.join(tmp, "m.csv"), rows, h.header_of(h.MATRIX))
            proc = h.run_script("plot.py", src, "-o", os.path.join(tmp, "out"))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            record = h.load_json(os.path.join(tmp, "out", "plots.json"))
            import attnbench_csv as ab  # noqa: E402 (helpers puts scripts/ on the path)
            row = next(r for r in ab.read_csv(src) if r["case"] == moved["case"]
                       and r["threads"] == int(moved["threads"]))
            title = f"{ab.family_label(ab.family_of(row))}, {ab.plural_threads(row['threads'])}"
            panel = next(p for p in record["plots"]["decode_bandwidth.png"]["panels"]
                         if p["title"] == title)
            self.assertIn(row["n_kv"], h.series_by_name(panel)[row["variant"]]["x"])


class PlotPartialData(unittest.TestCase):
    def test_absent_rows_skip_plots_with_a_note(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = [r for r in h.read_rows(h.MATRIX) if r["limit"] == "fma" and r["threads"] == "1"]
            src = h.write_rows(os.path.join(tmp, "one.csv"), rows, h.header_of(h.MATRIX))
            proc = h.run_script("plot.py", src, "-o", os.path.join(tmp, "out"))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            record = h.load_json(os.path.join(tmp, "out", "plots.json"))
            self.assertEqual(set(record["skipped"]),
                             {"thread_scaling.png", "decode_bandwidth.png", "vs_peers_t1.png",
                              "low_precision.png"})
            self.assertIn("note: skipped decode_bandwidth.png", proc.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "out", "decode_bandwidth.png")))
            self.assertIn("gflops_vs_n_t1.png", record["plots"])

    def test_skipped_rows_are_left_out_not_fatal(self):
        with tempfile.TemporaryDirectory() as tmp:
            proc = h.run_script("plot.py", h.PAIR_B, "-o", tmp)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            record = h.load_json(os.path.join(tmp, "plots.json"))
            drawn = {s["name"] for p in record["plots"]["gflops_vs_n_t1.png"]["panels"]
                     for s in p["series"]}
            self.assertNotIn("avx512", drawn)  # its only row is 'skipped: needs avx512f'
            self.assertIn("naive", drawn)


if __name__ == "__main__":
    unittest.main()
