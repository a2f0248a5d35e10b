/* The avx512 variant's decode kernel (flash_avx512_decode.c). */
#ifndef ATTN_FLASH_AVX512_DECODE_H
#define ATTN_FLASH_AVX512_DECODE_H

#include "flash_driver.h"

/* Heads with at most this many query rows in all (a power of two) go to
 * the decode kernel. */
enum { ATTN_AVX512_DECODE_ROWS = 8 };

/* Rows of accumulators one P·V pass over nz column vectors of V holds
 * (few_rows_pass: a tile of at most 16 accumulators beside the V row). */
static inline int attn_avx512_decode_rows_per_pass(int32_t nz)
{
    return nz > 4 ? 2 : nz > 2 ? 4 : 8;
}

/* 1 when the decode kernel's P·V, for `rows` rows of d_v, takes every
 * row in one pass over the V rows' vectors: d_v within 8 vectors and at
 * most the rows a pass over all of them holds, or 4 rows of 8 whole
 * vectors (few_accumulate_wide, whatever the K/V type). The key blocks
 * are sized by it (flash_block_rule). */
static inline int attn_avx512_decode_one_pass(int32_t rows, int32_t d_v)
{
    const int32_t nz = (d_v + 15) / 16;
    if (nz > 8)
        return 0;
    if (rows == 4 && nz == 8)
        return d_v % 16 == 0;
    return rows <= attn_avx512_decode_rows_per_pass(nz);
}

/* A whole few-rows tile (rows 1, 2, 4 or 8); call only with AVX512F. */
void attn_avx512_decode_kernel(const flash_tile *t);

/* avx512_bf16's: 8-row tiles over a bf16 cache in its class (P rounded to
 * bf16, P·V on vdpbf16ps), any other tile as attn_avx512_decode_kernel;
 * call only with AVX512F, AVX512BW and AVX512_BF16. */
void attn_avx512_bf16_decode_kernel(const flash_tile *t);
/* Its geometry's few_reads: it reads bf16 K/V itself (the only type its
 * variants take). */
int attn_avx512_bf16_decode_reads(int32_t kv_type);

#endif
