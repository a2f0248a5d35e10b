#!/usr/bin/env python3
"""Checks the files bench, peak and matrix write, for ctest.

  bench_check.py csv FILE.csv DOC.md     every column of docs/results-format.md, sane values
  bench_check.py meta FILE.meta.json     the sidecar's keys and peak figures
  bench_check.py peak FILE.json          a `peak --out` file: positive figures
  bench_check.py bench FILE.json         Google Benchmark JSON with our counters
  bench_check.py same-keys A.csv B.csv   same (case, threads) set, no duplicates
  bench_check.py whole-rows FILE.csv     ends with a newline; every row has every column
  bench_check.py limit FILE.csv TEXT LIMIT   the rows whose case holds TEXT have that limit
  bench_check.py paired-roofs FILE.csv   every paired decode row's two roofs are its own

Prints what it checked; exits 1 with the reasons on any failure.
"""
import csv
import json
import math
import re
import sys

failures = []


def fail(msg):
    failures.append(msg)


def doc_columns(doc_path):
    """Column names in the order of the Columns table of results-format.md."""
    names, in_table = [], False
    for line in open(doc_path, encoding="utf-8"):
        if line.startswith("## Columns"):
            in_table = True
        elif line.startswith("## ") and in_table:
            break
        elif in_table and line.startswith("| `"):
            first_cell = line.split("|")[1]
            names += re.findall(r"`([^`]+)`", first_cell)
    return names


def number(row, key, allow_empty=False):
    text = row[key]
    if text == "":
        if not allow_empty:
            fail(f"{row['case']} threads={row['threads']}: {key} is empty")
        return None
    try:
        return float(text)
    except ValueError:
        fail(f"{row['case']}: {key}='{text}' is not a number")
        return None


SHAPE_KEYS = [("batch", "B"), ("heads_q", "Hq"), ("heads_kv", "Hkv"), ("n_q", "nq"),
              ("n_kv", "nkv"), ("d_k", "dk"), ("d_v", "dv"), ("causal", "causal")]


def check_pair(row, name):
    """A row timed with its twin names it whole: the same variant and shape
    at 1 thread (the row at 2 or more), in f32 (the row in other types), or
    without the causal mask (a causal row);
    a row timed alone has all four paired columns empty."""
    keys = ("paired_variant", "paired_time_ns_median", "paired_case", "paired_threads")
    have = [bool(row[k]) for k in keys]
    if not any(have):
        return False
    if not all(have):
        fail(f"{name}: paired columns partly empty: {[row[k] for k in keys]}")
        return False
    if number(row, "paired_time_ns_median") <= 0:
        fail(f"{name}: paired_time_ns_median {row['paired_time_ns_median']}")
    if row["paired_variant"] != row["variant"]:
        fail(f"{name}: paired with variant {row['paired_variant']}, not itself")
    f32_case = row["case"].split(",q=")[0]
    same_threads = int(row["paired_threads"]) == int(row["threads"])
    one_thread = (int(row["paired_threads"]) == 1 and int(row["threads"]) > 1
                  and row["paired_case"] == row["case"])
    in_f32 = same_threads and f32_case != row["case"] and row["paired_case"] == f32_case
    non_causal = (same_threads and ",causal=1" in row["case"]
                  and row["paired_case"] == row["case"].replace(",causal=1", ",causal=0"))
    if not (one_thread or in_f32 or non_causal):
        fail(f"{name}: paired with {row['paired_case']} at {row['paired_threads']} threads: "
             "neither its 1-thread twin, its f32 twin nor its non-causal twin")
    return True


def roof_flag_contradicts(pct, exceeded):
    """roof_exceeded is judged on the unrounded ratio and pct_peak printed
    to 4 significant digits (%.4g): a row 0.04 % over its roof reads 100 (a
    CI run under load had one). Only a printed value past that rounding
    contradicts the flag."""
    return (pct > 100.05 and not exceeded) or (pct < 99.95 and exceeded)


def check_ok_row(row):
    name = f"{row['case']} threads={row['threads']}"
    t_med, t_min, t_max = (number(row, k) for k in ("time_ns_median", "time_ns_min", "time_ns_max"))
    if None not in (t_med, t_min, t_max) and not 0 < t_min <= t_med <= t_max:
        fail(f"{name}: times not 0 < min {t_min} <= median {t_med} <= max {t_max}")
    reps = number(row, "repetitions")
    if reps is not None and (reps < 1 or reps != int(reps)):
        fail(f"{name}: repetitions {reps}")
    for key in ("gflops", "gbytes_per_s", "peak_gflops", "peak_gbytes_per_s", "pct_peak"):
        x = number(row, key)
        if x is not None and not (x > 0 and math.isfinite(x)):
            fail(f"{name}: {key} = {x} is not positive")
    for key in ("max_err_u", "max_err_d_u", "bound_u", "nmse"):
        x = number(row, key)
        if x is not None and not (math.isfinite(x) and x >= 0):
            fail(f"{name}: {key} = {x} is not finite and >= 0")
    ws = number(row, "workspace_bytes")
    if ws is not None and ws < 0:
        fail(f"{name}: workspace_bytes {ws}")
    g, p = number(row, "gflops"), number(row, "peak_gflops")
    b, pb = number(row, "gbytes_per_s"), number(row, "peak_gbytes_per_s")
    pct = number(row, "pct_peak")
    # The roofline's side: prefill against the compute roof; decode against
    # the read roof unless its flops a byte (gflops / GB/s of one timing)
    # stand above the ridge of its two roof columns, which are both the
    # run's or both measured beside it (a decode row's side is settled from
    # its paired roofs). Asserted where the side is clear by 1 %: the
    # columns are printed to 6 digits.
    if int(row["n_q"]) > 16 and row["limit"] != "fma":
        fail(f"{name}: limit {row['limit']}, want fma (prefill)")
    if int(row["n_q"]) <= 16 and None not in (g, p, b, pb):
        intensity, ridge = g / b, p / pb
        clear = "bandwidth" if intensity < ridge / 1.01 else "fma" if intensity > ridge * 1.01 else None
        if clear and row["limit"] != clear:
            fail(f"{name}: limit {row['limit']}, want {clear} ({intensity:.3g} flops a byte, "
                 f"ridge {ridge:.3g})")
    bandwidth = row["limit"] == "bandwidth"
    if None not in (g, p, b, pb, pct):
        want = 100 * (b / pb if bandwidth else g / p)
        if abs(pct - want) > 0.01 * want + 0.01:
            fail(f"{name}: pct_peak {pct} but 100 x rate/peak = {want:.4g}")
        if roof_flag_contradicts(pct, row["roof_exceeded"] == "1"):
            fail(f"{name}: pct_peak {pct} but roof_exceeded {row['roof_exceeded']}")


def cmd_csv(path, doc):
    want = doc_columns(doc)
    if len(want) < 20:
        fail(f"could not read the column list from {doc} (got {want})")
    with open(path, newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    if not lines:
        fail(f"{path} is empty")
        return
    if lines[0] != want:
        fail(f"header differs from {doc}:\n  got  {lines[0]}\n  want {want}")
    rows = []
    for i, fields in enumerate(lines[1:], start=2):
        if len(fields) != len(want):
            fail(f"{path} line {i}: {len(fields)} fields, want {len(want)}")
            continue
        rows.append(dict(zip(want, fields)))
    if not rows:
        fail(f"{path} has no rows")
    counts = {"ok": 0, "skipped": 0, "types": 0, "paired": 0}
    for row in rows:
        name = f"{row['case']} threads={row['threads']}"
        if not row["case"].startswith(f"impl={row['variant']},"):
            fail(f"{name}: case does not name variant {row['variant']}")
        for key, short in SHAPE_KEYS:
            if f"{short}={row[key]}" not in row["case"].split(","):
                fail(f"{name}: column {key}={row[key]} not in the case name")
        if int(row["threads"]) < 1:
            fail(f"{name}: threads {row['threads']}")
        status, reason = row["status"], row["reason"]
        if row["kind"] != "variant":
            fail(f"{name}: kind '{row['kind']}' in a matrix of variants")
        if row["roof_exceeded"] not in ("0", "1"):
            fail(f"{name}: roof_exceeded '{row['roof_exceeded']}' is not 0 or 1")
        if status == "ok":
            counts["ok"] += 1
            counts["paired"] += check_pair(row, name)
            check_ok_row(row)
            if reason:
                fail(f"{name}: an ok row with a reason '{reason}'")
        elif status == "skipped" and (reason.startswith("needs ") or
                                      re.match(r"variant \S+ does not take types\.", reason)):
            # The CPU lacks the ISA, or the variant does not take the
            # cell's element types (avx512_bf16 in an f32 cell).
            counts["skipped" if reason.startswith("needs ") else "types"] += 1
            if row["time_ns_median"] != "":
                fail(f"{name}: a skipped row has timings")
        else:
            fail(f"{name}: status '{status}', reason '{reason}'")
    # The test preset times its first shape's all-thread cell with its
    # 1-thread twin: a run on 2 or more threads has such rows.
    if any(int(r["threads"]) > 1 for r in rows) and counts["paired"] == 0:
        fail(f"{path}: rows at 2 or more threads but none timed with its twin")
    print(f"{path}: {len(rows)} rows ({counts['paired']} timed with a twin), "
          f"{counts['ok']} ok, {counts['skipped']} skipped "
          f"(CPU lacks the ISA), {counts['types']} skipped (variant does not take "
          f"the types); {len(want)} columns as in {doc}")


def peak_object_ok(peak, where):
    for key in ("fma_gflops", "exp_gelem_per_s", "read_gbytes_per_s", "triad_gbytes_per_s"):
        if key not in peak:
            fail(f"{where}: no {key}")
    fma = peak.get("fma_gflops", {})
    if "scalar" not in fma:
        fail(f"{where}: no scalar FMA figure")
    for isa, per_threads in fma.items():
        for threads, x in per_threads.items():
            if not (int(threads) >= 1 and x > 0):
                fail(f"{where}: fma {isa} at {threads} threads = {x}")
    for key in ("read_gbytes_per_s", "triad_gbytes_per_s"):
        for threads, x in peak.get(key, {}).items():
            if not x > 0.5:
                fail(f"{where}: {key} at {threads} threads = {x} (implausible)")
    # The BLAS's sgemm, a reference beside the FMA roof: positive, named.
    for threads, x in peak.get("sgemm_gflops", {}).items():
        if not (int(threads) >= 1 and x > 0.5):
            fail(f"{where}: sgemm at {threads} threads = {x}")
    if peak.get("sgemm_gflops") and not peak.get("sgemm_library", "").startswith("OpenBLAS "):
        fail(f"{where}: sgemm_library '{peak.get('sgemm_library')}' does not name the BLAS")
    return peak


def cmd_peak(path):
    peak = peak_object_ok(json.load(open(path, encoding="utf-8")), path)
    # `attnbench peak` measures the BLAS's sgemm at every thread count.
    if sorted(peak.get("sgemm_gflops", {})) != sorted(peak["fma_gflops"]["scalar"]):
        fail(f"{path}: sgemm_gflops at {sorted(peak.get('sgemm_gflops', {}))}, "
             f"want every thread count {sorted(peak['fma_gflops']['scalar'])}")
    print(f"{path}: peak figures present and positive")


def cmd_meta(path):
    meta = json.load(open(path, encoding="utf-8"))
    for key in ("cpu_model", "cpu_slug", "cpu_vendor", "cpu_family", "cpu_model_id",
                "cpu_stepping", "cpu_uarch", "cpu_isa", "features_detected", "features_used",
                "cpu_mask", "cores", "threads_max", "cache", "compiler", "c_flags", "build_type",
                "libraries", "date", "preset", "peak", "roof_exceeded"):
        if key not in meta:
            fail(f"{path}: no {key}")
    if "benchmark" not in meta.get("libraries", {}):
        fail(f"{path}: libraries lack benchmark")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta.get("date", "")):
        fail(f"{path}: date {meta.get('date')} is not ISO 8601 UTC")
    peak_object_ok(meta.get("peak", {}), path)
    print(f"{path}: metadata complete")


def cmd_bench(path):
    data = json.load(open(path, encoding="utf-8"))
    runs = [b for b in data.get("benchmarks", []) if b.get("run_type") == "iteration"]
    if not runs:
        fail(f"{path}: no benchmark runs")
    for b in runs:
        name = b["name"]
        if not re.match(r"impl=\w+,B=\d+,Hq=\d+,Hkv=\d+,nq=\d+,nkv=\d+,dk=\d+,dv=\d+,causal=[01]"
                        r"/threads:\d+/real_time$", name):
            fail(f"{path}: benchmark name '{name}' is not canonical")
        if b.get("error_occurred"):
            fail(f"{name}: {b.get('error_message')}")
            continue
        for key in ("GFLOP/s", "GB/s", "pct_peak"):
            if not b.get(key, 0) > 0:
                fail(f"{name}: counter {key} = {b.get(key)}")
    print(f"{path}: {len(runs)} benchmark runs with GFLOP/s, GB/s and pct_peak")


def keys_of(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    keys = [(r["case"], r["threads"]) for r in rows]
    if len(keys) != len(set(keys)):
        dups = sorted({k for k in keys if keys.count(k) > 1})
        fail(f"{path}: duplicate rows {dups[:3]}")
    return set(keys)


def cmd_same_keys(a, b):
    ka, kb = keys_of(a), keys_of(b)
    if ka != kb:
        fail(f"{a} and {b} differ: only in {a}: {sorted(ka - kb)[:3]}; "
             f"only in {b}: {sorted(kb - ka)[:3]}")
    print(f"{a} and {b}: the same {len(ka)} (case, threads) keys, no duplicates")


def cmd_whole_rows(path):
    data = open(path, "rb").read()
    if not data.endswith(b"\n"):
        fail(f"{path} does not end with a newline: a partial row")
    with open(path, newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    width = len(lines[0]) if lines else 0
    bad = [i + 1 for i, fields in enumerate(lines) if len(fields) != width]
    if bad:
        fail(f"{path}: lines {bad[:5]} lack columns")
    print(f"{path}: {len(lines) - 1} whole rows")


def cmd_limit(path, text, want):
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if text in r["case"]]
    if not rows:
        fail(f"{path}: no row's case holds {text}")
    for r in rows:
        if r["limit"] != want:
            fail(f"{r['case']} threads={r['threads']}: limit {r['limit']}, want {want}")
    print(f"{path}: {len(rows)} rows holding {text}, limit {want}")


def cmd_paired_roofs(path):
    """A decode row judged against roofs timed beside it has both of them
    so (matrix_row_probes): neither roof column is a figure of the run's
    peak (the sidecar), which the side would otherwise be chosen from."""
    meta_path = path[:-4] + ".meta.json" if path.endswith(".csv") else path + ".meta.json"
    with open(meta_path, encoding="utf-8") as f:
        peak = json.load(f)["peak"]
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f)
                if int(r["n_q"]) <= 16 and r["status"] == "ok" and r["roof_source"] == "paired"]
    if not rows:
        fail(f"{path}: no paired decode row")
    for r in rows:
        t = r["threads"]
        computes = {float(by_t[t]) for table in ("fma_gflops", "bf16_gflops")
                    for by_t in peak.get(table, {}).values() if t in by_t}
        gflops, gbs = number(r, "peak_gflops"), number(r, "peak_gbytes_per_s")
        if gflops is None or gflops in computes:
            fail(f"{r['case']} threads={t}: peak_gflops {r['peak_gflops']} is the run's")
        if gbs is None or gbs == peak.get("read_gbytes_per_s", {}).get(t):
            fail(f"{r['case']} threads={t}: peak_gbytes_per_s {r['peak_gbytes_per_s']} is the run's")
    print(f"{path}: {len(rows)} paired decode rows, both roofs their own")


def main(argv):
    commands = {"csv": (cmd_csv, 2), "meta": (cmd_meta, 1), "peak": (cmd_peak, 1),
                "bench": (cmd_bench, 1), "same-keys": (cmd_same_keys, 2),
                "whole-rows": (cmd_whole_rows, 1), "limit": (cmd_limit, 3),
                "paired-roofs": (cmd_paired_roofs, 1)}
    if len(argv) < 2 or argv[1] not in commands or len(argv) - 2 != commands[argv[1]][1]:
        print(__doc__)
        return 2
    fn, _ = commands[argv[1]]
    try:
        fn(*argv[2:])
    except (OSError, ValueError, KeyError) as e:
        fail(f"{type(e).__name__}: {e}")
    for f in failures[:20]:
        print("FAILED:", f)
    print(f"{1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
