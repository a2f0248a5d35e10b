/* The performance targets, judged on the rows of one matrix run (--preset
 * perf-targets; "fused": the online-softmax variants of the table, the
 * fastest of them per row unless a target names one; all threads unless
 * said):
 *   prefill n=4096 h8 d128 >= 85% of the FMA roof, d64 >= 80%
 *   the same at 1 thread, against the 1-thread roof: >= 85% / 80%
 *   every fused variant causal >= 1.9x faster than its own non-causal, in
 *   its own types (n=4096 h8, d128 and d64)
 *   every fused variant at 2 threads >= 1.9x its own 1-thread speed
 *   (n=4096 h8 non-causal, d128 and d64)
 *   faster than blas on every prefill shape perf-targets and quick time
 *   (n 128..4096, d64/d128, causal on/off)
 *   decode 1 x 4096..32768, Hq32/Hkv8 and Hq32/Hkv32, d128 >= 90% of the
 *   read roof
 *   xsmm's softmax calls a vector exp on this CPU, not glibc's expf
 * and, on a CPU that runs AVX-512 and AVX2 (pk, the run's start peak,
 * has both roofs; NULL: not judged), the AVX2 family's fused variants
 * against their own FMA roof (the same 85 % / 80 %, at all threads and 1)
 * and the read roof (the same decode shapes, >= 90 %)
 * against the frameworks (rows of matrix --peers: attnbench's fastest
 * variant against the fastest peer, from the rounds the two alternated):
 *   >= 1.2x on every prefill shape of perf-targets and quick with n >= 512
 *   >= 3x on every decode shape above
 * and in low precision (each the fastest fused variant in the type, against
 * that variant's own f32 row of the same shape and threads):
 *   decode 1 x 32768 Hq32/Hkv8 d128 with an f16 and a bf16 KV cache
 *   (f16kv, bf16kv) >= 1.8x the f32 speed and >= 90% of the read roof,
 *   the bytes counted at their types' sizes
 *   prefill n=4096 h8 d128 in bf16 and f16 >= 1.0x the f32 speed
 * Every f32 target reads only the rows whose types are all f32. A target
 * against a roof that some row of the run exceeded gets no verdict. */
#ifndef ATTN_PERF_TARGETS_H
#define ATTN_PERF_TARGETS_H

#include <stdio.h>

#include "peak.h"
#include "results_csv.h"

/* Prints one line per target: ✓ or ✗ (or "-" when its rows are missing
 * or not ok, "!" when its roof was exceeded), the achieved figure with
 * what was compared, and the target. `all` is the all-threads count.
 * Returns how many targets were met; *evaluated gets how many had the rows
 * to judge. */
int attn_perf_targets_report(FILE *f, const attn_result_row *rows, int n_rows, int all,
                             const attn_peak *pk, int *evaluated);

#endif
