/* avx512_bf16 decode — the few-rows kernel in avx512_bf16's class, P
 * rounded to bf16, for heads of 8 query rows over a bf16 cache:
 * flash_avx512_decode_body.h's scores and softmax (K read as it is; Q·Kᵀ
 * in f32 FMAs, whatever Q's type), P·V on vdpbf16ps
 * (flash_avx512_decode_pv_bf16.h). Heads of 1, 2 or 4 rows, and a staged
 * block, go to avx512's kernel (P in f32, inside the class).
 * Why 8 rows only: avx512's kernel takes 8 rows in passes of 2 (or 4)
 * rows, each pass reading the block's V rows again; the pairs take 8 rows
 * at once, a pass per 32 columns, each column of V read once. Measured on
 * a Zen 4 (n_kv 32768, 2 threads unless said, alternating rounds of one
 * process, against avx512's kernel on the same bf16 cache): Hq 64 / Hkv 8
 * d 64 1.15x, d 128 1.25x (1.21x at 1 thread; 1.31x at n_kv 4096);
 * Hq 8 / Hkv 1 d 256 1.35x. At 4 rows, where avx512's kernel reads V once
 * already (d 128: one pass of 32 accumulators), the pairs ran 1.12-1.16x
 * at n_kv 4096 (the cache in L3) but 0.93x at 32768 on one thread and
 * 0.97-1.03x on two, in one pass of 32 accumulators (3 spilled) or two of
 * 16 (0.84-0.89x; with V sub-blocks of 64 keys kept in L1 between the
 * passes 0.87-0.94x); d 64 1.00-1.13x. 2 rows: 0.85x at 32768. So they
 * stay with avx512's kernel. -mavx512f -mavx512bw -mavx512bf16 -mfma. */
#define ATTN_DECODE_PV_BF16 1
#include "flash_avx512_decode_body.h"

static void few_8_pairs(const flash_tile *t)
{
    few_blocks(t, 8, ATTN_BF16, FEW_PV_BF16);
}

void attn_avx512_bf16_decode_kernel(const flash_tile *t)
{
    if (t->staged || t->kv_type != ATTN_BF16 || t->rows != 8) {
        attn_avx512_decode_kernel(t);
        return;
    }
    few_8_pairs(t);
}
