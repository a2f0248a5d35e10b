"""Writes fixtures/matrix.csv and fixtures/matrix.meta.json: a synthetic but
realistic `attnbench matrix` result of a 2-core AVX-512 machine, in the
format of docs/results-format.md as it was before the element-type columns
(q_dtype, kv_dtype, o_dtype): so it is also the old-format file the scripts
must read as all f32. And fixtures/matrix_dtypes.csv (+ .meta.json): the
perf-targets shapes of the same machine in f32, bf16, f16, f16kv and
bf16kv, with every column, one failed bf16 row among them. Run it again only
to change the fixtures (the output is deterministic); the lead may replace
the files with a real harness run.

    python3 tests/scripts/make_fixtures.py
"""

import csv
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attnbench_csv as ab  # noqa: E402

OUT_CSV = os.path.join(HERE, "fixtures", "matrix.csv")
OUT_DTYPES_CSV = os.path.join(HERE, "fixtures", "matrix_dtypes.csv")

PEAK_FMA = {
    "scalar": {1: 9.8, 2: 19.5},
    "avx2": {1: 78.4, 2: 155.9},
    "avx512": {1: 152.3, 2: 301.7},
}
PEAK_READ = {1: 20.1, 2: 30.2}

# name: (fraction of the AVX-512 FMA peak at large n, n at half that,
#        fraction of read bandwidth when decoding, thread speed-up at 2,
#        c_exp ulps, keys per rescale block or 0, E_M / sqrt(n) in u)
VARIANTS = {
    "naive":   (0.012, 64, 0.15, 1.00, 1, 0, 0.12),
    "blocked": (0.045, 96, 0.35, 1.85, 1, 64, 0.15),
    "stream":  (0.050, 96, 0.60, 1.85, 2, 1, 0.25),
    "avx2":    (0.300, 160, 0.70, 1.88, 3, 128, 0.20),
    "avx512":  (0.550, 256, 0.78, 1.90, 3, 128, 0.20),
    "xsmm":    (0.620, 320, 0.70, 1.86, 4, 64, 0.22),
    "blas":    (0.500, 640, 0.55, 1.70, 1, 0, 0.30),
}

# (batch, heads_q, heads_kv, n_q, n_kv, d, causal)
SHAPES = (
    [(1, 8, 8, n, n, 64, 0) for n in (128, 256, 512, 1024, 2048)]
    + [(1, 8, 8, n, n, 128, 0) for n in (128, 256, 512, 1024, 2048)]
    + [(1, 32, 8, n, n, 128, 1) for n in (256, 1024, 2048)]
    + [(1, 32, 8, 1, n, 128, 1) for n in (1024, 4096)]  # decode
)
THREADS = (1, 2)


def keys_seen_total(n_q, n_kv, causal):
    if not causal:
        return n_q * n_kv
    # Bottom-right aligned mask: row i sees i + n_kv - n_q + 1 keys.
    return sum(max(0, min(n_kv, i + n_kv - n_q + 1)) for i in range(n_q))


def measure(variant, shape, threads, rng):
    batch, hq, hkv, n_q, n_kv, d, causal = shape
    frac, n_half, bw_frac, scale2, _, _, _ = VARIANTS[variant]
    flops = 2 * (d + d) * keys_seen_total(n_q, n_kv, causal) * hq * batch
    nbytes = 4 * batch * (2 * hq * n_q * d + 2 * hkv * n_kv * d)
    speedup = scale2 if threads == 2 else 1.0
    jitter = rng.uniform(0.97, 1.03)
    if n_q <= 16:
        limit = "bandwidth"
        gbs = bw_frac * PEAK_READ[threads] * jitter * (0.9 if threads == 2 else 1.0)
        median = nbytes / gbs
    else:
        limit = "fma"
        eff = frac * n_kv / (n_kv + n_half) * (0.85 if d == 64 else 1.0) * (0.9 if causal else 1.0)
        if variant == "naive" and n_kv > 1024:
            eff *= 0.7  # the n x n score matrix leaves L2
        median = flops / (eff * PEAK_FMA["avx512"][1] * speedup * jitter)
    return flops, nbytes, limit, median


def accuracy(variant, shape, rng):
    _, _, _, n_q, n_kv, d, _ = shape
    _, _, _, _, c_exp, kv_block, k_err = VARIANTS[variant]
    rescales = 0 if kv_block == 0 else math.ceil(n_kv / kv_block)
    bound = 3 * n_kv + 2 * c_exp + 3 * rescales + 8 + 0.02 * (d + 2)
    err_m = (k_err * math.sqrt(n_kv) + 0.5) * rng.uniform(0.85, 1.15)
    err_d = err_m * rng.uniform(0.5, 0.7)
    nmse = (err_m * 2.0**-24) ** 2 * rng.uniform(0.2, 0.4)
    return err_m, err_d, bound, nmse


def workspace(variant, shape, threads):
    _, hq, _, n_q, n_kv, d, _ = shape
    per_thread = {
        "naive": n_q * n_kv, "blocked": 64 * 64 + 2 * 64, "stream": 2 * d,
        "avx2": 128 * 8 + 2 * d, "avx512": 128 * 16 + 2 * d, "xsmm": 64 * 64 + 64 * d,
        "blas": min(n_q, 256) * n_kv,
    }[variant]
    return 4 * per_thread * (1 if variant == "naive" else threads)


def row(variant, shape, threads):
    batch, hq, hkv, n_q, n_kv, d, causal = shape
    rng = random.Random(f"{variant}{shape}{threads}")
    acc_rng = random.Random(f"{variant}{shape}")  # accuracy does not depend on threads
    flops, nbytes, limit, median = measure(variant, shape, threads, rng)
    lo, hi = median * rng.uniform(0.97, 0.995), median * rng.uniform(1.01, 1.08)
    gflops, gbs = flops / median, nbytes / median
    peak_f, peak_b = PEAK_FMA["avx512"][threads], PEAK_READ[threads]
    pct = 100 * (gflops / peak_f if limit == "fma" else gbs / peak_b)
    err_m, err_d, bound, nmse = accuracy(variant, shape, acc_rng)
    case = (f"impl={variant},B={batch},Hq={hq},Hkv={hkv},nq={n_q},nkv={n_kv},dk={d},dv={d},"
            f"causal={causal}")
    return [case, variant, "variant", batch, hq, hkv, n_q, n_kv, d, d, causal, threads,
            f"{median:.1f}", f"{lo:.1f}", f"{hi:.1f}", max(5, min(100, round(2e8 / median))),
            f"{gflops:.4f}", f"{gbs:.4f}", limit, f"{peak_f:.1f}", f"{peak_b:.1f}", f"{pct:.3f}",
            int(pct > 100), workspace(variant, shape, threads), f"{err_m:.4g}", f"{err_d:.4g}",
            f"{bound:.6g}", f"{nmse:.3e}", "", "", "", "", "ok", ""]


# matrix.csv's header: the columns before element types were one.
LEGACY_HEADER = [name for name in ab.COLUMN_NAMES if name not in ab.DTYPE_COLUMNS]
HEADER = list(ab.COLUMN_NAMES)

# (--dtype name, q, kv, o): the types of matrix_dtypes.csv beside f32.
DTYPE_SHAPES = (
    ((1, 8, 8, 4096, 4096, 128, 0), (("bf16", "bf16", "bf16"), ("f16", "f16", "f16"))),
    ((1, 32, 8, 1, 32768, 128, 0), (("f32", "f16", "f32"), ("f32", "bf16", "f32"))),
)
DTYPE_VARIANTS = ("stream", "avx2", "avx512", "blas")
SIZE = {"f32": 4, "f16": 2, "bf16": 2}
# Time in the type over time in f32, per variant: prefill (compute-bound,
# the fused kernels widen a block at a time; blas pays the dispatcher's
# widening) and decode (a narrow cache moves half the K/V bytes).
PREFILL_TIME_RATIO = {"stream": 1.04, "avx2": 1.02, "avx512": 0.97, "blas": 1.09}
DECODE_ROOF_FRACTION = {"stream": 0.62, "avx2": 0.91, "avx512": 0.94, "blas": 0.50}
# E_M in the type over E_M in f32: an f16/bf16 O is rounded to 2^-11 / 2^-8.
ERROR_SCALE = {"f32": 1.0, "f16": 3000.0, "bf16": 25000.0}


def typed_row(variant, shape, threads, types):
    """A row of matrix_dtypes.csv as a dict: the f32 row of the cell,
    re-timed and re-judged for `types`."""
    record = dict(zip(LEGACY_HEADER, row(variant, shape, threads)))
    record.update(zip(ab.DTYPE_COLUMNS, types))
    if types == ab.ALL_F32:
        return record
    batch, hq, hkv, n_q, n_kv, d, _ = shape
    q_t, kv_t, o_t = types
    record["case"] += f",q={q_t},kv={kv_t},o={o_t}"
    nbytes = batch * (SIZE[q_t] * hq * n_q * d + SIZE[kv_t] * 2 * hkv * n_kv * d
                      + SIZE[o_t] * hq * n_q * d)
    median = float(record["time_ns_median"])
    if record["limit"] == "bandwidth":
        median = nbytes / (DECODE_ROOF_FRACTION[variant] * PEAK_READ[threads])
    else:
        median *= PREFILL_TIME_RATIO[variant]
    flops = float(record["gflops"]) * float(record["time_ns_median"])
    gbs = nbytes / median
    record.update({
        "time_ns_median": f"{median:.1f}", "time_ns_min": f"{0.98 * median:.1f}",
        "time_ns_max": f"{1.04 * median:.1f}", "gflops": f"{flops / median:.4f}",
        "gbytes_per_s": f"{gbs:.4f}",
        "pct_peak": f"{100 * (gbs / PEAK_READ[threads] if record['limit'] == 'bandwidth' else flops / median / PEAK_FMA['avx512'][threads]):.3f}",
        "max_err_u": f"{float(record['max_err_u']) * ERROR_SCALE[o_t]:.4g}",
        "max_err_d_u": f"{float(record['max_err_d_u']) * ERROR_SCALE[o_t]:.4g}",
        "bound_u": f"{float(record['bound_u']) * ERROR_SCALE[o_t] * 1.5:.6g}",
    })
    if variant == "stream" and types == ("bf16", "bf16", "bf16"):
        record.update({"status": "failed",
                       "reason": "rule A at b=0,h=1,i=3,c=7: |err| 3.1e-2 > bound 2.2e-2"})
    return record

META = {
    "cpu_model": "Intel(R) Xeon(R) Processor", "cpu_slug": "intel-xeon-sapphirerapids-2c",
    "features_detected": "sse4.2 avx avx2 fma f16c avx512f avx512dq avx512bw avx512vl",
    "features_used": "sse4.2 avx avx2 fma f16c avx512f avx512dq avx512bw avx512vl",
    "cpu_mask": "", "cores": 2, "threads_max": 2,
    "cache": {"l1d_bytes": 49152, "l2_bytes": 2097152, "l3_bytes": 110100480},
    "compiler": "GNU 12.2.0", "c_flags": "-O3 -DNDEBUG -fno-math-errno", "build_type": "Release",
    "libraries": {"openblas": "0.3.21", "libxsmm": "1.17", "benchmark": "1.7.1"},
    "date": "2026-11-30T01:23:45Z", "preset": "quick",
    "peak": {
        "fma_gflops": {isa: {str(t): v for t, v in by_t.items()} for isa, by_t in PEAK_FMA.items()},
        "exp_gelem_per_s": {"avx2": {"1": 1.7, "2": 3.3}, "avx512": {"1": 3.1, "2": 6.1}},
        "read_gbytes_per_s": {str(t): v for t, v in PEAK_READ.items()},
        "triad_gbytes_per_s": {"1": 15.0, "2": 22.0},
    },
}


def main():
    os.makedirs(os.path.dirname(OUT_CSV), exist_ok=True)
    with open(OUT_CSV, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(LEGACY_HEADER)
        for shape in SHAPES:
            for threads in THREADS:
                for variant in VARIANTS:
                    out.writerow(row(variant, shape, threads))
    with open(OUT_CSV[:-len(".csv")] + ".meta.json", "w") as f:
        json.dump(META, f, indent=2)
        f.write("\n")
    with open(OUT_DTYPES_CSV, "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=HEADER, lineterminator="\n")
        out.writeheader()
        for shape, low in DTYPE_SHAPES:
            for variant in DTYPE_VARIANTS:
                for types in (ab.ALL_F32,) + low:
                    out.writerow(typed_row(variant, shape, 2, types))
    with open(OUT_DTYPES_CSV[:-len(".csv")] + ".meta.json", "w") as f:
        json.dump(dict(META, preset="perf-targets"), f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
