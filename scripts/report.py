#!/usr/bin/env python3
"""Writes the README.md of a results folder (results/<cpu-slug>/README.md):
the machine, its measured peaks, the best variant per shape, the accuracy
table and the plots (relative links, so the folder reads well on a git
hosting page).

    scripts/report.py results/<slug>/matrix.csv -o results/<slug>/README.md

The plots are the ones listed in plots.json of --plots DIR (default: the
README's folder), as written by plot.py.
"""

import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import answer_table  # noqa: E402
import attnbench_csv as ab  # noqa: E402

EXTRA_FILES = (
    ("list.txt", "output of `attnbench list`: the variants and which of them this CPU runs"),
    ("peak.txt", "output of `attnbench peak`"),
    ("peak.json", "the same peak figures as JSON (`attnbench peak --out`)"),
    ("verify.txt", "output of `attnbench verify`"),
)


def plural(count, word):
    return f"{count} {word}{'s' * (count != 1)}"


def link(target, start_dir):
    return os.path.relpath(target, start_dir).replace(os.sep, "/")


# Sections ------------------------------------------------------------------

def section_header(meta, csv_paths, out_dir):
    title = meta.get("cpu_model") or "unknown machine"
    lines = [f"# attnbench on {title}", ""]
    when = f"Measured {meta['date']}" if meta.get("date") else "Measured on an unknown date"
    preset = (" on shapes given with `--shape`" if meta.get("preset") == "shapes"
              else f" with the `{meta['preset']}` preset" if meta.get("preset") else "")
    sources = ", ".join(f"[{os.path.basename(p)}]({link(p, out_dir)})" for p in csv_paths)
    lines.append(f"{when}{preset}; data: {sources}. {reproduce_text(meta.get('preset'))} "
                 "Compare two machines with `scripts/compare.py A.csv B.csv`.")
    return lines


def reproduce_text(preset):
    """How to run the same matrix: scripts/run_matrix.sh runs the quick and
    full presets only, so any other preset, or a run of --shape shapes, is
    the attnbench command itself."""
    if preset in (None, "", "quick", "full"):
        flag = " --full" if preset == "full" else ""
        return (f"Reproduce on your machine with `scripts/run_matrix.sh{flag}`"
                + ("" if preset else " (`--full` for the full preset)") + ".")
    if preset == "shapes":
        return ("Reproduce on your machine with `build/attnbench matrix --shape SHAPE ... "
                "--out FILE.csv`, one `--shape` per shape: the shapes are in the rows' `case` "
                "names (without `impl=` and the element types, which `--variant` and "
                "`--dtype` set).")
    return (f"Reproduce on your machine with `build/attnbench matrix --preset {preset} "
            "--out FILE.csv` (`scripts/run_matrix.sh` runs only the quick and full presets).")


def fmt_bytes(n):
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if n >= scale:
            return f"{ab.fmt_num(n / scale)} {unit}"
    return f"{n} B"


def roof_exceeded_rows(rows):
    return [r for r in rows if ab.above_roof(r)]


def section_roof_banner(rows):
    """A row above 100 % of its roof means the roof is wrong: say so first."""
    over = roof_exceeded_rows(rows)
    if not over:
        return []
    worst = max(over, key=lambda r: r["pct_peak"])
    limits = sorted({"FMA peak" if r["limit"] == "fma" else "read bandwidth" for r in over})
    return [f"> **Roof exceeded: the peak under-measures this CPU.** {plural(len(over), 'row')} "
            f"ran above 100 % of their roof ({' and '.join(limits)}); the worst, "
            f"`{worst['variant']}` at {ab.shape_label(worst, with_types=True)} on "
            f"{ab.plural_threads(worst['threads'])}, at {ab.fmt_num(worst['pct_peak'])} %. "
            "A roof is an upper bound: these ratios are not fractions of anything until the "
            "roof is measured again (`attnbench peak`, then the matrix)."]


def section_notes(out_dir):
    """notes.md of the results folder, when there is one: what changed and why."""
    path = os.path.join(out_dir, "notes.md")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [f.read().rstrip()]


def pages_text(meta):
    """The pages under every big buffer of the run (the peak's "pages") and
    the kernel's THP policy, or None for a sidecar from before runs chose."""
    pages = (meta.get("peak") or {}).get("pages")
    if not pages:
        return None
    text = {"huge": "transparent huge pages asked for (madvise)",
            "base": "4 KiB pages (MADV_NOHUGEPAGE)"}.get(pages, str(pages))
    policy = meta.get("thp_policy")
    return f"{text}, under the inputs, workspaces and the read roof's arrays" + (
        f"; the kernel's THP policy: {policy}" if policy else "")


def section_machine(meta, csv_paths=()):
    if not meta:
        # The sidecar's name follows the CSV's (FILE.csv -> FILE.meta.json):
        # name the file that was looked for, not a fixed one.
        names = " or ".join(f"`{os.path.basename(ab.meta_path(p))}`" for p in csv_paths)
        return ["## Machine", "", f"No metadata file ({names or 'FILE.meta.json'}) was found."]
    cache = meta.get("cache") or {}
    caches = ", ".join(f"{name} {fmt_bytes(cache[key])}" for key, name in
                       (("l1d_bytes", "L1d"), ("l2_bytes", "L2"), ("l3_bytes", "L3"))
                       if isinstance(cache.get(key), int))
    libraries = ", ".join(f"{k} {v}" for k, v in (meta.get("libraries") or {}).items())
    fields = [
        ("CPU", meta.get("cpu_model")), ("slug", meta.get("cpu_slug")),
        ("identity", " ".join(str(x) for x in (
            meta.get("cpu_vendor"), meta.get("cpu_family") is not None and
            f"family {meta.get('cpu_family')} model {meta.get('cpu_model_id')} "
            f"stepping {meta.get('cpu_stepping')}", meta.get("cpu_uarch") and
            f"({meta.get('cpu_uarch')})") if x) or None),
        ("cores", meta.get("cores")), ("threads (max)", meta.get("threads_max")),
        ("features detected", meta.get("features_detected")),
        ("features used", meta.get("features_used")),
        ("CPU feature mask", meta.get("cpu_mask") or "none"), ("caches", caches),
        ("pages", pages_text(meta)),
        ("compiler", meta.get("compiler")),
        ("C flags", f"`{meta['c_flags']}`" if meta.get("c_flags") else None),
        ("build type", meta.get("build_type")), ("libraries", libraries),
        ("date", meta.get("date")), ("preset", meta.get("preset")),
    ]
    rows = [(name, value) for name, value in fields if value not in (None, "")]
    return ["## Machine", "", ab.format_table(("", ""), rows, markdown=True)]


def per_thread_table(label, by_isa):
    """{row label: {"1": value, ...}} -> a table with a column per thread count."""
    threads = sorted({int(t) for values in by_isa.values() for t in values})
    header = [label] + [plural(t, "thread") for t in threads]
    rows = [[name] + [ab.fmt_num(values.get(str(t))) for t in threads]
            for name, values in by_isa.items()]
    return ab.format_table(header, rows, markdown=True)


def peaks_from_rows(rows):
    fma, read = {}, {}
    for r in rows:
        if ab.is_finite(r["peak_gflops"]):
            fma[str(r["threads"])] = r["peak_gflops"]
        if ab.is_finite(r["peak_gbytes_per_s"]):
            read[str(r["threads"])] = r["peak_gbytes_per_s"]
    return {"fma_gflops": {"best ISA": fma}, "read_gbytes_per_s": read}


def sgemm_reference(peak):
    """The BLAS's own sgemm beside the FMA roof (sidecars since it was
    measured): not a roof, the fraction of it a tuned GEMM reaches here."""
    sgemm = peak.get("sgemm_gflops") or {}
    roofs = {t: best_fma(peak, t) for t in sgemm}
    if not any(roofs.values()):
        return []
    pct = {t: 100.0 * x / roofs[t] for t, x in sgemm.items() if ab.is_finite(x) and roofs[t]}
    library = peak.get("sgemm_library") or "the BLAS"
    return ["", f"The BLAS's own sgemm ({library}, each thread its own 2048³ product), a "
            "reference beside the FMA roof, not a roof: the fraction of the roof a tuned GEMM "
            "library reaches on this machine.", "",
            per_thread_table("sgemm", {"GFLOP/s": sgemm, "% of the FMA roof": pct})]


def section_peaks(meta, rows):
    peak = meta.get("peak")
    from_rows = not peak
    if from_rows:
        peak = peaks_from_rows(rows)
    lines = ["## Measured peaks", "",
             "What the plots and `pct_peak` measure against: FMA throughput of each ISA "
             "(the best one the CPU runs is the compute roof; each the best of several "
             "chain counts, `best chains`) and read bandwidth (the decode roof: the best of "
             "several read kernels)."]
    if from_rows:
        # Without a sidecar nothing of the run's start is known: say whose
        # figures these are rather than pass them off as the start's.
        lines += ["", "No sidecar with the run's peaks: the figures below are the roofs "
                  "written in the CSV's rows (per thread count, the last row's `peak_gflops` "
                  "and `peak_gbytes_per_s`), not a measurement of the run's start."]
    if peak.get("fma_gflops"):
        lines += ["", per_thread_table("FMA peak, GFLOP/s", peak["fma_gflops"])]
    if peak.get("fma_chains"):
        lines += ["", per_thread_table("best chains", peak["fma_chains"])]
    lines += sgemm_reference(peak)
    # The bf16 tensor paths' roofs (sidecars since they were measured): the
    # low-precision table judges a bf16 tensor variant against these.
    if peak.get("bf16_gflops"):
        lines += ["", "The bf16 tensor paths' peaks, in bf16 FLOP/s: the roof of a bf16 tensor "
                  "variant's rows.", "",
                  per_thread_table("bf16 peak, GFLOP/s", peak["bf16_gflops"])]
    if peak.get("read_kernel"):
        kernels = ", ".join(f"{plural(int(t), 'thread')}: `{k}`"
                            for t, k in sorted(peak["read_kernel"].items(), key=lambda x: int(x[0])))
        lines += ["", f"Best read kernel: {kernels}."]
    bandwidth = {name: peak[key] for key, name in
                 (("read_gbytes_per_s", "read"), ("triad_gbytes_per_s", "triad"))
                 if peak.get(key)}
    if bandwidth:
        lines += ["", per_thread_table("memory bandwidth, GB/s", bandwidth)]
    if peak.get("exp_gelem_per_s"):
        lines += ["", per_thread_table("exp, Gelem/s", peak["exp_gelem_per_s"])]
    return lines + paired_roof_ranges(rows, peak, from_rows)


def paired_roof_ranges(rows, peak=None, from_rows=False):
    """The spread of the roofs measured beside the rows (roof_source = paired):
    what a roof measured once would have hidden. A compute roof nearer the
    run's bf16 peak than its FMA peak (a bf16 tensor variant's) is a kind of
    its own. from_rows: the peaks shown were read from the rows (no
    sidecar), so they are not the run's start's."""
    spans = {}
    for r in rows:
        if r.get("roof_source") != "paired" or r["status"] != "ok":
            continue
        bw = r["limit"] == "bandwidth"
        value = r["peak_gbytes_per_s" if bw else "peak_gflops"]
        if ab.is_finite(value):
            kind = "read" if bw else compute_roof_kind(value, r["threads"], peak or {})
            spans.setdefault((kind, r["threads"]), []).append(value)
    if not spans:
        return []
    parts = [f"{kind} roof at {plural(t, 'thread')} "
             f"{ab.fmt_num(min(v))}–{ab.fmt_num(max(v))} {'GB/s' if kind == 'read' else 'GFLOP/s'} "
             f"({plural(len(v), 'row')})" for (kind, t), v in sorted(spans.items())]
    lead = ("Each row's `% of peak` divides by its roof measured beside it" if from_rows else
            "These are the figures of the run's start. Each row's `% of peak` divides by "
            "its roof measured beside it instead")
    return ["", lead + " (`roof_source` = `paired`: one pass of the "
            "roof's kernel per round of the row's calls, the fastest pass kept, as a neighbour "
            "can slow a pass but nothing speeds one up; since December 2026 a decode row times "
            "both roofs so and takes its side from the two; each row's own roof counted), "
            "which over this run spanned: "
            + "; ".join(parts) + "."]


def best_fma(peak, threads):
    """The FMA roof at a thread count: the highest ISA's figure (None when
    none was measured there)."""
    t = str(threads)
    return max((v[t] for v in (peak.get("fma_gflops") or {}).values()
                if ab.is_finite(v.get(t))), default=None)


def compute_roof_kind(value, threads, peak):
    """"FMA", or "bf16" when the run's start measured a bf16 peak at this
    thread count nearer to `value` (on a log scale) than the best FMA peak."""
    t = str(threads)
    fma = best_fma(peak, t)
    bf16 = [v[t] for v in (peak.get("bf16_gflops") or {}).values() if ab.is_finite(v.get(t))]
    if fma and bf16 and value > 0:
        near = min(bf16, key=lambda b: abs(math.log(value / b)))
        if abs(math.log(value / near)) < abs(math.log(value / fma)):
            return "bf16"
    return "FMA"


def speedup_over(baseline_row, row):
    if baseline_row is None:
        return "–"
    return f"{ab.fmt_num(baseline_row['time_ns_median'] / row['time_ns_median'])}×"


def cell_sort_key(row):
    return (ab.shape_sort_key(row), row["threads"])


def best_peer(peer_rows):
    """The fastest peer row of a cell that has a pairing, or None."""
    paired = [r for r in peer_rows if r.get("paired_time_ns_median") and ab.has_timing(r)
              and ab.is_ok(r)]
    return min(paired, key=lambda r: r["time_ns_median"]) if paired else None


def vs_best_text(peer_rows, best):
    """The Best table's `vs best peer`: the fastest passing peer of the
    cell against the cell's best variant, from the rounds in which the two
    alternated when the peer's paired_variant is that variant; else (the
    peer was paired with another variant, or with none) the ratio of the two
    medians timed apart, marked `unpaired`, as in the answer table."""
    timed = [r for r in peer_rows if ab.has_timing(r) and ab.is_ok(r)]
    if not timed:
        return "–"
    peer = min(timed, key=lambda r: r["time_ns_median"])
    ratio, paired = ab.peer_over(peer, best)
    return f"{ab.fmt_num(ratio)}× ({peer['variant']}{'' if paired else ', unpaired'})"


def vs_peer_text(peer):
    if peer is None:
        return "–"
    return f"{ab.fmt_num(peer['time_ns_median'] / peer['paired_time_ns_median'])}× ({peer['variant']})"


def section_peers(rows):
    """Per cell: the fastest variant against the fastest framework, from
    the rounds in which the two alternated."""
    peers = [r for r in rows if ab.is_peer(r)]
    if not peers:
        return []
    cells = {}
    for r in peers:
        cells.setdefault((ab.shape_of(r), r["threads"]), []).append(r)
    table, wins = [], []
    for key in sorted(cells, key=lambda k: cell_sort_key(cells[k][0])):
        prow = cells[key]
        best = best_peer(prow)
        sample = prow[0]
        by_peer = {r["variant"]: r for r in prow}
        cols = []
        for name in ("torch", "onnxruntime", "openvino"):
            r = by_peer.get(name)
            if r is None:
                cols.append("–")
            elif not ab.is_ok(r):
                cols.append(f"{r['status']}: {r['reason'][:60]}")
            else:
                ratio = r["time_ns_median"] / r["paired_time_ns_median"] \
                    if r.get("paired_time_ns_median") else None
                cols.append(f"{ab.fmt_time_ns(r['time_ns_median'])}, "
                            f"E_M {ab.fmt_num(r['max_err_u'])}u" +
                            (f", {ab.fmt_num(ratio)}×" if ratio else ""))
                if ratio is not None and ratio < 1:
                    wins.append(f"{name} at {ab.shape_label(r)} on {ab.plural_threads(r['threads'])}"
                                f" ({ab.fmt_num(1 / ratio)}× faster than {r['paired_variant']})")
        table.append([ab.shape_label(sample), sample["threads"],
                      best["paired_variant"] if best else "–",
                      ab.fmt_time_ns(best["paired_time_ns_median"]) if best else "–",
                      vs_peer_text(best)] + cols)
    header = ["shape", "threads", "attnbench's fastest", "its time (paired)",
              "vs best peer", "torch", "onnxruntime", "openvino"]
    lines = ["## attnbench vs the frameworks", "",
             "Each framework in a process of its own, its thread count set through its own "
             "API, timed in rounds alternating with attnbench's fastest variant of the cell "
             "(so a drift of the machine hits both); `vs best peer` is the fastest peer's "
             "median time over that variant's median in the same rounds (above 1: attnbench "
             "is faster). Each peer cell: its median time, its accuracy E_M against the same "
             "double reference (rule A applied: a peer beyond it is listed as failed), and "
             "its own ratio. What each peer called is in the CSV's `peer_op` column.",
             "", ab.format_table(header, table, markdown=True)]
    lines += ["", "Where a peer wins: " + ("; ".join(wins) + "." if wins else "nowhere.")]
    return lines


def section_best(rows):
    measured = [r for r in rows if ab.is_ok(r) and ab.has_timing(r) and not ab.is_peer(r)]
    peers_of = {}
    for r in rows:
        if ab.is_peer(r):
            peers_of.setdefault((ab.shape_of(r), r["threads"]), []).append(r)
    if not measured:
        return ["## Best variant per shape", "", "No measured rows."]
    cells = {}
    for r in measured:
        cells.setdefault((ab.shape_of(r), r["threads"]), {})[r["variant"]] = r
    table = []
    for by_variant in sorted(cells.values(), key=lambda c: cell_sort_key(next(iter(c.values())))):
        best = min(by_variant.values(), key=lambda r: r["time_ns_median"])
        table.append([ab.shape_label(best), best["threads"], best["limit"],
                      f"**{best['variant']}**",
                      ab.fmt_time_ns(best["time_ns_median"]), ab.fmt_num(best["gflops"]),
                      ab.fmt_num(best["gbytes_per_s"]), ab.fmt_pct(best),
                      speedup_over(by_variant.get("naive"), best),
                      speedup_over(by_variant.get("blas"), best),
                      vs_best_text(peers_of.get((ab.shape_of(best), best["threads"]), []),
                                   best)])
    header = ["shape", "threads", "limit", "best variant", "time (median)", "GFLOP/s", "GB/s",
              "% of peak", "vs naive", "vs blas", "vs best peer"]
    return ["## Best variant per shape", "",
            "Fastest variant by median time among the cells with status ok. `% of peak` is "
            "against the FMA peak for `limit=fma` (prefill, and decode whose flops bind) and "
            "the read bandwidth for `limit=bandwidth` (the rest of decode); `vs naive` / "
            "`vs blas` are the speed-ups over those "
            "variants on the same cell; `vs best peer` is the fastest peer's median time over "
            "the best variant's, from the rounds in which the two alternated when the peer "
            "was paired with that variant, else from the two medians timed apart (marked "
            "`unpaired`).",
            "", ab.format_table(header, table, markdown=True)]


def low_precision_rows(rows):
    """Variant rows (not peers) whose types are not all f32."""
    return [r for r in rows if not ab.is_f32(r) and not ab.is_peer(r)]


def section_low_precision(rows):
    """Each variant's row in f16/bf16 beside its f32 row of the same cell:
    the times, the speed-up, the % of roof and the errors side by side."""
    low = low_precision_rows(rows)
    if not low:
        return []
    f32 = {(r["variant"], ab.shape_of(r), r["threads"]): r for r in rows
           if ab.is_f32(r) and not ab.is_peer(r)}
    table = []
    for r in sorted(low, key=lambda r: (ab.shape_sort_key(r), r["threads"],
                                        ab.variant_sort_key(r["variant"]),
                                        ab.dtype_sort_key(ab.dtype_label(r)))):
        base = f32.get((r["variant"], ab.shape_of(r), r["threads"]))
        timed = ab.is_ok(r) and ab.has_timing(r)
        base_timed = base is not None and ab.is_ok(base) and ab.has_timing(base)
        speedup = (f"{ab.fmt_num(base['time_ns_median'] / r['time_ns_median'])}×"
                   if timed and base_timed else "–")
        table.append([
            ab.shape_label(r), r["threads"], r["variant"], ab.dtype_label(r),
            ab.fmt_time_ns(r["time_ns_median"]) if timed else "–",
            ab.fmt_time_ns(base["time_ns_median"]) if base_timed else "–", speedup,
            ab.fmt_num(r["pct_peak"]) if timed else "–",
            ab.fmt_num(base["pct_peak"]) if base_timed else "–",
            ab.fmt_num(r["max_err_u"]), ab.fmt_num(base["max_err_u"]) if base else "–",
            ab.status_text(r)])
    header = ["shape", "threads", "variant", "types", "time", "f32 time", "speed-up over f32",
              "% of roof", "f32 % of roof", "E_M (u)", "f32 E_M (u)", "status"]
    return ["## Low precision (f16/bf16)", "",
            "Each variant's cell with f16/bf16 tensors beside its own f32 row of the same "
            "shape and thread count. Types: `bf16`/`f16` are Q, K/V and O of that type; "
            "`bf16kv`/`f16kv` f32 Q and O with a narrow KV cache. The inputs are the f32 "
            "ones rounded to nearest even; E_M is against the double reference on those "
            "rounded inputs, in u = 2⁻²⁴ as for f32 (an f16/bf16 O alone costs up to "
            "2⁻¹¹ or 2⁻⁸ of it), judged by the rules of O's type. `% of roof` counts the "
            "bytes each type really moves (2 per f16/bf16 element), so a narrow KV cache "
            "decode is judged against the same read roof as f32. The best-variant, "
            "accuracy and answer tables above are f32 only.",
            "", ab.format_table(header, table, markdown=True)]


def accuracy_status(vrows):
    failed = [r for r in vrows if ab.is_failed(r)]
    skipped = [r for r in vrows if ab.is_skipped(r)]
    parts = []
    if failed:
        # Of the cells that ran: a skipped cell was never judged.
        ran = len(vrows) - len(skipped)
        parts.append(f"**FAILED** in {len(failed)} of {plural(ran, 'cell')} run")
    elif len(skipped) < len(vrows):
        parts.append("ok")
    if skipped:
        reasons = sorted({r["reason"] for r in skipped})
        parts.append(f"{len(skipped)} skipped ({'; '.join(reasons)})")
    return ", ".join(parts)


def accuracy_row(variant, vrows):
    errs = [r for r in vrows if not ab.is_skipped(r) and ab.is_finite(r["max_err_u"])]
    if not errs:
        return [variant, 0, "–", "–", "–", accuracy_status(vrows)]
    worst = max(errs, key=lambda r: r["max_err_u"])
    ratios = [r["max_err_u"] / r["bound_u"] for r in errs
              if ab.is_finite(r["bound_u"]) and r["bound_u"] > 0]
    cases = len({ab.shape_of(r) for r in errs})
    return [variant, cases, ab.fmt_num(worst["max_err_u"]), ab.fmt_num(worst["bound_u"]),
            ab.fmt_num(max(ratios)) if ratios else "–", accuracy_status(vrows)]


def section_accuracy(rows):
    rows = ab.f32_rows(rows)  # low-precision errors are another scale: their own section
    table = [accuracy_row(v, [r for r in rows if r["variant"] == v]) for v in ab.variants_in(rows)]
    header = ["variant", "cases", "max E_M (u)", "rule-A bound there (u)", "worst E_M / bound",
              "status"]
    return ["## Accuracy", "",
            "E_M = max over the checked elements of |ô_ic−o_ic| / M_ic, M_ic = max_j |V_jc| "
            "over the keys j that row i sees (column c's largest value there), in units of "
            "u = 2⁻²⁴ (float32 unit roundoff), against a double-precision reference; "
            "the bound is rule A of the accuracy standard (docs/accuracy.md) at the "
            "same case. `worst E_M / bound` is the largest ratio over all cases "
            "(must stay below 1).",
            "", ab.format_table(header, table, markdown=True)]


def section_not_ok(rows):
    bad = sorted((r for r in rows if not ab.is_ok(r)),
                 key=lambda r: (ab.variant_sort_key(r["variant"]), cell_sort_key(r)))
    if not bad:
        return []
    table = [[r["variant"], ab.shape_label(r, with_types=True), r["threads"], ab.status_text(r)]
             for r in bad]
    return ["## Cells not measured or failing", "",
            ab.format_table(["variant", "shape", "threads", "status"], table, markdown=True)]


def read_plots(plots_dir):
    path = os.path.join(plots_dir, "plots.json")
    if not os.path.exists(path):
        ab.note(f"no {path}: the README will have no plots (run scripts/plot.py first)")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError) as err:
        raise ab.DataError(f"{path}: cannot read: {err}") from None
    return record


def section_plots(plots_dir, out_dir):
    record = read_plots(plots_dir)
    if record is None:
        return ["## Plots", "", "No plots yet: run `scripts/plot.py` on the CSV."]
    lines = ["## Plots"]
    for filename, plot in (record.get("plots") or {}).items():
        target = link(os.path.join(plots_dir, filename), out_dir)
        title = plot.get("title", filename)
        lines += ["", f"### {title}", "", f"![{title}]({target})"]
    skipped = record.get("skipped") or {}
    if skipped:
        lines += ["", "Not drawn:"] + [f"- `{name}`: {reason}" for name, reason in skipped.items()]
    return lines


def section_files(out_dir):
    present = [(name, what) for name, what in EXTRA_FILES
               if os.path.exists(os.path.join(out_dir, name))]
    if not present:
        return []
    return ["## Other files", ""] + [f"- [{name}]({name}): {what}" for name, what in present]


def build_report(results, out_path, plots_dir):
    out_dir = os.path.dirname(os.path.abspath(out_path))
    sections = [
        section_header(results.meta, [os.path.abspath(p) for p in results.paths], out_dir),
        section_roof_banner(results.rows),
        answer_table.section_answer(results.rows),
        section_notes(out_dir),
        section_machine(results.meta, results.paths),
        section_peaks(results.meta, results.rows),
        section_best(ab.f32_rows(results.rows)),
        section_peers(ab.f32_rows(results.rows)),
        section_accuracy(results.rows),
        section_low_precision(results.rows),
        section_not_ok(results.rows),
        section_plots(os.path.abspath(plots_dir), out_dir),
        section_files(out_dir),
    ]
    return "\n\n".join("\n".join(s) for s in sections if s) + "\n"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Write the README.md of a results folder from attnbench matrix CSV(s).")
    parser.add_argument("csv", nargs="+", help="matrix CSV(s); FILE.meta.json beside each")
    parser.add_argument("-o", "--out", required=True, metavar="README.md", help="file to write")
    parser.add_argument("--plots", metavar="DIR",
                        help="folder with plot.py's PNGs and plots.json "
                             "(default: the README's folder)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    results = ab.load(args.csv)
    usual = [r for r in results.rows if ab.usual_scale(r)]
    if len(usual) < len(results.rows):
        ab.note(f"{len(results.rows) - len(usual)} rows at a scale of their own (scale=) "
                "left out of the tables: perf-targets' report judges them")
        results.rows = usual
    plots_dir = args.plots or os.path.dirname(os.path.abspath(args.out))
    text = build_report(results, args.out, plots_dir)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(ab.run_cli(main))
