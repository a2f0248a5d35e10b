/* The decode kernel's Q·Kᵀ on vdpbf16ps, for Q that came in bf16 over a
 * bf16 cache: included by flash_avx512_decode_body.h in the files that
 * define ATTN_DECODE_PAIRS (AVX512BW, AVX512_BF16).
 *
 * The tile's Q rows hold bf16 values widened to f32, so narrowing them
 * again is exact: they are packed once per tile as bf16, 32 columns to a
 * zmm (pack_q_bf16). A key's row is then loaded as it lies, 32 elements
 * a zmm, and one vdpbf16ps per row adds the products of 32 columns into
 * the row's 16 lanes, lane c holding columns 2c and 2c + 1: half the
 * multiply-adds of the f32 FMAs and no widening. Products of two bf16 are
 * exact in f32, so what changes is the order of the additions (within the
 * class's Q·Kᵀ bound, rule A), and subnormal inputs read as zero and a
 * subnormal partial sum is written as zero (the variant's declared
 * denormals-are-zero). Lanes, reduction (attn_hsum16)
 * and the scores' layout are few_group_scores'. f32 Q stays on f32 FMAs:
 * rounding it to bf16 would be an error outside the class. */
#ifndef ATTN_FLASH_AVX512_DECODE_QK_BF16_H
#define ATTN_FLASH_AVX512_DECODE_QK_BF16_H

#include <stdint.h>

/* Q's packed rows live on the stack: 8 rows x 256 columns x 2 bytes =
 * 4 KiB at most; a longer d_k keeps the f32 FMAs. */
enum { QK_PAIRS_MAX_DK = 256, QK_PAIRS_COLS = 32 };

/* Row stride of the packed Q: d_k rounded up to a whole zmm of bf16. */
static inline int32_t qk_pairs_ld(int32_t d_k)
{
    return (d_k + QK_PAIRS_COLS - 1) / QK_PAIRS_COLS * QK_PAIRS_COLS;
}

/* Rows [0, R) of t->q as bf16, qb[r·ldq + c], zero past d_k: the loads are
 * masked at d_k, so nothing past a row's d_k elements is read (ldq may
 * pass t->ld by 16 columns). Exact for bf16 inputs: vcvtne2ps2bf16 rounds
 * nothing away, subnormals aside, which it reads as zero as vdpbf16ps
 * would (the variant's declared denormals-are-zero). */
FLASH_INLINE void pack_q_bf16(const flash_tile *t, const int R, uint16_t *qb, int32_t ldq)
{
    for (int r = 0; r < R; r++)
        for (int32_t c = 0; c < ldq; c += QK_PAIRS_COLS) {
            const float *src = t->q + (size_t)r * t->ld + c;
            __m512 x0 = _mm512_maskz_loadu_ps(lanes_upto(t->d_k - c), src);
            __m512 x1 = _mm512_maskz_loadu_ps(lanes_upto(t->d_k - c - 16), src + 16);
            _mm512_store_si512(qb + (size_t)r * ldq + c, (__m512i)_mm512_cvtne2ps_pbh(x1, x0));
        }
}

/* few_dot_step on pairs (few_group_scores takes it when Q is packed):
 * acc[i·R + r] += the pairs of packed Q row r and key i's row (element k[i]
 * of the bf16 K at kb), columns [c, c + 32) of them; the K loads masked by
 * `cols` (words past d_k are the next key's, and 0·Inf there would be NaN). */
FLASH_INLINE void pairs_dot_step(const uint16_t *qb, int32_t ldq, const void *kbase,
                                 const size_t *k, int32_t c, __mmask32 cols, const int R,
                                 __m512 *acc, flash_prefetch *pf, int32_t per)
{
    const uint16_t *kb = (const uint16_t *)kbase;
    const int kg = LANES / R;
    __m512i q[FEW_ROWS];
    for (int r = 0; r < R; r++)
        q[r] = _mm512_load_si512(qb + (size_t)r * ldq + c);
    for (int32_t s = 0; s < per; s++)
        flash_prefetch_step(pf);
    for (int i = 0; i < kg; i++) {
        __m512i kv = cols == 0xffffffffu ? _mm512_loadu_si512(kb + k[i] + c)
                                         : _mm512_maskz_loadu_epi16(cols, kb + k[i] + c);
        for (int r = 0; r < R; r++)
            acc[i * R + r] = _mm512_dpbf16_ps(acc[i * R + r], (__m512bh)q[r], (__m512bh)kv);
    }
}

#endif
