/* flash_avx2_decode_plan.h — the avx2 decode kernel's plan of a key block's
 * P·V (flash_avx2_decode.c): its column passes, and the lines of the next
 * block's V each pass asks for. Pure arithmetic on the shape, in a header
 * of its own so that tests/test_prefetch_plan.c checks the functions the
 * kernel calls (the kernel's walk over passes and keys around them is its
 * own). */
#ifndef ATTN_FLASH_AVX2_DECODE_PLAN_H
#define ATTN_FLASH_AVX2_DECODE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

enum { AVX2_FEW_LANES = 8 };

/* P·V's column passes over a block, widest first: of4 passes of 4
 * vectors, then of2 of 2, then of1 of 1 (the last vector maybe partial).
 * With 4 or 8 rows, an f32 or bf16 cache goes in passes of at most 2
 * vectors: then 4 rows share each pass (few_rows_per_pass), so each V
 * vector is loaded (and widened) once for 4 rows instead of once per 2;
 * each row's weight is broadcast 8 times per key instead of 4. Zen 4,
 * Hq 32 / Hkv 8 (R = 4), n_kv 96 in L2, 1 thread, alternating rounds of
 * one process: f32 1.07x / 1.19x / 1.16x at d 64 / 128 / 256, bf16
 * 1.02-1.06x, R = 8 (Hq 64) f32 1.14x, bf16 1.05x; an f16 cache
 * 0.96-0.99x, so it keeps the passes of 4. */
static inline int avx2_few_widest(int rows, int32_t kv_type)
{
    return rows >= 4 && kv_type != ATTN_F16 ? 2 : 4;
}

typedef struct avx2_few_passes {
    int32_t vectors, of4, of2, of1;
} avx2_few_passes;

static inline avx2_few_passes avx2_few_column_passes(int32_t d_v, int widest)
{
    const int32_t nzv = (d_v + AVX2_FEW_LANES - 1) / AVX2_FEW_LANES;
    if (widest == 2)
        return (avx2_few_passes){nzv, 0, nzv / 2, nzv % 2};
    return (avx2_few_passes){nzv, nzv / 4, nzv % 4 / 2, nzv % 2};
}

/* The next block's V rows, fetched into L2 while this block's P·V runs
 * (flash_avx2_decode.c says why). The span is the lines of those rows,
 * from the one holding their first byte (the driver's plan of them:
 * flash_prefetch_next_source), 64 bytes a line. Pass i of the block's
 * column passes asks for `lines` lines a key over its nb keys, the span's
 * lines from i·step bytes on (step = 64·lines·nb), or for none once i·step
 * reaches the span. Two lines a key where the passes would otherwise be
 * too few (f32 in passes of 4 vectors: d_v·4/64 lines a key over d_v/32
 * passes); a constant of the kernel's rows and type, so the kernel's loop
 * carries no count. The passes reach passes·step bytes, at least the V
 * bytes of a whole block whatever d_v: so every line of the span but,
 * when the V rows start off a line, maybe its last. The last pass may
 * name up to step bytes past the span, where a prefetch does nothing
 * harmful. */
static inline int avx2_few_ahead_lines(int rows, int32_t kv_type)
{
    return kv_type == ATTN_F32 && avx2_few_widest(rows, kv_type) == 4 ? 2 : 1;
}

static inline size_t avx2_few_ahead_step(int rows, int32_t kv_type, int32_t nb)
{
    return 64 * (size_t)avx2_few_ahead_lines(rows, kv_type) * (size_t)nb;
}

/* The line a pass names for its key j (0 <= j < nb), the l-th of the key's
 * lines (l < avx2_few_ahead_lines): lines count from the pass's start. */
static inline size_t avx2_few_ahead_line(int32_t j, int l, int32_t nb)
{
    return (size_t)l * (size_t)nb + (size_t)j;
}

/* Pass i's first byte into a span of `span` bytes, or SIZE_MAX: none. */
static inline size_t avx2_few_ahead_start(size_t span, size_t step, int32_t pass)
{
    const size_t at = step * (size_t)pass;
    return at < span ? at : SIZE_MAX;
}

#endif
