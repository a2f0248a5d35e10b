/* The performance targets, judged on matrix rows (--preset
 * perf-targets), using the best of the fused variants avx512, xsmm, avx2
 * and stream for each row:
 *   prefill n=4096 h8 d128 >= 80% of FMA peak, d64 >= 70% (all threads)
 *   >= 2.5x blas at d64, >= 1.8x at d128 (same shape and threads)
 *   causal >= 1.8x faster than non-causal (n=4096 h8, d128 and d64)
 *   decode 1 x 32768 Hq32/Hkv8 d128 >= 80% of measured read bandwidth
 *   single-thread prefill d128 >= 80%, d64 >= 70% of the 1-thread peak
 * and in low precision (each the fastest fused variant in the type, against
 * that variant's own f32 row of the same shape and threads):
 *   decode 1 x 32768 Hq32/Hkv8 d128 with an f16 and a bf16 KV cache
 *   (f16kv, bf16kv) >= 1.8x the f32 speed and >= 90% of the read roof,
 *   the bytes counted at their types' sizes
 *   prefill n=4096 h8 d128 in bf16 and f16 >= 1.0x the f32 speed
 * Every f32 target reads only the rows whose types are all f32. */
#ifndef ATTN_PERF_TARGETS_H
#define ATTN_PERF_TARGETS_H

#include <stdio.h>

#include "results_csv.h"

/* Prints one line per target: ✓ or ✗ (or "-" when its rows are missing
 * or not ok), the achieved figure, the variant and the target. `all` is
 * the all-threads count. Returns how many targets were met; *evaluated
 * gets how many had the rows to judge. */
int attn_perf_targets_report(FILE *f, const attn_result_row *rows, int n_rows, int all,
                             int *evaluated);

#endif
