/* exp_avx2.h — the AVX2+FMA vector exp: the one definition the avx2
 * kernels, tests/test_exp (through exp_avx2.c) and harness/peak_avx2.c use.
 * Include only from files compiled with -mavx2 -mfma (or a superset). */
#ifndef ATTN_EXP_AVX2_H
#define ATTN_EXP_AVX2_H

#include <immintrin.h>

#include "exp_range.h"

/* The AVX2 vectorised exp of the softmax weights: e^x for x <= 40, max
 * error 0.59 ulp over [-87.33, 40] (tests/test_exp), +0 below -87.33
 * (attn_exp_x_flush: a normal result or 0, exp_range.h; the last rounding
 * into a subnormal used to reach 0.765 ulp). Larger x give e^40, +inf
 * included: the kernels only pass s·scale - m with m the running max
 * (<= 0 up to a rounding) and m_old - m_new (<= 0), and capping the
 * domain saves a third of the instructions (below). (exp_avx512.h has a
 * shorter one with a 16-entry table, a degree-3 polynomial and vscalefps:
 * 1.06 ulp.)
 *
 *   x = n·ln2/8 + r,  n = round(8x/ln2),  |r| <= ln2/16
 *   e^x = 2^(n>>3) · 2^((n&7)/8) · e^r
 *
 * One FMA with 1.5·2^23 rounds 8x/ln2 to the integer n and leaves it in the
 * low mantissa bits; n - that constant is n as a float. ln2/8 is split
 * Cody-Waite style into hi (9 significant bits, so n·hi and x − n·hi are
 * exact for |n| < 2^15) and lo. The table 2^(j/8) is a float pair hi+lo
 * read with one vpermps each (the index: n's low 3 bits); e^r − 1 =
 * r + r²(c2 + c3·r + c4·r²), a near-minimax fit with relative error
 * 0.004 ulp on [-ln2/16, ln2/16]. The result is hi + (hi·(e^r − 1) + lo),
 * then times 2^(n>>3), one rounding that matters. Why not the plain
 * 2^n · poly(r) with |r| <= ln2/2: there the rounding of r and of the last
 * Horner step add ~0.35 ulp to the final 0.5 (a degree-6 fit measured
 * 1.04 ulp; SLEEF's expf u10 0.97 ulp at 1.5-2x the time).
 *
 * The power of two without vscalefps: the table is stored times 2^-64
 * (exact: every entry stays normal) and the result is that times
 * 2^((n>>3) + 64), a normal float for every n of [-110, 40], built from
 * the rounding constant's bits: the constant carries an extra 191·8, so
 * its bits shifted left 20 and masked to the exponent field are
 * (n>>3) + 191 = (n>>3) + 64 + 127. One multiply then rounds once, bit
 * for bit what the full-range form (y · 2^m1 · 2^m2, the exponent split
 * in two to reach +inf at 88.7) gave for the same n: 17 instructions (19
 * with the flush's compare and mask) where that took 24; 1.04x on avx2 at
 * d 64 (Zen 4, 1 thread, n 2048, 4 heads, alternating rounds), within
 * noise at d 128. */
static const float attn_exp_8_over_ln2 = 11.5415603271117073f;
static const float attn_exp_ln2_8_hi = 0.086669921875f; /* 0x1.630p-4 */
static const float attn_exp_ln2_8_lo = -2.6524305e-5f;  /* ln2/8 - hi */
static const float attn_exp_c2 = 0x1p-1f;
static const float attn_exp_c3 = 0x1.555c56p-3f;
static const float attn_exp_c4 = 0x1.553d22p-5f;
/* 2^(j/8) as hi + lo, both times 2^-64. */
static const float attn_exp_table_hi[8] = {
    0x1p-64f,        0x1.172b84p-64f, 0x1.306fep-64f,  0x1.4bfdaep-64f,
    0x1.6a09e6p-64f, 0x1.8ace54p-64f, 0x1.ae89fap-64f, 0x1.d5818ep-64f,
};
static const float attn_exp_table_lo[8] = {
    0x0p+0f,         -0x1.c15742p-91f, 0x1.4636e2p-89f,  -0x1.593abcp-89f,
    0x1.9fcef4p-90f, 0x1.15506ep-91f,  -0x1.a94b14p-90f, -0x1.822dbcp-91f,
};

/* e^x for 8 floats, x <= 40 (see above). The clamps keep NaN (MAXPS/MINPS
 * return the second operand when either is NaN: NaN·2^k is NaN); -inf
 * gives 0. */
static inline __m256 attn_exp_avx2(__m256 x)
{
    const __m256 round_n = _mm256_set1_ps(0x1.8p23f + 191.0f * 8.0f); /* ulp 1 */
    /* Below attn_exp_x_flush (and -inf): +0, the result masked; NaN is not
     * below anything and stays NaN. */
    const __m256 keep = _mm256_cmp_ps(x, _mm256_set1_ps(attn_exp_x_flush), _CMP_NLT_UQ);
    x = _mm256_max_ps(_mm256_set1_ps(attn_exp_x_flush), x);
    x = _mm256_min_ps(_mm256_set1_ps(attn_exp_avx2_x_max), x);
    __m256 f = _mm256_fmadd_ps(x, _mm256_set1_ps(attn_exp_8_over_ln2), round_n);
    __m256 n = _mm256_sub_ps(f, round_n); /* exact */
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(attn_exp_ln2_8_hi), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(attn_exp_ln2_8_lo), r);
    /* vpermps reads the low 3 bits of the index: n & 7 (191·8 adds none). */
    __m256i bits = _mm256_castps_si256(f);
    __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(attn_exp_table_hi), bits);
    __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(attn_exp_table_lo), bits);
    __m256 c = _mm256_fmadd_ps(_mm256_set1_ps(attn_exp_c4), r, _mm256_set1_ps(attn_exp_c3));
    c = _mm256_fmadd_ps(c, r, _mm256_set1_ps(attn_exp_c2));
    __m256 em1 = _mm256_fmadd_ps(_mm256_mul_ps(r, r), c, r);
    __m256 y = _mm256_add_ps(hi, _mm256_fmadd_ps(hi, em1, lo));
    /* 2^((n>>3) + 64): the constant's own bits shift out past bit 31. */
    __m256 scale = _mm256_castsi256_ps(
        _mm256_and_si256(_mm256_slli_epi32(bits, 20), _mm256_set1_epi32((int)0xff800000u)));
    return _mm256_and_ps(keep, _mm256_mul_ps(y, scale));
}

#endif
