/* avx512_bf16 decode — the few-rows kernel in avx512_bf16's class over a
 * bf16 cache: flash_avx512_decode_body.h's softmax with
 *   P·V on vdpbf16ps (flash_avx512_decode_pv_bf16.h), P rounded to bf16,
 *       for heads of 8 query rows;
 *   Q·Kᵀ on vdpbf16ps (flash_avx512_decode_qk_bf16.h) when Q came in bf16,
 *       for heads of 8 and of 4 rows (f32 Q: f32 FMAs on K widened);
 * everything else (1 or 2 rows, 4 rows under f32 Q, a staged block) goes
 * to avx512's kernel (P in f32, inside the class).
 * Why P·V on pairs at 8 rows only: avx512's kernel takes 8 rows in passes
 * of 2 (or 4) rows, each pass reading the block's V rows again; the pairs
 * take 8 rows at once, a pass per 32 columns, each column of V read once.
 * Measured on a Zen 4 (n_kv 32768, 2 threads unless said, alternating
 * rounds of one process, against avx512's kernel on the same bf16 cache):
 * Hq 64 / Hkv 8 d 64 1.15x, d 128 1.25x (1.21x at 1 thread; 1.31x at n_kv
 * 4096); Hq 8 / Hkv 1 d 256 1.35x. At 4 rows, where avx512's kernel reads
 * V once already (d 128: one pass of 32 accumulators), the pairs ran
 * 1.12-1.16x at n_kv 4096 (the cache in L3) but 0.93x at 32768 on one
 * thread and 0.97-1.03x on two, in one pass of 32 accumulators (3
 * spilled) or two of 16 (0.84-0.89x; with V sub-blocks of 64 keys kept in
 * L1 between the passes 0.87-0.94x); d 64 1.00-1.13x. 2 rows: 0.85x at
 * 32768.
 * Q·Kᵀ on pairs (all-bf16, against the kernels before it, same measure):
 * 8 rows d 128 1.22x (1.30x at 1 thread, 1.39x at n_kv 4096), d 64
 * 1.26x, d 96 1.26x (n_kv 16384), Hq 8 / Hkv 1 d 256 1.24x; 4 rows d 64
 * 1.18x, d 80 1.05x (1.16x at 1 thread), d 128 1.14x at 1 thread and 1.23x
 * at n_kv 4096, 0.89-1.10x in three runs on 2 threads at 32768 (the VM's
 * bandwidth moved by a third between rounds there). 1 and 2 rows (MHA
 * and groups of 2, memory-bound): 0.96-1.04x, not taken.
 * -mavx512f -mavx512bw -mavx512bf16 -mfma. */
#define ATTN_DECODE_PAIRS 1
#include "flash_avx512_decode_body.h"

/* P·V on pairs, Q·Kᵀ in f32 (f32 Q, or a d_k past the packed Q's stack
 * buffer). */
static void few_8_pairs(const flash_tile *t)
{
    few_blocks(t, 8, ATTN_BF16, FEW_PV_BF16, (few_q_pairs){NULL, 0});
}

/* bf16 Q: Q·Kᵀ on pairs too, Q packed once per tile on the stack. */
#define FEW_QK_KERNEL(R, PV, name)                                                                 \
    static void name(const flash_tile *t)                                                          \
    {                                                                                              \
        uint16_t qb[R * QK_PAIRS_MAX_DK] __attribute__((aligned(64)));                             \
        const int32_t ldq = qk_pairs_ld(t->d_k);                                                   \
        pack_q_bf16(t, R, qb, ldq);                                                                \
        few_blocks(t, R, ATTN_BF16, PV, (few_q_pairs){qb, ldq});                                   \
    }
FEW_QK_KERNEL(4, FEW_PV_F32, few_4_qk)
FEW_QK_KERNEL(8, FEW_PV_BF16, few_8_qk)

void attn_avx512_bf16_decode_kernel(const flash_tile *t)
{
    if (t->staged || t->kv_type != ATTN_BF16) {
        attn_avx512_decode_kernel(t);
        return;
    }
    const int qk = t->q_type == ATTN_BF16 && t->d_k <= QK_PAIRS_MAX_DK;
    if (t->rows == 8 && qk)
        few_8_qk(t);
    else if (t->rows == 8)
        few_8_pairs(t);
    else if (t->rows == 4 && qk)
        few_4_qk(t);
    else
        attn_avx512_decode_kernel(t);
}

int attn_avx512_bf16_decode_reads(int32_t kv_type)
{
    (void)kv_type;
    return 1;
}
