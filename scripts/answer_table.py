#!/usr/bin/env python3
"""The "use this variant" table that opens a results page: per
shape class, head size d_k and thread count, the fastest variant that
passed, its % of roof, and its margin over the runner-up and over the best
peer library when peer rows exist.

    scripts/answer_table.py results/<slug>/matrix.csv     # the markdown, on stdout

report.py calls section_answer(rows) for the lines of its first section.
The shape classes are defined once, in SHAPE_CLASSES; the caption is
written from the same definitions, so the page says exactly what was
grouped.
"""

import math
import os
import sys
from collections import namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbench_csv as ab  # noqa: E402

# Rows of these variants, or with a `kind` column equal to "peer" (when the
# CSV has that column), are other libraries: compared against, never the
# answer.
PEER_VARIANTS = ("torch", "onnxruntime", "openvino")

SHORT_PREFILL_MAX_N = 1024
DECODE_MAX_N_Q = 16


def _prefill(row):
    return row["n_q"] == row["n_kv"]


# A row belongs to the first class whose test it passes; rows of no class
# (MHA decode, chunked prefill with n_q != n_kv) are not in the table.
ShapeClass = namedtuple("ShapeClass", "name rule test")
SHAPE_CLASSES = (
    ShapeClass("prefill short", f"n_q = n_kv ≤ {SHORT_PREFILL_MAX_N}, no mask",
               lambda r: _prefill(r) and not r["causal"] and r["n_kv"] <= SHORT_PREFILL_MAX_N),
    ShapeClass("prefill long", f"n_q = n_kv > {SHORT_PREFILL_MAX_N}, no mask",
               lambda r: _prefill(r) and not r["causal"] and r["n_kv"] > SHORT_PREFILL_MAX_N),
    ShapeClass("causal", "n_q = n_kv, causal mask, any n",
               lambda r: _prefill(r) and bool(r["causal"])),
    ShapeClass("GQA decode", f"n_q ≤ {DECODE_MAX_N_Q}, heads_kv < heads_q (GQA and MQA)",
               lambda r: r["n_q"] <= DECODE_MAX_N_Q and r["heads_kv"] < r["heads_q"]),
)

HEADER = ("shape class", "d_k", "threads", "use", "% of roof", "vs runner-up", "vs best peer",
          "shapes")


def shape_class_of(row):
    """The name of the row's class, or None."""
    for shape_class in SHAPE_CLASSES:
        if shape_class.test(row):
            return shape_class.name
    return None


def is_peer(row):
    return row["variant"] in PEER_VARIANTS or (row.get("kind") or "").strip() == "peer"


def _geomean(values):
    values = list(values)
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _margin(slower, faster):
    """Geometric mean over the shapes both measured of slower/faster
    median time (> 1: `faster` is faster); None when they share none."""
    common = sorted(set(slower) & set(faster))
    return _geomean(slower[s]["time_ns_median"] / faster[s]["time_ns_median"] for s in common)


def _peer_margin(peer, winner):
    """(geometric mean over the shapes both measured of the peer's time
    over the winner's, shapes compared from paired rounds, shapes in all);
    (None, 0, 0) when they share no shape. Per shape the ratio is
    attnbench_csv.peer_over's: from the rounds in which the peer alternated
    with the winner, as the rest of the page gives it, else the two
    medians timed apart."""
    common = sorted(set(peer) & set(winner))
    if not common:
        return None, 0, 0
    ratios = [ab.peer_over(peer[s], winner[s]) for s in common]
    return _geomean(r for r, _ in ratios), sum(paired for _, paired in ratios), len(common)


def _rank(timings, best_time):
    """Variants by the geometric mean of their time relative to the
    fastest row of each shape they measured; ties by the usual order."""
    def score(variant):
        by_shape = timings[variant]
        return _geomean(by_shape[s]["time_ns_median"] / best_time[s] for s in by_shape)
    return sorted(timings, key=lambda v: (score(v), ab.variant_sort_key(v)))


def _group_rows(rows):
    groups = {}
    for row in rows:
        name = shape_class_of(row)
        if name is not None:
            groups.setdefault((name, row["d_k"], row["threads"]), []).append(row)
    return groups


def answer_rows(rows):
    """One dict per (class, d_k, threads) with a passing variant: keys
    shape_class, d_k, threads, variant, pct_peak (median over its shapes),
    runner_up, margin, peer, peer_margin (None when absent), shapes,
    shapes_total. In the order of SHAPE_CLASSES, then d_k, then threads."""
    class_order = [c.name for c in SHAPE_CLASSES]
    answers = []
    # f32 rows only: a bf16 row is another question (results page, "Low
    # precision"), and would win an f32 cell it never ran.
    groups = _group_rows(ab.f32_rows(rows))
    for key in sorted(groups, key=lambda k: (class_order.index(k[0]), k[1], k[2])):
        group = groups[key]
        # A variant with a failed row in the group does not pass here.
        failed = {r["variant"] for r in group if ab.is_failed(r) and not is_peer(r)}
        ours, peers = {}, {}
        for r in group:
            if not (ab.is_ok(r) and ab.has_timing(r)):
                continue
            if is_peer(r):
                peers.setdefault(r["variant"], {})[ab.shape_of(r)] = r
            elif r["variant"] not in failed:
                ours.setdefault(r["variant"], {})[ab.shape_of(r)] = r
        if not ours:
            continue
        best_time = {}
        for by_shape in ours.values():
            for shape, r in by_shape.items():
                best_time[shape] = min(best_time.get(shape, math.inf), r["time_ns_median"])
        ranked = _rank(ours, best_time)
        winner = ours[ranked[0]]
        runner_up = ranked[1] if len(ranked) > 1 else None
        peer = None
        if peers:
            peer_best = {}
            for by_shape in peers.values():
                for shape, r in by_shape.items():
                    peer_best[shape] = min(peer_best.get(shape, math.inf), r["time_ns_median"])
            peer = _rank(peers, peer_best)[0]
        margin, paired, shapes = _peer_margin(peers[peer], winner) if peer else (None, 0, 0)
        pcts = sorted(r["pct_peak"] for r in winner.values() if ab.is_finite(r["pct_peak"]))
        shapes_total = {ab.shape_of(r) for r in group if not is_peer(r)}
        answers.append({
            "shape_class": key[0], "d_k": key[1], "threads": key[2], "variant": ranked[0],
            "pct_peak": _median(pcts),
            "above_roof": sum(ab.above_roof(r) for r in winner.values()),
            "runner_up": runner_up,
            "margin": _margin(ours[runner_up], winner) if runner_up else None,
            "peer": peer, "peer_margin": margin, "peer_paired": paired,
            "peer_shapes": shapes,
            "shapes": len(winner), "shapes_total": len(shapes_total),
        })
    return answers


def _median(sorted_values):
    n = len(sorted_values)
    if n == 0:
        return None
    mid = n // 2
    return sorted_values[mid] if n % 2 else 0.5 * (sorted_values[mid - 1] + sorted_values[mid])


def _times(value, name):
    if value is None:
        return "–"
    return f"{ab.fmt_num(value)}× ({name})"


def _peer_times(a):
    """The peer margin, saying when it is not (all) from paired rounds."""
    if a["peer_margin"] is None:
        return "–"
    if a["peer_paired"] == a["peer_shapes"]:
        how = ""
    elif a["peer_paired"] == 0:
        how = ", unpaired"
    else:
        how = f", {a['peer_paired']} of {a['peer_shapes']} shapes paired"
    return f"{ab.fmt_num(a['peer_margin'])}× ({a['peer']}{how})"


def caption():
    classes = "; ".join(f"**{c.name}**: {c.rule}" for c in SHAPE_CLASSES)
    return ("For each shape class, head size and thread count, in f32: the variant to use — "
            "the one with the lowest geometric mean of its median time relative to the fastest "
            "variant on each shape of the class, among variants with no failed row there "
            f"(status ok). Classes: {classes}; other shapes are not in this table. "
            "`% of roof` is that variant's median `pct_peak` over the class's shapes (each "
            "row against the roof of its `limit`: the FMA peak for prefill and for decode "
            "whose flops bind, as MQA's do, the read bandwidth for the rest of decode). "
            "`vs runner-up` and `vs best peer` "
            "are geometric means, over the shapes both measured, of the other's median time "
            "divided by this one's (> 1× means the chosen variant is faster); peers are "
            f"{', '.join(PEER_VARIANTS)} (or rows of kind `peer`), shown only where they ran. "
            "`vs best peer` takes each shape's ratio from the rounds in which the peer "
            "alternated with the chosen variant (the peer row's `paired_time_ns_median`, its "
            "`paired_variant` being the chosen one), as the sections below do; where the peer "
            "alternated with another variant or with none, the ratio of the two medians, "
            "timed apart, stands in and the cell says `unpaired` (or how many shapes were "
            "paired). "
            "`shapes`: how many of the class's shapes the chosen variant measured. The "
            "details follow below.")


def _pct(a):
    """The class's median % of roof, saying how many of its rows beat their roof."""
    above = f" ({a['above_roof']} above the roof)" if a["above_roof"] else ""
    return ab.fmt_num(a["pct_peak"]) + above


def table_lines(rows):
    """The markdown table (caption first) as a list of lines."""
    answers = answer_rows(rows)
    if not answers:
        return [caption(), "", "No passing rows in any shape class."]
    table = [[a["shape_class"], a["d_k"], a["threads"], f"**{a['variant']}**",
              _pct(a), _times(a["margin"], a["runner_up"]),
              _peer_times(a), f"{a['shapes']}/{a['shapes_total']}"]
             for a in answers]
    return [caption(), ""] + ab.format_table(HEADER, table, markdown=True).splitlines()


def section_answer(rows):
    """report.py's first section: a heading and the table."""
    return ["## Use this variant", ""] + table_lines(rows)


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(
        description="Print the 'use this variant' table (markdown) of attnbench matrix CSV(s).")
    parser.add_argument("csv", nargs="+", help="matrix CSV(s); FILE.meta.json beside each")
    args = parser.parse_args(argv)
    print("\n".join(section_answer(ab.load(args.csv).rows)))
    return 0


if __name__ == "__main__":
    sys.exit(ab.run_cli(main))
