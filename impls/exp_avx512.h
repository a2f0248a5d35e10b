/* exp_avx512.h — the AVX-512F vector exps, each defined once for the
 * kernels, tests/test_exp (through exp_avx512.c) and harness/peak_avx512.c:
 * attn_exp_avx512 (full accuracy) and attn_exp_avx512_bf16p (for weights
 * rounded to bf16 next). Include only from files compiled with -mavx512f
 * -mfma. */
#ifndef ATTN_EXP_AVX512_H
#define ATTN_EXP_AVX512_H

#include <immintrin.h>

#include "exp_range.h"

/* e^x for 16 floats, max error 1.062 ulp over [-87.33, 89] (tests/test_exp --all),
 * +0 below -87.33 (attn_exp_x_flush: a normal result or 0, exp_range.h):
 * e^x = 2^(k/16) · e^r with k = round(16·x/ln2), |r| <= ln2/32. One FMA
 * with 1.5·2^19 rounds x·log2(e) to 1/16 and leaves k in the low mantissa
 * bits, whose low 4 bits vpermps reads as the index into the 16-entry
 * 2^(j/16) table (one zmm); r = x - (k/16)·ln2 in two FMAs (Cody-Waite; each
 * FMA rounds once, so hi needs no short mantissa); a degree-3 Taylor
 * polynomial is within 0.08 ulp at |r| <= ln2/32; vscalefps applies
 * 2^floor(k/16) with a single rounding (overflow to +inf), its zero mask
 * the flush. 12 instructions (13 with the flush's compare) where the
 * 8-entry hi/lo form (0.765 ulp) took 18: measured on attention (1
 * thread, n = 4096, 8 heads) 1.035-1.05x at d = 64, within noise
 * (0.99-1.03x) at d = 128, where the exp is a smaller share of the work.
 * The clamps keep ±inf from meeting the magic constant (inf - inf) and
 * pass NaN through (MAXPS/MINPS return their second operand on NaN). */
static const float attn_exp16_table[16] = {
    0x1.000000p+0f, 0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f, 0x1.306fe0p+0f, 0x1.3dea64p+0f,
    0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f, 0x1.9c4918p+0f,
    0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f,
};

static inline __m512 attn_exp_avx512(__m512 x)
{
    const __m512 magic = _mm512_set1_ps(0x1.8p19f); /* ulp 1/16 */
    /* Below attn_exp_x_flush (and -inf): +0, by vscalefps' zero mask; NaN
     * is not below anything and stays NaN. */
    const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(attn_exp_x_flush), _CMP_NLT_UQ);
    x = _mm512_max_ps(_mm512_set1_ps(attn_exp_x_flush), x);
    x = _mm512_min_ps(_mm512_set1_ps(attn_exp_x_max), x);
    __m512 f = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), magic);
    __m512 n = _mm512_sub_ps(f, magic); /* k/16, exact */
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e430p-1f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-0x1.05c610p-29f), r);
    __m512 t = _mm512_permutexvar_ps(_mm512_castps_si512(f), _mm512_loadu_ps(attn_exp16_table));
    __m512 c = _mm512_fmadd_ps(_mm512_set1_ps(0x1.555556p-3f), r, _mm512_set1_ps(0.5f));
    __m512 em1 = _mm512_fmadd_ps(_mm512_mul_ps(r, r), c, r);
    return _mm512_maskz_scalef_ps(keep, _mm512_fmadd_ps(t, em1, t), n);
}

/* e^x for weights that are rounded to bf16 next (avx512_bf16's P, the
 * class "P rounded to bf16"): 10 instructions instead of 13, its error
 * (5.49 ulp, tests/test_exp --all) far below the 2^-9 of the rounding that
 * follows it, which rule A already carries. What the three saved:
 *   a 32-entry 2^(j/32) table in two zmm (vpermt2ps), so |r| <= ln2/64
 *   and a degree-2 polynomial is within 0.9 · 2^-24 (minimax, relative);
 *   one Cody-Waite step (r = x - n·ln2 with ln2 rounded to float): the
 *   product's error grows with |n| (the 5.5 ulp are at x = -86.7);
 *   no upper clamp: every finite x above 89 still gives +inf (the
 *   polynomial has no real root, so the mantissa stays positive whatever
 *   r, and past 2^127 r is -inf and the result +inf all the same); only
 *   +inf itself gives NaN (inf - inf in r), and it is outside the domain:
 *   the weights' s - m never is +inf (m is the max of s; an infinite max
 *   makes s - m -inf or NaN). Alpha, exp(m_old - m_new), stays on
 *   attn_exp_avx512.
 * Measured on attention (avx512_bf16, n = 4096, 8 heads, bf16, alternating
 * rounds of one process, Zen 4): d = 64 1.028x / 1.029x at 2 / 1 threads,
 * d = 128 1.016x / 1.013x; the exp was 11 % of the d = 64 time (a build with
 * a 1-FMA stand-in: 1.11x). The same table and polynomial with both
 * Cody-Waite steps (1.7 ulp, 10 instructions) gave avx512_bf16 1.00-1.02x
 * at d = 64, and avx512 in f32 (as attn_exp_avx512) 1.002-1.008x. */
static const float attn_exp32_table[32] = {
    0x1.000000p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f, 0x1.172b84p+0f, 0x1.1d4874p+0f,
    0x1.2387a6p+0f, 0x1.29e9e0p+0f, 0x1.306fe0p+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f,
    0x1.4bfdaep+0f, 0x1.5342b6p+0f, 0x1.5ab07ep+0f, 0x1.6247ecp+0f, 0x1.6a09e6p+0f, 0x1.71f75ep+0f,
    0x1.7a1148p+0f, 0x1.82589ap+0f, 0x1.8ace54p+0f, 0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f,
    0x1.ae89fap+0f, 0x1.b7f770p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f, 0x1.d5818ep+0f, 0x1.dfc974p+0f,
    0x1.ea4afap+0f, 0x1.f50766p+0f,
};

static inline __m512 attn_exp_avx512_bf16p(__m512 x)
{
    const __m512 magic = _mm512_set1_ps(0x1.8p18f); /* ulp 1/32 */
    const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(attn_exp_x_flush), _CMP_NLT_UQ);
    x = _mm512_max_ps(_mm512_set1_ps(attn_exp_x_flush), x);
    __m512 f = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), magic);
    __m512 n = _mm512_sub_ps(f, magic); /* k/32, exact */
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e430p-1f), x);
    /* Index bit 4 picks the second half: the low 5 bits of k. */
    __m512 t = _mm512_permutex2var_ps(_mm512_loadu_ps(attn_exp32_table), _mm512_castps_si512(f),
                                      _mm512_loadu_ps(attn_exp32_table + 16));
    /* e^r - 1 = r·(c1 + c2·r); t·e^r = t + (t·r)·(c1 + c2·r): 1 at r = 0. */
    __m512 c = _mm512_fmadd_ps(_mm512_set1_ps(0x1.000006p-1f), r, _mm512_set1_ps(0x1.0000f6p+0f));
    return _mm512_maskz_scalef_ps(keep, _mm512_fmadd_ps(_mm512_mul_ps(t, r), c, t), n);
}

#endif
