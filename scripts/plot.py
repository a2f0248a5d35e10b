#!/usr/bin/env python3
"""Draws the pictures of an attnbench matrix run.

    scripts/plot.py results/<cpu-slug>/matrix.csv [MORE.csv ...] -o DIR

Writes PNGs into DIR and DIR/plots.json, which lists for every PNG the
series drawn (name, x, y) so tests and report.py can see what is in each
picture. A plot whose rows are absent (no decode rows, one thread count
only) is skipped with a note on stderr and listed under "skipped".

Each figure is first built as plain data (Plot > Panel > Series) and then
rendered; plots.json is written from the same objects, so it says exactly
what was drawn.
"""

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbench_csv as ab  # noqa: E402

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
    style: str = "line"  # line | ref | bound | guide | dots | bar | tick
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
    kind: str = "lines"  # lines | categories | heatmap
    xlog: bool = False   # base 2: n and thread counts double
    ylog: bool = False
    categories: list = None  # x labels of a categories or heatmap panel


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


def reference(name, xs, value):
    """A horizontal line across the panel's x range."""
    return Series(name, [min(xs), max(xs)], [value, value], style="ref")


# The plots -----------------------------------------------------------------

def plot_gflops_vs_n(rows, threads):
    prefill = measured(rows, "fma", threads)
    if not prefill:
        return f"no compute-bound (limit=fma) rows at {threads} threads"
    panels = []
    for family, frows in sorted(group_by(prefill, ab.family_of).items(),
                                key=lambda kv: ab.family_sort_key(kv[0])):
        series = variant_series(frows, "n_kv", "gflops")
        peak = max((r["peak_gflops"] for r in frows if ab.is_finite(r["peak_gflops"])), default=None)
        if peak is not None:
            series.append(reference("measured FMA peak", [r["n_kv"] for r in frows], peak))
        panels.append(Panel(ab.family_label(family), "sequence length n (n_q = n_kv)",
                            "GFLOP/s", series, xlog=True, ylog=True))
    return Plot(f"gflops_vs_n_t{threads}.png",
                f"Prefill throughput vs n, {threads} thread{'s' * (threads > 1)}", panels)


def plot_pct_peak(rows, threads):
    mrows = measured(rows, threads=threads)
    if not mrows:
        return f"no measured rows at {threads} threads"
    shapes = sorted({ab.shape_of(r): r for r in mrows}.values(), key=ab.shape_sort_key)
    labels = [ab.shape_label(r) + (" (bw)" if r["limit"] == "bandwidth" else "") for r in shapes]
    column = {ab.shape_of(r): i for i, r in enumerate(shapes)}
    series = []
    for variant in ab.variants_in(mrows):
        values = [None] * len(shapes)
        for r in mrows:
            if r["variant"] == variant and ab.is_finite(r["pct_peak"]):
                values[column[ab.shape_of(r)]] = r["pct_peak"]
        series.append(Series(variant, labels, values, variant=variant, style="cell"))
    panel = Panel("% of peak: FMA peak for prefill, read bandwidth for decode (bw)",
                  "shape", "variant", series, kind="heatmap", categories=labels)
    width = max(8.0, 0.55 * len(labels) + 2.5)
    return Plot(f"pct_peak_t{threads}.png",
                f"Percent of measured peak, {threads} thread{'s' * (threads > 1)}", [panel],
                panel_size=(width, 0.45 * len(series) + 2.8), columns=1)


def speedup_panel(mrows, baseline, shapes, labels):
    base = {ab.shape_of(r): r["time_ns_median"] for r in mrows if r["variant"] == baseline}
    if not base:
        return None
    series = []
    for variant in ab.variants_in(mrows):
        if variant == baseline:
            continue
        pairs = [(labels[i], base[ab.shape_of(r)] / r["time_ns_median"])
                 for r in mrows if r["variant"] == variant
                 for i, s in enumerate(shapes) if s == ab.shape_of(r) and s in base]
        pairs.sort(key=lambda p: labels.index(p[0]))
        if pairs:
            series.append(Series(variant, [p[0] for p in pairs], [p[1] for p in pairs],
                                 variant=variant, style="dots"))
    series.append(Series("same speed", [labels[0], labels[-1]], [1.0, 1.0], style="ref"))
    return Panel(f"speed-up over {baseline} (time of {baseline} / time of variant)", "shape",
                 f"speed-up over {baseline} (×)", series, kind="categories", ylog=True,
                 categories=labels)


def plot_speedup(rows, threads):
    mrows = measured(rows, threads=threads)
    shapes = sorted({ab.shape_of(r): r for r in mrows}.values(), key=ab.shape_sort_key)
    labels = [ab.shape_label(r) + (" (bw)" if r["limit"] == "bandwidth" else "") for r in shapes]
    shapes = [ab.shape_of(r) for r in shapes]
    panels = [p for p in (speedup_panel(mrows, b, shapes, labels) for b in ("naive", "blas")) if p]
    if not panels:
        return f"neither naive nor blas measured at {threads} threads"
    width = max(8.0, 0.55 * len(labels) + 2.5)
    return Plot(f"speedup_t{threads}.png",
                f"Speed-up over naive and over the blas peer, {threads} thread{'s' * (threads > 1)}",
                panels, panel_size=(width, 4.2), columns=1)


def plot_thread_scaling(rows):
    prefill = measured(rows, "fma")
    if len({r["threads"] for r in prefill}) < 2:
        return "fewer than two thread counts measured"
    panels = []
    for family, frows in sorted(group_by(prefill, ab.family_of).items(),
                                key=lambda kv: ab.family_sort_key(kv[0])):
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
    decode = measured(rows, "bandwidth")
    if not decode:
        return "no memory-bound (limit=bandwidth, decode) rows"
    panels = []
    groups = group_by(decode, lambda r: (ab.family_of(r), r["threads"]))
    for (family, threads), grows in sorted(groups.items(),
                                           key=lambda kv: (ab.family_sort_key(kv[0][0]), kv[0][1])):
        series = variant_series(grows, "n_kv", "gbytes_per_s")
        peak = max((r["peak_gbytes_per_s"] for r in grows
                    if ab.is_finite(r["peak_gbytes_per_s"])), default=None)
        if peak is not None:
            series.append(reference("measured read bandwidth", [r["n_kv"] for r in grows], peak))
        panels.append(Panel(f"{ab.family_label(family)}, {threads} thread{'s' * (threads > 1)}",
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
    arows = accuracy_rows(rows)
    if not arows:
        return "no rows with a measured error"
    panels = []
    for variant, vrows in sorted(group_by(arows, lambda r: r["variant"]).items(),
                                 key=lambda kv: ab.variant_sort_key(kv[0])):
        vrows.sort(key=ab.shape_sort_key)
        labels = [ab.shape_label(r) for r in vrows]
        errors = [max(r["max_err_u"], ZERO_ERROR_FLOOR_U) for r in vrows]
        bounds = [r["bound_u"] if ab.is_finite(r["bound_u"]) else None for r in vrows]
        series = [
            Series(f"{variant} E_M", labels, errors, variant=variant, style="bar",
                   extra={"failed": [ab.is_failed(r) for r in vrows]}),
            Series(f"{variant} rule-A bound", labels, bounds, style="tick",
                   legend="rule-A bound"),
        ]
        panels.append(Panel(variant, "case", "E_M (u = 2⁻²⁴)", series,
                            kind="categories", ylog=True, categories=labels))
    width = max(5.4, 0.45 * max(len(p.categories) for p in panels) + 1.5)
    return Plot("accuracy_bound.png", "Max error E_M per case beside its rule-A bound (log scale)",
                panels, panel_size=(width, 3.6), columns=2)


def sqrt_guide(frows):
    """A √n line through the median error at the smallest n (ACCURACY.md:
    √n growth is healthy, linear growth is a finding)."""
    n0 = min(r["n_kv"] for r in frows)
    y0 = float(np.median([max(r["max_err_u"], ZERO_ERROR_FLOOR_U) for r in frows if r["n_kv"] == n0]))
    ns = sorted({r["n_kv"] for r in frows})
    return Series("∝ √n", ns, [y0 * math.sqrt(n / n0) for n in ns], style="guide")


def plot_error_growth(rows):
    arows = accuracy_rows(rows)
    panels = []
    for family, frows in sorted(group_by(arows, ab.family_of).items(),
                                key=lambda kv: ab.family_sort_key(kv[0])):
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


def build_plots(rows):
    """(plots, skipped): Plot objects, and {filename: reason} for the rest."""
    builders = []
    views = thread_views(rows) or [1]
    for threads in views:
        builders.append((f"gflops_vs_n_t{threads}.png", lambda t=threads: plot_gflops_vs_n(rows, t)))
    for threads in views:
        builders.append((f"pct_peak_t{threads}.png", lambda t=threads: plot_pct_peak(rows, t)))
    for threads in views:
        builders.append((f"speedup_t{threads}.png", lambda t=threads: plot_speedup(rows, t)))
    builders += [
        ("thread_scaling.png", lambda: plot_thread_scaling(rows)),
        ("decode_bandwidth.png", lambda: plot_decode_bandwidth(rows)),
        ("accuracy_bound.png", lambda: plot_accuracy_bound(rows)),
        ("error_growth.png", lambda: plot_error_growth(rows)),
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

def set_log2_x(ax, xs):
    ax.set_xscale("log", base=2)
    ticks = sorted(set(xs))
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(int(t)) if float(t).is_integer() else str(t) for t in ticks])
    ax.minorticks_off()


def draw_lines(ax, panel):
    xs = []
    for s in panel.series:
        xs += s.x
        label = s.name if s.legend is None else s.legend
        if s.style == "line":
            ax.plot(s.x, s.y, marker="o", markersize=4, color=s.colour(), label=label)
        elif s.style == "bound":
            ax.plot(s.x, s.y, linestyle="--", linewidth=1, color=s.colour(), label=label)
        elif s.style == "guide":
            ax.plot(s.x, s.y, linestyle=":", linewidth=1.5, color=s.colour(), label=label)
        else:  # ref
            ax.plot(s.x, s.y, linestyle="--", linewidth=1.8, color=s.colour(), label=label)
    if panel.xlog and xs:
        set_log2_x(ax, xs)
    if panel.ylog:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)


def dot_shift(variant):
    """Side-by-side dots in a category, a variant always in the same slot."""
    slots = len(ab.VARIANT_ORDER)
    slot = ab.VARIANT_ORDER.index(variant) if variant in ab.VARIANT_ORDER else (slots - 1) / 2
    return (slot - (slots - 1) / 2) * 0.1


def draw_categories(ax, panel):
    index = {c: i for i, c in enumerate(panel.categories)}
    for s in panel.series:
        label = s.name if s.legend is None else s.legend
        pos = [index[x] for x in s.x]
        if s.style == "dots":
            shift = dot_shift(s.variant)
            filled = s.extra.get("significant", [True] * len(pos))
            faces = [s.colour() if f else "white" for f in filled]
            ax.scatter([p + shift for p in pos], s.y, s=28, color=faces, edgecolors=s.colour(),
                       linewidths=1.2, label=label, zorder=3)
        elif s.style == "bar":
            failed = s.extra.get("failed", [False] * len(pos))
            ax.bar(pos, s.y, width=0.6, color=s.colour(), label=label,
                   edgecolor=["red" if f else s.colour() for f in failed], linewidth=1.5)
        elif s.style == "tick":
            keep = [(p, y) for p, y in zip(pos, s.y) if y is not None]
            ax.scatter([p for p, _ in keep], [y for _, y in keep], marker="_", s=300,
                       linewidths=2.5, color=s.colour(), label=label, zorder=4)
        else:  # ref: spans the panel
            ax.axhline(s.y[0], linestyle="--", linewidth=1, color=s.colour(), label=label)
    ax.set_xticks(range(len(panel.categories)))
    ax.set_xticklabels(panel.categories, rotation=45, ha="right", fontsize=7)
    ax.set_xlim(-0.7, len(panel.categories) - 0.3)
    if panel.ylog:
        ax.set_yscale("log")


def draw_heatmap(fig, ax, panel):
    values = np.array([[np.nan if v is None else v for v in s.y] for s in panel.series], dtype=float)
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#dddddd")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=100, aspect="auto")
    for (i, j), v in np.ndenumerate(values):
        text = "–" if np.isnan(v) else f"{v:.0f}"
        ax.text(j, i, text, ha="center", va="center", fontsize=7,
                color="white" if not np.isnan(v) and v < 55 else "black")
    ax.set_xticks(range(len(panel.categories)))
    ax.set_xticklabels(panel.categories, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(panel.series)))
    ax.set_yticklabels([s.name for s in panel.series])
    for tick, s in zip(ax.get_yticklabels(), panel.series):
        tick.set_color(s.colour())
    fig.colorbar(image, ax=ax, label="% of peak")


def add_legend(fig, axes):
    """One legend for the figure: variants in their usual order, then the
    reference lines in the order drawn."""
    seen = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label and not label.startswith("_"):
                seen.setdefault(label, handle)
    variants = sorted((l for l in seen if l.split()[0] in VARIANT_COLOURS),
                      key=lambda l: ab.variant_sort_key(l.split()[0]))
    labels = variants + [l for l in seen if l not in variants]
    if labels:
        fig.legend([seen[l] for l in labels], labels, loc="outside right upper", fontsize=8)


def render(plot, meta, path, dpi):
    columns = min(plot.columns, len(plot.panels))
    rows = math.ceil(len(plot.panels) / columns)
    width, height = plot.panel_size
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns + 1.8, height * rows + 0.9),
                             squeeze=False, layout="constrained")
    flat = list(axes.flat)
    for ax, panel in zip(flat, plot.panels):
        if panel.kind == "heatmap":
            draw_heatmap(fig, ax, panel)
        elif panel.kind == "categories":
            draw_categories(ax, panel)
        else:
            draw_lines(ax, panel)
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        if panel.kind != "heatmap":
            ax.grid(True, which="major", alpha=0.3)
    for ax in flat[len(plot.panels):]:
        ax.set_visible(False)
    if not any(p.kind == "heatmap" for p in plot.panels):
        add_legend(fig, flat)
    fig.suptitle(f"{plot.title}\n{ab.machine_title(meta)}", fontsize=11)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


# plots.json ----------------------------------------------------------------

def json_number(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def plot_record(plot, meta):
    return {
        "title": plot.title,
        "machine": ab.machine_title(meta),
        "panels": [{
            "title": p.title, "kind": p.kind, "xlabel": p.xlabel, "ylabel": p.ylabel,
            "xlog": p.xlog, "ylog": p.ylog,
            "series": [dict({"name": s.name, "style": s.style, "variant": s.variant,
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
    plots, skipped = build_plots(results.rows)
    for plot in plots:
        render(plot, results.meta, os.path.join(args.out, plot.filename), args.dpi)
        print(os.path.join(args.out, plot.filename))
    for filename, reason in skipped.items():
        ab.note(f"skipped {filename}: {reason}")
    write_json(os.path.join(args.out, "plots.json"), {
        "sources": results.paths,
        "machine": ab.machine_title(results.meta),
        "plots": {p.filename: plot_record(p, results.meta) for p in plots},
        "skipped": skipped,
    })
    return 0


if __name__ == "__main__":
    sys.exit(ab.run_cli(main))
