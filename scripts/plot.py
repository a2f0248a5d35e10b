#!/usr/bin/env python3
"""Draws the pictures of an attnbench matrix run. (One job, read best whole,
over the ~400 lines a file here usually has: every plot of a results folder,
on one set of row helpers and one renderer.)

    scripts/plot.py results/<cpu-slug>/matrix.csv [MORE.csv ...] -o DIR

Writes into DIR, for one thread and for all threads (_t1, _tN):
  gflops_vs_n       GFLOP/s against n per variant, a panel per shape family
                    (d_k x heads x mask), with the measured FMA peak
  pct_peak          % of the roof that applies (FMA or read bandwidth), heatmaps
  speedup_vs_naive, speedup_vs_blas
  vs_peers          with peer rows (matrix --peers): each framework's time over
                    attnbench's fastest variant, from their alternating rounds
and once: thread_scaling (against the measured peak at each thread count),
decode_bandwidth (limit=bandwidth rows against the measured read bandwidth),
accuracy_bound (E_M of every case against its rule-A bound), error_growth
(E_M and bound against n, with a sqrt(n) guide) and low_precision (f32 against
the f16/bf16 types of each cell that has them: speed and E_M side by side).
Every plot but low_precision reads the all-f32 rows only, so a bf16 row never
stands for an f32 one.

DIR/plots.json lists for every PNG the series drawn (name, x, y, colour) so
tests and report.py can see what is in each picture. A plot whose rows are
absent (no decode rows, one thread count only) is skipped with a note on
stderr and listed under "skipped". Only rows with status ok count for speed;
failed rows still show in the accuracy plots.

Each figure is first built as plain data (Plot > Panel > Series) and then
rendered; plots.json is written from the same objects, so it says exactly
what was drawn.
"""

import argparse
import json
import math
import os
import statistics
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbench_csv as ab  # noqa: E402

matplotlib = plt = np = None  # loaded by load_matplotlib() before the first render


def load_matplotlib():
    """matplotlib is imported on the first render, not at start-up, so a bad
    input is reported without the second its import takes."""
    global matplotlib, plt, np
    if plt is None:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker  # noqa: F401  (plain_log_y)
        import numpy as np


# One colour per variant in every plot (and compare.py's), so a variant is
# recognised at a glance from one picture to the next.
VARIANT_COLOURS = {
    "naive": "#7f7f7f",
    "blocked": "#8c564b",
    "stream": "#9467bd",
    "avx2": "#1f77b4",
    "avx512": "#d62728",
    "xsmm": "#2ca02c",
    "blas": "#ff7f0e",
}
EXTRA_COLOURS = ("#17becf", "#bcbd22", "#e377c2", "#393b79", "#637939", "#843c39")
REFERENCE_COLOUR = "black"
GUIDE_COLOUR = "#999999"
ZERO_ERROR_FLOOR_U = 0.01  # where an error of exactly 0 is drawn on a log axis


def variant_colour(name):
    if name in VARIANT_COLOURS:
        return VARIANT_COLOURS[name]
    # Unknown variants: a stable colour from the name, the same in every plot.
    return EXTRA_COLOURS[sum(name.encode()) % len(EXTRA_COLOURS)]


# The plain-data model of a figure ------------------------------------------

@dataclass
class Series:
    name: str
    x: list
    y: list
    variant: str = None  # its colour comes from the variant map; None: a reference
    style: str = "line"  # line | ref | bound | guide | points | cell | bar
    legend: str = None   # legend label when it differs from name ("" for none)
    extra: dict = field(default_factory=dict)

    def colour(self):
        if self.variant is not None:
            return variant_colour(self.variant)
        return GUIDE_COLOUR if self.style == "guide" else REFERENCE_COLOUR


@dataclass
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: list
    kind: str = "lines"  # lines | heatmap | bars
    xlog: bool = False   # base 2: n and thread counts double
    ylog: bool = False
    xlog10: bool = False  # base 10, for quantities that do not double (error bounds)
    categories: list = None  # column labels of a heatmap, groups of a bar chart


@dataclass
class Plot:
    filename: str
    title: str
    panels: list
    panel_size: tuple = (5.4, 3.8)
    columns: int = 3


# Row selection -------------------------------------------------------------

def measured(rows, limit=None, threads=None):
    """Rows with timings and status ok, optionally of one roofline/thread count."""
    return [r for r in rows if ab.is_ok(r) and ab.has_timing(r)
            and (limit is None or r["limit"] == limit)
            and (threads is None or r["threads"] == threads)]


def group_by(rows, key):
    groups = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups


def families(rows):
    """(family, its rows) in panel order."""
    return sorted(group_by(rows, ab.family_of).items(), key=lambda kv: ab.family_sort_key(kv[0]))


def thread_views(rows):
    """The thread counts that get their own pictures: one and all."""
    counts = sorted({r["threads"] for r in measured(rows)})
    return sorted({counts[0], counts[-1]}) if counts else []


def variant_series(rows, x_key, y_key, style="line"):
    series = []
    for variant, vrows in sorted(group_by(rows, lambda r: r["variant"]).items(),
                                 key=lambda kv: ab.variant_sort_key(kv[0])):
        points = sorted((r[x_key], r[y_key]) for r in vrows if ab.is_finite(r[y_key]))
        if points:
            series.append(Series(variant, [p[0] for p in points], [p[1] for p in points],
                                 variant=variant, style=style))
    return series


def reference(name, xs, value, unit=None):
    """A horizontal line across the panel's x range; with a unit, the
    legend gives its value."""
    legend = f"{name}, {ab.fmt_num(value)} {unit}" if unit else None
    return Series(name, [min(xs), max(xs)], [value, value], style="ref", legend=legend)


# The plots -----------------------------------------------------------------

def plot_gflops_vs_n(rows, threads):
    prefill = measured(rows, "fma", threads)
    if not prefill:
        return f"no compute-bound (limit=fma) rows at {threads} threads"
    panels = []
    for family, frows in families(prefill):
        series = variant_series(frows, "n_kv", "gflops")
        peak = max((r["peak_gflops"] for r in frows if ab.is_finite(r["peak_gflops"])),
                   default=None)
        if peak is not None:
            series.append(reference("measured FMA peak", [r["n_kv"] for r in frows], peak,
                                    "GFLOP/s"))
        square = family[-1] is None  # n_q = n_kv
        panels.append(Panel(ab.family_label(family),
                            "sequence length n (n_q = n_kv)" if square else "keys n_kv",
                            "GFLOP/s", series, xlog=True, ylog=True))
    return Plot(f"gflops_vs_n_t{threads}.png",
                f"Prefill throughput vs n, {ab.plural_threads(threads)}", panels)


def family_title(family, frows):
    """The family, and which roof its rows are judged against: the read
    roof (memory-bound decode), the FMA roof (prefill, and decode whose
    flops bind: many query heads a K/V head), or each row its own."""
    limits = {r["limit"] for r in frows}
    roof = ("decode" if limits == {"bandwidth"}
            else "prefill" if all(r["n_q"] > ab.BANDWIDTH_MAX_N_Q for r in frows)
            else "decode, FMA roof" if limits == {"fma"} else "decode, FMA or read roof by row")
    return f"{ab.family_label(family)} ({roof})"


def pct_panel(family, frows):
    ns = sorted({r["n_kv"] for r in frows})
    series = []
    for variant in ab.variants_in(frows):
        by_n = {r["n_kv"]: r["pct_peak"] for r in frows
                if r["variant"] == variant and ab.is_finite(r["pct_peak"])}
        series.append(Series(variant, ns, [by_n.get(n) for n in ns], variant=variant, style="cell"))
    return Panel(family_title(family, frows), "n_kv", "variant", series, kind="heatmap",
                 categories=[str(n) for n in ns])


def plot_pct_peak(rows, threads):
    mrows = measured(rows, threads=threads)
    if not mrows:
        return f"no measured rows at {threads} threads"
    panels = [pct_panel(family, frows) for family, frows in families(mrows)]
    widest = max(len(p.categories) for p in panels)
    # Above 100 % the roof is what is wrong: the title says so, not the cells.
    over = sum(1 for r in mrows if r.get("roof_exceeded") or r["pct_peak"] is not None and
               r["pct_peak"] > 100)
    warning = (f" — ROOF EXCEEDED in {over} cells: the peak under-measures this CPU"
               if over else "")
    return Plot(f"pct_peak_t{threads}.png",
                f"% of measured peak (FMA, or read bandwidth for memory-bound decode), "
                f"{ab.plural_threads(threads)}{warning}", panels,
                panel_size=(max(4.2, 0.6 * widest + 2.4), 0.32 * len(ab.variants_in(mrows)) + 1.6))


def speedup_series(frows, baseline):
    base = {r["n_kv"]: r["time_ns_median"] for r in frows if r["variant"] == baseline}
    series = []
    for variant in ab.variants_in(frows):
        points = sorted((r["n_kv"], base[r["n_kv"]] / r["time_ns_median"]) for r in frows
                        if r["variant"] == variant and r["n_kv"] in base)
        if variant != baseline and points:
            series.append(Series(variant, [p[0] for p in points], [p[1] for p in points],
                                 variant=variant))
    if series:
        series.append(reference("same speed", list(base), 1.0))
    return series


def plot_speedup(rows, threads, baseline):
    panels = []
    for family, frows in families(measured(rows, threads=threads)):
        series = speedup_series(frows, baseline)
        if series:
            panels.append(Panel(family_title(family, frows), "keys n_kv",
                                f"speed-up over {baseline} (×)", series, xlog=True, ylog=True))
    if not panels:
        return f"{baseline} not measured at {threads} threads"
    # "peer" is a framework's row (torch, onnxruntime, openvino); blas is
    # one of attnbench's variants, the BLAS baseline.
    name = "the blas variant" if baseline == "blas" else baseline
    return Plot(f"speedup_vs_{baseline}_t{threads}.png",
                f"Speed-up over {name} (its time / the variant's time), "
                f"{ab.plural_threads(threads)}", panels)


def peer_ratio(row):
    """Peer time / the fastest attnbench variant's time over the same
    alternating rounds (> 1: attnbench faster); None without a pairing."""
    paired = row.get("paired_time_ns_median")
    if not ab.is_finite(paired) or paired <= 0 or not ab.has_timing(row):
        return None
    return row["time_ns_median"] / paired


def plot_vs_peers(rows, threads):
    panels = []
    for family, frows in families(measured(rows, threads=threads)):
        series = []
        for peer in sorted({r["variant"] for r in frows if ab.is_peer(r)}):
            points = sorted((r["n_kv"], peer_ratio(r)) for r in frows
                            if r["variant"] == peer and peer_ratio(r) is not None)
            if points:
                series.append(Series(peer, [p[0] for p in points], [p[1] for p in points],
                                     variant=peer))
        if series:
            series.append(reference("same speed", [x for s_ in series for x in s_.x], 1.0))
            panels.append(Panel(family_title(family, frows), "keys n_kv",
                                "peer time / attnbench's fastest (×)", series, xlog=True,
                                ylog=True))
    if not panels:
        return f"no peer rows at {threads} threads (scripts/run_matrix.sh --peers)"
    return Plot(f"vs_peers_t{threads}.png",
                "attnbench's fastest variant vs each framework, timed in alternating rounds "
                f"(peer time / attnbench time: above 1, attnbench is faster), "
                f"{ab.plural_threads(threads)}", panels)


def plot_thread_scaling(rows):
    prefill = measured(rows, "fma")
    if len({r["threads"] for r in prefill}) < 2:
        return "fewer than two thread counts measured"
    panels = []
    for family, frows in families(prefill):
        scaled = [n for n, nrows in group_by(frows, lambda r: r["n_kv"]).items()
                  if len({r["threads"] for r in nrows}) > 1]
        if not scaled:
            continue
        n = max(scaled)
        nrows = [r for r in frows if r["n_kv"] == n]
        series = variant_series(nrows, "threads", "gflops")
        peaks = {r["threads"]: r["peak_gflops"] for r in nrows if ab.is_finite(r["peak_gflops"])}
        if peaks:
            ts = sorted(peaks)
            series.append(Series("measured FMA peak", ts, [peaks[t] for t in ts], style="ref"))
        panels.append(Panel(f"{ab.family_label(family)}, n={n}", "threads", "GFLOP/s", series,
                            xlog=True, ylog=True))
    if not panels:
        return "no shape measured at two or more thread counts"
    return Plot("thread_scaling.png", "Thread scaling against the measured FMA peak", panels)


def plot_decode_bandwidth(rows):
    """GB/s of the decode families with a memory-bound row: every variant
    of such a family, also one its own roofs put on the FMA side (a cell
    near the ridge splits so), so no variant's point goes missing."""
    decode = [r for r in measured(rows) if ab.is_decode(r)]
    groups = {key: grows for key, grows in
              group_by(decode, lambda r: (ab.family_of(r), r["threads"])).items()
              if any(r["limit"] == "bandwidth" for r in grows)}
    if not groups:
        return "no memory-bound (limit=bandwidth, decode) rows"
    panels = []
    for (family, threads), grows in sorted(groups.items(),
                                           key=lambda kv: (ab.family_sort_key(kv[0][0]), kv[0][1])):
        series = variant_series(grows, "n_kv", "gbytes_per_s")
        peak = max((r["peak_gbytes_per_s"] for r in grows
                    if ab.is_finite(r["peak_gbytes_per_s"])), default=None)
        if peak is not None:
            series.append(reference("measured read bandwidth", [r["n_kv"] for r in grows], peak))
        panels.append(Panel(f"{ab.family_label(family)}, {ab.plural_threads(threads)}",
                            "keys n_kv", "GB/s (Q, K, V, O moved once)", series, xlog=True))
    return Plot("decode_bandwidth.png", "Decode: achieved vs measured memory bandwidth", panels)


def accuracy_rows(rows):
    """One row per (variant, shape): the thread count with the largest E_M."""
    best = {}
    for r in rows:
        if ab.is_skipped(r) or not ab.is_finite(r["max_err_u"]):
            continue
        key = (r["variant"], ab.shape_of(r))
        if key not in best or r["max_err_u"] > best[key]["max_err_u"]:
            best[key] = r
    return list(best.values())


def plot_accuracy_bound(rows):
    arows = [r for r in accuracy_rows(rows) if ab.is_finite(r["bound_u"])]
    if not arows:
        return "no rows with a measured error and bound"
    panels = []
    for variant, vrows in sorted(group_by(arows, lambda r: r["variant"]).items(),
                                 key=lambda kv: ab.variant_sort_key(kv[0])):
        vrows.sort(key=lambda r: r["bound_u"])
        bounds = [r["bound_u"] for r in vrows]
        series = [
            Series(f"{variant} E_M", bounds,
                   [max(r["max_err_u"], ZERO_ERROR_FLOOR_U) for r in vrows],
                   variant=variant, style="points",
                   extra={"cases": [ab.shape_label(r) for r in vrows],
                          "failed": [ab.is_failed(r) for r in vrows]}),
            Series("E_M = rule-A bound", [bounds[0], bounds[-1]], [bounds[0], bounds[-1]],
                   style="ref"),
        ]
        panels.append(Panel(f"{variant}: {len(vrows)} cases", "rule-A bound of the case (u)",
                            "E_M (u = 2⁻²⁴)", series, ylog=True, xlog10=True))
    return Plot("accuracy_bound.png",
                "Max error E_M of each case against its rule-A bound (pass: below the line; "
                "red ring: a failed case)", panels)


def sqrt_guide(frows):
    """A √n line through the median error at the smallest n (docs/accuracy.md:
    √n growth is healthy, linear growth is a finding)."""
    n0 = min(r["n_kv"] for r in frows)
    y0 = statistics.median(max(r["max_err_u"], ZERO_ERROR_FLOOR_U)
                           for r in frows if r["n_kv"] == n0)
    ns = sorted({r["n_kv"] for r in frows})
    return Series("∝ √n", ns, [y0 * math.sqrt(n / n0) for n in ns], style="guide")


def plot_error_growth(rows):
    arows = accuracy_rows(rows)
    panels = []
    for family, frows in families(arows):
        if len({r["n_kv"] for r in frows}) < 2:
            continue
        series = variant_series(frows, "n_kv", "max_err_u")
        for s in series:
            s.y = [max(v, ZERO_ERROR_FLOOR_U) for v in s.y]
        for b in variant_series(frows, "n_kv", "bound_u", style="bound"):
            b.name, b.legend = f"{b.variant} rule-A bound", "rule-A bound (dashed)"
            series.append(b)
        series.append(sqrt_guide(frows))
        panels.append(Panel(ab.family_label(family), "keys n_kv", "E_M (u)", series,
                            xlog=True, ylog=True))
    if not panels:
        return "no shape family measured at two or more n"
    return Plot("error_growth.png", "Error growth with n: E_M and its rule-A bound", panels)


def low_precision_cells(rows):
    """{(shape, threads): rows} of the cells measured in a type not all f32,
    at the largest thread count those were measured at (the view a reader
    of a low-precision run wants: all threads)."""
    low = [r for r in measured(rows) if not ab.is_f32(r)]
    if not low:
        return {}
    threads = max(r["threads"] for r in low)
    cells = {(ab.shape_of(r), r["threads"]) for r in low if r["threads"] == threads}
    groups = group_by([r for r in rows if (ab.shape_of(r), r["threads"]) in cells and
                       not ab.is_peer(r)], lambda r: (ab.shape_of(r), r["threads"]))
    return dict(sorted(groups.items(), key=lambda kv: ab.shape_sort_key(kv[1][0])))


def type_bars(crows, value, ok_only):
    """One bar series per variant over the cell's type labels (f32 first)."""
    labels = sorted({ab.dtype_label(r) for r in crows}, key=ab.dtype_sort_key)
    series = []
    for variant in ab.variants_in(crows):
        by_type = {ab.dtype_label(r): value(r) for r in crows if r["variant"] == variant and
                   (not ok_only or (ab.is_ok(r) and ab.has_timing(r)))}
        ys = [by_type.get(label) for label in labels]
        if any(ab.is_finite(y) for y in ys):
            series.append(Series(variant, labels, ys, variant=variant, style="bar"))
    return labels, series


def plot_low_precision(rows):
    cells = low_precision_cells(rows)
    if not cells:
        return "no low-precision (f16/bf16) rows measured"
    panels = []
    for (_, threads), crows in cells.items():
        title = f"{ab.shape_label(crows[0])}, {ab.plural_threads(threads)}"
        labels, speed = type_bars(crows, lambda r: r["gflops"], ok_only=True)
        panels.append(Panel(f"{title}: speed", "element types (Q, K/V, O)",
                            "GFLOP/s (same work in every type)", speed, kind="bars",
                            categories=labels))
        # E_M of failed rows too: that is where accuracy matters most.
        labels, err = type_bars(
            [r for r in crows if not ab.is_skipped(r)],
            lambda r: max(r["max_err_u"], ZERO_ERROR_FLOOR_U) if ab.is_finite(r["max_err_u"])
            else None, ok_only=False)
        panels.append(Panel(f"{title}: accuracy", "element types (Q, K/V, O)",
                            "E_M (u = 2⁻²⁴)", err, kind="bars", ylog=True, categories=labels))
    return Plot("low_precision.png",
                "f32 against f16/bf16 inputs, per variant: speed (left) and max error E_M "
                "(right, log); bf16kv / f16kv: f32 Q and O with a narrow KV cache",
                panels, columns=2)


def build_plots(rows):
    """(plots, skipped): Plot objects, and {filename: reason} for the rest."""
    builders = []
    all_rows, rows = rows, ab.f32_rows(rows)
    views = thread_views(rows) or [1]
    per_thread = (
        ("gflops_vs_n", plot_gflops_vs_n), ("pct_peak", plot_pct_peak),
        ("speedup_vs_naive", lambda rows_, t: plot_speedup(rows_, t, "naive")),
        ("speedup_vs_blas", lambda rows_, t: plot_speedup(rows_, t, "blas")),
        ("vs_peers", plot_vs_peers),
    )
    for prefix, build in per_thread:
        for threads in views:
            builders.append((f"{prefix}_t{threads}.png",
                             lambda build=build, t=threads: build(rows, t)))
    builders += [
        ("thread_scaling.png", lambda: plot_thread_scaling(rows)),
        ("decode_bandwidth.png", lambda: plot_decode_bandwidth(rows)),
        ("accuracy_bound.png", lambda: plot_accuracy_bound(rows)),
        ("error_growth.png", lambda: plot_error_growth(rows)),
        ("low_precision.png", lambda: plot_low_precision(all_rows)),
    ]
    plots, skipped = [], {}
    for filename, build in builders:
        result = build()
        if isinstance(result, Plot):
            plots.append(result)
        else:
            skipped[filename] = result
    return plots, skipped


# Rendering -----------------------------------------------------------------

def plain_log_y(ax):
    """Log y ticks as plain numbers (0.5, 10, 200) rather than 5×10⁻¹; minor
    ticks get labels too when the axis spans less than a decade."""
    ax.set_yscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    low, high = ax.get_ylim()
    short = low > 0 and high / low < 10
    ax.yaxis.set_minor_formatter(plain if short else matplotlib.ticker.NullFormatter())


def set_log2_x(ax, xs):
    ax.set_xscale("log", base=2)
    ticks = sorted(set(xs))
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(int(t)) if float(t).is_integer() else str(t) for t in ticks])
    ax.minorticks_off()


def draw_markers(ax, s, label, size):
    """Filled markers, hollow where extra["significant"] is False (compare.py);
    a red ring where extra["failed"] is True (a case that broke rule A)."""
    n = len(s.x)
    filled = s.extra.get("significant", [True] * n)
    failed = s.extra.get("failed", [False] * n)
    ax.scatter(s.x, s.y, s=size, color=[s.colour() if f else "white" for f in filled],
               edgecolors=["red" if bad else s.colour() for bad in failed],
               linewidths=1.2, label=label, zorder=3)


def draw_lines(ax, panel):
    xs = []
    for s in panel.series:
        xs += s.x
        label = s.name if s.legend is None else s.legend
        if s.style == "line":
            ax.plot(s.x, s.y, linewidth=1.5, color=s.colour())
            draw_markers(ax, s, label, 22)
        elif s.style == "points":
            draw_markers(ax, s, label, 18)
        elif s.style == "bound":
            ax.plot(s.x, s.y, linestyle="--", linewidth=1, color=s.colour(), label=label)
        elif s.style == "guide":
            ax.plot(s.x, s.y, linestyle=":", linewidth=1.5, color=s.colour(), label=label)
        elif len(set(s.y)) == 1:  # a level: drawn across the whole axis
            ax.axhline(s.y[0], linestyle="--", linewidth=1.8, color=s.colour(), label=label)
        else:  # ref, such as a peak that grows with the thread count
            ax.plot(s.x, s.y, linestyle="--", linewidth=1.8, color=s.colour(), label=label)
    if panel.xlog and xs:
        set_log2_x(ax, xs)
    if panel.xlog10:
        ax.set_xscale("log")
    if panel.ylog:
        plain_log_y(ax)
    else:
        ax.set_ylim(bottom=0)


def draw_heatmap(ax, panel):
    values = np.array([[np.nan if v is None else v for v in s.y] for s in panel.series],
                      dtype=float)
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=100, aspect="auto")
    for (i, j), v in np.ndenumerate(values):
        text = "–" if np.isnan(v) else f"{v:.0f}"
        ax.text(j, i, text, ha="center", va="center", fontsize=7,
                color="white" if not np.isnan(v) and v < 55 else "black")
    ax.set_xticks(range(len(panel.categories)))
    ax.set_xticklabels(panel.categories, fontsize=7)
    ax.set_yticks(range(len(panel.series)))
    ax.set_yticklabels([s.name for s in panel.series], fontsize=8)
    for tick, s in zip(ax.get_yticklabels(), panel.series):
        tick.set_color(s.colour())
    return image


def draw_bars(ax, panel):
    """Grouped bars: a group per category, a bar per series (variant)."""
    n = max(len(panel.series), 1)
    width = 0.8 / n
    for i, s in enumerate(panel.series):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(panel.categories))]
        ys = [np.nan if v is None else v for v in s.y]
        ax.bar(xs, ys, width=width, color=s.colour(), label=s.name, log=panel.ylog)
    ax.set_xticks(range(len(panel.categories)))
    ax.set_xticklabels(panel.categories)
    if panel.ylog:
        # Bars rise from a whole decade below the smallest, so their heights
        # compare (an autoscaled bottom just under it makes it look like 0).
        low = min((v for s in panel.series for v in s.y if ab.is_finite(v) and v > 0),
                  default=1.0)
        ax.set_ylim(bottom=10 ** math.floor(math.log10(low)))
        plain_log_y(ax)


def add_legend(fig, axes):
    """One legend for the figure: variants in their usual order, then the
    reference lines in the order drawn."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label and not label.startswith("_"):
                seen.setdefault(label, handle)
    variants = sorted((label for label in seen if label.split()[0] in VARIANT_COLOURS),
                      key=lambda label: ab.variant_sort_key(label.split()[0]))
    labels = variants + [label for label in seen if label not in variants]
    if labels:
        fig.legend([seen[label] for label in labels], labels, loc="outside right upper",
                   fontsize=8)


def render(plot, subtitle, path, dpi):
    """Draws plot into path; subtitle (the machine and date) goes under the title."""
    load_matplotlib()
    columns = min(plot.columns, len(plot.panels))
    rows = math.ceil(len(plot.panels) / columns)
    width, height = plot.panel_size
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns + 1.8, height * rows + 0.9),
                             squeeze=False, layout="constrained")
    flat = list(axes.flat)
    image = None
    for ax, panel in zip(flat, plot.panels):
        if panel.kind == "heatmap":
            image = draw_heatmap(ax, panel)
        elif panel.kind == "bars":
            draw_bars(ax, panel)
            ax.grid(True, axis="y", which="major", alpha=0.3)
        else:
            draw_lines(ax, panel)
            ax.grid(True, which="major", alpha=0.3)
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
    for ax in flat[len(plot.panels):]:
        ax.set_visible(False)
    if image is not None:
        fig.colorbar(image, ax=flat[:len(plot.panels)], label="% of peak", shrink=0.8)
    else:
        add_legend(fig, flat)
    fig.suptitle(f"{plot.title}\n{subtitle}", fontsize=11)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


# plots.json ----------------------------------------------------------------

def json_number(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def plot_record(plot, subtitle):
    return {
        "title": plot.title,
        "subtitle": subtitle,
        "panels": [{
            "title": p.title, "kind": p.kind, "xlabel": p.xlabel, "ylabel": p.ylabel,
            "xlog": p.xlog, "ylog": p.ylog,
            "series": [dict({"name": s.name, "style": s.style, "variant": s.variant,
                             "colour": s.colour(),
                             "x": [json_number(v) for v in s.x],
                             "y": [json_number(v) for v in s.y]}, **s.extra)
                       for s in p.series],
        } for p in plot.panels],
    }


def write_json(path, record):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, ensure_ascii=False)
        f.write("\n")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Draw the PNGs of attnbench matrix CSVs (and DIR/plots.json, the data drawn).")
    parser.add_argument("csv", nargs="+", help="matrix CSV(s); FILE.meta.json beside each")
    parser.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    parser.add_argument("--dpi", type=int, default=110, help="resolution of the PNGs (default 110)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    results = ab.load(args.csv)
    os.makedirs(args.out, exist_ok=True)
    usual = [r for r in results.rows if ab.usual_scale(r)]
    if len(usual) < len(results.rows):
        ab.note(f"{len(results.rows) - len(usual)} rows at a scale of their own (scale=) "
                "left out: each has its twin at the usual scale")
    plots, skipped = build_plots(usual)
    subtitle = ab.machine_title(results.meta)
    for plot in plots:
        render(plot, subtitle, os.path.join(args.out, plot.filename), args.dpi)
        print(os.path.join(args.out, plot.filename))
    for filename, reason in skipped.items():
        ab.note(f"skipped {filename}: {reason}")
    write_json(os.path.join(args.out, "plots.json"), {
        "sources": results.paths,
        "machine": subtitle,
        "plots": {p.filename: plot_record(p, subtitle) for p in plots},
        "skipped": skipped,
    })
    return 0


if __name__ == "__main__":
    sys.exit(ab.run_cli(main))
