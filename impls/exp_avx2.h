/* exp_avx2.h — the AVX2+FMA vector exp: the one definition the avx2
 * kernels, tests/test_exp (through exp_avx2.c) and harness/peak_avx2.c use.
 * Include only from files compiled with -mavx2 -mfma (or a superset). */
#ifndef ATTN_EXP_AVX2_H
#define ATTN_EXP_AVX2_H

#include <immintrin.h>

#include "exp_range.h"

/* The AVX2 vectorised exp, max error 0.765 ulp over [-104, 89] (every
 * float, tests/test_exp --all): 0.59 ulp where e^x is normal, the rest is
 * the last rounding into a subnormal. (simd_avx512.h has a shorter one with
 * a 16-entry table and a degree-3 polynomial: 1.06 ulp.)
 *
 *   x = n·ln2/8 + r,  n = round(8x/ln2),  |r| <= ln2/16
 *   e^x = 2^(n>>3) · 2^((n&7)/8) · e^r
 *
 * ln2/8 is split Cody-Waite style into hi (9 significant bits, so n·hi and
 * x − n·hi are exact for |n| < 2^15) and lo. The table 2^(j/8) is a float
 * pair hi+lo read with one permute each; e^r − 1 = r + r²(c2 + c3·r + c4·r²),
 * a near-minimax fit with relative error 0.004 ulp on [-ln2/16, ln2/16]. The
 * result is hi + (hi·(e^r − 1) + lo): one rounding that matters. Why not
 * the plain 2^n · poly(r) with |r| <= ln2/2: there the rounding of r and of
 * the last Horner step add ~0.35 ulp to the final 0.5 (a degree-6 fit
 * measured 1.04 ulp; SLEEF's expf u10 0.97 ulp at 1.5-2x the time). */
static const float attn_exp_8_over_ln2 = 11.5415603271117073f;
static const float attn_exp_ln2_8_hi = 0.086669921875f; /* 0x1.630p-4 */
static const float attn_exp_ln2_8_lo = -2.6524305e-5f;  /* ln2/8 - hi */
static const float attn_exp_c2 = 0x1p-1f;
static const float attn_exp_c3 = 0x1.555c56p-3f;
static const float attn_exp_c4 = 0x1.553d22p-5f;
static const float attn_exp_table_hi[8] = {
    0x1p+0f,        0x1.172b84p+0f, 0x1.306fep+0f,  0x1.4bfdaep+0f,
    0x1.6a09e6p+0f, 0x1.8ace54p+0f, 0x1.ae89fap+0f, 0x1.d5818ep+0f,
};
static const float attn_exp_table_lo[8] = {
    0x0p+0f,         -0x1.c15742p-27f, 0x1.4636e2p-25f,  -0x1.593abcp-25f,
    0x1.9fcef4p-26f, 0x1.15506ep-27f,  -0x1.a94b14p-26f, -0x1.822dbcp-27f,
};

/* e^x for 8 floats (see above). The clamp keeps NaN (MAXPS/MINPS return the
 * second operand when either is NaN); -inf gives 0, +inf gives +inf. 2^(n>>3)
 * is applied as two exact powers of two, 2^m1 then 2^m2, so the only
 * rounding is the last product's: gradual underflow, 0 below -103.97. */
static inline __m256 attn_exp_avx2(__m256 x)
{
    x = _mm256_max_ps(_mm256_set1_ps(attn_exp_x_min), x);
    x = _mm256_min_ps(_mm256_set1_ps(attn_exp_x_max), x);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(attn_exp_8_over_ln2)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(attn_exp_ln2_8_hi), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(attn_exp_ln2_8_lo), r);
    /* vpermps reads the low 3 bits of the index: n & 7. */
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256 hi = _mm256_permutevar8x32_ps(_mm256_loadu_ps(attn_exp_table_hi), ni);
    __m256 lo = _mm256_permutevar8x32_ps(_mm256_loadu_ps(attn_exp_table_lo), ni);
    __m256 c = _mm256_fmadd_ps(_mm256_set1_ps(attn_exp_c4), r, _mm256_set1_ps(attn_exp_c3));
    c = _mm256_fmadd_ps(c, r, _mm256_set1_ps(attn_exp_c2));
    __m256 em1 = _mm256_fmadd_ps(_mm256_mul_ps(r, r), c, r);
    __m256 y = _mm256_add_ps(hi, _mm256_fmadd_ps(hi, em1, lo));
    /* m = n >> 3 lies in [-159, 129] after the clamp: m1 and m2 in [-80, 65]
     * are normal exponents, and y·2^m1 is exact. */
    __m256i m = _mm256_srai_epi32(ni, 3);
    __m256i m1 = _mm256_srai_epi32(m, 1);
    __m256i m2 = _mm256_sub_epi32(m, m1);
    __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(m1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(m2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

#endif
