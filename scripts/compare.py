#!/usr/bin/env python3
"""Compares attnbench matrix results: two or more CPUs, or two commits on
one CPU. The first file (A) is the baseline; every other file (B, C, ...)
is compared with it cell by cell, a cell being (variant, shape, element types,
threads).

    scripts/compare.py A.csv B.csv [C.csv ...] [-o DIR]

Prints the ratio table; with -o also writes DIR/compare.md, DIR/compare.csv
(every number, for scripts), DIR/compare.png and DIR/compare.json (the data
drawn, as plot.py's plots.json).
"""

import argparse
import csv
import os
import string
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbench_csv as ab  # noqa: E402

RULE = ("Speed-up of X over A = time_A / time_X (medians): above 1, X is faster. A change is "
        "significant when the [time_ns_min, time_ns_max] intervals of the two rows do not "
        "overlap, i.e. it is beyond the measured run-to-run spread; otherwise it is marked "
        "'within spread'. A cell with a row that is not ok (a failed row is timed too) names "
        "that row's status in the `status` column and is counted apart in the summary.")

FASTER, SLOWER, WITHIN, UNKNOWN = "faster", "slower", "within spread", "spread unknown"


@dataclass
class Pair:
    """One cell measured in both files."""
    a: dict
    b: dict

    @property
    def speedup(self):
        return self.a["time_ns_median"] / self.b["time_ns_median"]

    @property
    def gflops_ratio(self):
        a, b = self.a["gflops"], self.b["gflops"]
        return b / a if ab.is_finite(a) and ab.is_finite(b) and a > 0 else None

    @property
    def ok(self):
        """Both rows status ok. The matrix times a row that fails its
        accuracy rule too, so a failed row has a time: its speed-up is real
        but of wrong output, and must not read as an ordinary one."""
        return ab.is_ok(self.a) and ab.is_ok(self.b)

    def status_note(self, other):
        """'ok', or the status of each side that is not ok."""
        if self.ok:
            return "ok"
        return "; ".join(f"{label}: {ab.status_text(row)}"
                         for label, row in (("A", self.a), (other, self.b)) if not ab.is_ok(row))

    @property
    def change(self):
        a_lo, a_hi = self.a["time_ns_min"], self.a["time_ns_max"]
        b_lo, b_hi = self.b["time_ns_min"], self.b["time_ns_max"]
        if not all(ab.is_finite(v) for v in (a_lo, a_hi, b_lo, b_hi)):
            return UNKNOWN
        if b_hi < a_lo:
            return FASTER
        if b_lo > a_hi:
            return SLOWER
        return WITHIN


@dataclass
class Comparison:
    label: str  # of the other file: B, C, ...
    pairs: list
    only_a: list
    only_b: list
    not_measured: list  # (row A, row B) where one of them has no timing


def cell_order(row):
    return (ab.variant_sort_key(row["variant"]), ab.shape_sort_key(row),
            ab.dtype_sort_key(ab.dtype_label(row)), row["threads"])


def compare(rows_a, rows_b, label):
    a_by_key = {ab.row_key(r): r for r in rows_a}
    b_by_key = {ab.row_key(r): r for r in rows_b}
    pairs, not_measured = [], []
    for key in a_by_key.keys() & b_by_key.keys():
        a, b = a_by_key[key], b_by_key[key]
        if ab.has_timing(a) and ab.has_timing(b):
            pairs.append(Pair(a, b))
        else:
            not_measured.append((a, b))
    return Comparison(
        label,
        sorted(pairs, key=lambda p: cell_order(p.a)),
        sorted((a_by_key[k] for k in a_by_key.keys() - b_by_key.keys()), key=cell_order),
        sorted((b_by_key[k] for k in b_by_key.keys() - a_by_key.keys()), key=cell_order),
        sorted(not_measured, key=lambda ab_: cell_order(ab_[0])),
    )


# Text and markdown ----------------------------------------------------------

def cell_name(row):
    return (f"{row['variant']} {ab.shape_label(row, with_types=True)}, "
            f"{ab.plural_threads(row['threads'])}")


def pair_table(comparison, markdown):
    other = comparison.label
    header = ["variant", "shape", "threads", "time A", f"time {other}", "speed-up",
              "GFLOP/s A", f"GFLOP/s {other}", "GFLOP/s ratio", "% peak A", f"% peak {other}",
              "change", "status"]
    rows = [[p.a["variant"], ab.shape_label(p.a, with_types=True), p.a["threads"],
             ab.fmt_time_ns(p.a["time_ns_median"]), ab.fmt_time_ns(p.b["time_ns_median"]),
             f"{ab.fmt_num(p.speedup)}×", ab.fmt_num(p.a["gflops"]), ab.fmt_num(p.b["gflops"]),
             ab.fmt_num(p.gflops_ratio), ab.fmt_num(p.a["pct_peak"]), ab.fmt_num(p.b["pct_peak"]),
             p.change, p.status_note(other)] for p in comparison.pairs]
    return ab.format_table(header, rows, markdown)


def summary(comparison):
    # Changes are counted over the pairs whose two rows are ok; a pair with
    # a failed row is counted apart, so wrong output never adds a speed-up.
    changes = [p.change for p in comparison.pairs if p.ok]
    counts = [f"{changes.count(c)} {c}" for c in (FASTER, SLOWER, WITHIN, UNKNOWN) if c in changes]
    not_ok = len(comparison.pairs) - len(changes)
    if not_ok:
        counts.append(f"{not_ok} with a row not ok, not counted as a change")
    return (f"{comparison.label} vs A: {len(comparison.pairs)} cells in both"
            + (f" ({', '.join(counts)})" if counts else "")
            + f"; {len(comparison.only_a)} only in A, {len(comparison.only_b)} only in "
            f"{comparison.label}, {len(comparison.not_measured)} not measured in both")


def unmatched_lines(comparison, bullet):
    other = comparison.label
    lines = []
    for row in comparison.only_a:
        lines.append(f"{bullet}only in A: {cell_name(row)} ({ab.status_text(row)})")
    for row in comparison.only_b:
        lines.append(f"{bullet}only in {other}: {cell_name(row)} ({ab.status_text(row)})")
    for a, b in comparison.not_measured:
        lines.append(f"{bullet}not measured in both: {cell_name(a)} "
                     f"(A: {ab.status_text(a)}; {other}: {ab.status_text(b)})")
    return lines


def legend_lines(labels, results_list, bullet):
    return [f"{bullet}{label}: {res.paths[0]} ({ab.machine_title(res.meta)})"
            for label, res in zip(labels, results_list)]


def render_text(labels, results_list, comparisons, markdown):
    bullet = "- " if markdown else ""
    out = (["# attnbench comparison", ""] if markdown else [])
    out += legend_lines(labels, results_list, bullet) + ["", RULE]
    for comparison in comparisons:
        if markdown:
            out += ["", f"## {comparison.label} vs A"]
        out += ["", summary(comparison), "", pair_table(comparison, markdown)]
        extra = unmatched_lines(comparison, bullet)
        if extra:
            out += [""] + extra
    return "\n".join(out) + "\n"


# compare.csv ----------------------------------------------------------------

CSV_HEADER = (["other", "variant"] + list(ab.SHAPE_COLUMNS) + list(ab.DTYPE_COLUMNS)
              + ["threads", "time_ns_median_a", "time_ns_median_b", "speedup", "gflops_a",
                 "gflops_b", "gflops_ratio", "pct_peak_a", "pct_peak_b", "change",
                 "status_a", "status_b"])


def csv_rows(comparison):
    def base(row):
        shape = [row[c] for c in ab.SHAPE_COLUMNS] + list(ab.types_of(row))
        return [comparison.label, row["variant"]] + shape + [row["threads"]]

    def blank(v):
        return "" if v is None else v

    for p in comparison.pairs:
        yield base(p.a) + [p.a["time_ns_median"], p.b["time_ns_median"], p.speedup,
                           blank(p.a["gflops"]), blank(p.b["gflops"]), blank(p.gflops_ratio),
                           blank(p.a["pct_peak"]), blank(p.b["pct_peak"]), p.change,
                           ab.status_text(p.a), ab.status_text(p.b)]
    empty = [""] * 8
    for row in comparison.only_a:
        yield base(row) + empty + ["only in A", ab.status_text(row), ""]
    for row in comparison.only_b:
        yield base(row) + empty + [f"only in {comparison.label}", "", ab.status_text(row)]
    for a, b in comparison.not_measured:
        yield base(a) + empty + ["not measured in both", ab.status_text(a), ab.status_text(b)]


def write_csv(path, comparisons):
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(CSV_HEADER)
        for comparison in comparisons:
            out.writerows(csv_rows(comparison))


# compare.png ----------------------------------------------------------------

def comparison_panels(comparison, plot):
    """One panel per thread count, shape family and element types: speed-up
    against n."""
    panels = []
    groups = {}
    for p in comparison.pairs:
        groups.setdefault((p.a["threads"], ab.family_of(p.a), ab.dtype_label(p.a)), []).append(p)
    for (threads, family, dtype), pairs in sorted(
            groups.items(), key=lambda kv: (kv[0][0], ab.family_sort_key(kv[0][1]),
                                            ab.dtype_sort_key(kv[0][2]))):
        types = "" if dtype == "f32" else f", {dtype}"
        series = []
        for variant in ab.variants_in([p.a for p in pairs]):
            vpairs = sorted((p for p in pairs if p.a["variant"] == variant),
                            key=lambda p: p.a["n_kv"])
            series.append(plot.Series(
                variant, [p.a["n_kv"] for p in vpairs], [p.speedup for p in vpairs],
                variant=variant,
                extra={"significant": [p.change in (FASTER, SLOWER) for p in vpairs]}))
        series.append(plot.reference("same speed", [p.a["n_kv"] for p in pairs], 1.0))
        panels.append(plot.Panel(
            f"{comparison.label} over A: {ab.family_label(family)}{types}, "
            f"{ab.plural_threads(threads)}",
            "keys n_kv", f"speed-up (time A / time {comparison.label})", series,
            xlog=True, ylog=True))
    return panels


def draw(out_dir, labels, results_list, comparisons):
    import plot  # matplotlib only when a picture is asked for

    panels = [p for c in comparisons for p in comparison_panels(c, plot)]
    if not panels:
        ab.note("no cell measured in two files: compare.png not drawn")
        return
    fig = plot.Plot("compare.png", "Speed-up over A (filled: beyond the run-to-run spread; "
                    "hollow: within it)", panels)
    subtitle = "\n".join(f"{label}: {ab.machine_title(res.meta)}"
                         for label, res in zip(labels, results_list))
    plot.render(fig, subtitle, os.path.join(out_dir, fig.filename), dpi=110)
    plot.write_json(os.path.join(out_dir, "compare.json"),
                    {"plots": {fig.filename: plot.plot_record(fig, subtitle)}, "rule": RULE})


# CLI ------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Compare attnbench matrix CSVs cell by cell against the first (A).",
        epilog=RULE)
    parser.add_argument("csv", nargs="+",
                        help="A.csv B.csv [C.csv ...]; FILE.meta.json beside each")
    parser.add_argument("-o", "--out", metavar="DIR",
                        help="also write compare.md, compare.csv, compare.png, compare.json here")
    args = parser.parse_args(argv)
    if len(args.csv) < 2:
        parser.error("give at least two CSV files to compare")
    if len(args.csv) > len(string.ascii_uppercase):
        parser.error(f"at most {len(string.ascii_uppercase)} files")
    return args


def main(argv=None):
    args = parse_args(argv)
    results_list = [ab.load_one(path) for path in args.csv]
    labels = list(string.ascii_uppercase[:len(results_list)])
    comparisons = [compare(results_list[0].rows, res.rows, label)
                   for label, res in zip(labels[1:], results_list[1:])]
    sys.stdout.write(render_text(labels, results_list, comparisons, markdown=False))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "compare.md"), "w", encoding="utf-8") as f:
            f.write(render_text(labels, results_list, comparisons, markdown=True))
        write_csv(os.path.join(args.out, "compare.csv"), comparisons)
        draw(args.out, labels, results_list, comparisons)
    return 0


if __name__ == "__main__":
    sys.exit(ab.run_cli(main))
