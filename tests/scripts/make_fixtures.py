"""Writes fixtures/matrix.csv and fixtures/matrix.meta.json: a synthetic but
realistic `attnbench matrix` result of a 2-core AVX-512 machine, in the
format of docs/results-format.md. Run it again only to change the fixture
(the output is deterministic); the lead may replace the files with a real
harness run.

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


HEADER = list(ab.COLUMN_NAMES)

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
        out.writerow(HEADER)
        for shape in SHAPES:
            for threads in THREADS:
                for variant in VARIANTS:
                    out.writerow(row(variant, shape, threads))
    with open(OUT_CSV[:-len(".csv")] + ".meta.json", "w") as f:
        json.dump(META, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
