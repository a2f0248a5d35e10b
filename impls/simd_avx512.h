/* simd_avx512.h — AVX-512F helpers shared by the AVX-512 variants: exp,
 * horizontal max/sum, tail masks. Include only from files compiled with
 * -mavx512f -mfma (the intrinsics below need nothing beyond AVX512F; the
 * AVX2 header it includes for the exp constants needs AVX2 and FMA, which
 * those flags imply). */
#ifndef ATTN_SIMD_AVX512_H
#define ATTN_SIMD_AVX512_H

#include <immintrin.h>

#include "simd_avx2.h"

/* e^x for 16 floats: attn_exp_avx2's algorithm and constants (simd_avx2.h),
 * max error 0.765 ulp over [-104, 89]. vscalefps applies 2^(n>>3) with a
 * single rounding (overflow to +inf, gradual underflow, 0 below -103.97),
 * and vpermps reads the low 4 bits of its index, so the 8-entry tables are
 * repeated in both halves of a register. */
static inline __m512 attn_exp_avx512(__m512 x)
{
    __m256 thi8 = _mm256_loadu_ps(attn_exp_table_hi), tlo8 = _mm256_loadu_ps(attn_exp_table_lo);
    __m512 thi = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(thi8)),
                                                     _mm256_castps_pd(thi8), 1));
    __m512 tlo = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(tlo8)),
                                                     _mm256_castps_pd(tlo8), 1));
    x = _mm512_max_ps(_mm512_set1_ps(attn_exp_x_min), x);
    x = _mm512_min_ps(_mm512_set1_ps(attn_exp_x_max), x);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(attn_exp_8_over_ln2)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(attn_exp_ln2_8_hi), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(attn_exp_ln2_8_lo), r);
    __m512i j = _mm512_cvtps_epi32(n);
    __m512 hi = _mm512_permutexvar_ps(j, thi);
    __m512 lo = _mm512_permutexvar_ps(j, tlo);
    __m512 c = _mm512_fmadd_ps(_mm512_set1_ps(attn_exp_c4), r, _mm512_set1_ps(attn_exp_c3));
    c = _mm512_fmadd_ps(c, r, _mm512_set1_ps(attn_exp_c2));
    __m512 em1 = _mm512_fmadd_ps(_mm512_mul_ps(r, r), c, r);
    __m512 y = _mm512_add_ps(hi, _mm512_fmadd_ps(hi, em1, lo));
    /* scalef multiplies by 2^floor(n/8), i.e. 2^(n>>3); n/8 is exact. */
    return _mm512_scalef_ps(y, _mm512_mul_ps(n, _mm512_set1_ps(0.125f)));
}

/* Lanes [0, n) set, n in 0..16. */
static inline __mmask16 attn_tail_mask_avx512(int n)
{
    return (__mmask16)((1u << n) - 1u);
}

/* Largest lane. NaN handling is MAXPS's (asymmetric): callers that must
 * see a NaN test for it themselves. */
static inline float attn_hmax_avx512(__m512 v)
{
    __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}

/* Sum of the lanes as a pairwise tree (fixed order: reproducible). */
static inline float attn_hsum_avx512(__m512 v)
{
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}

/* Lane n = the sum of x[n]'s lanes, for 16 vectors at once: 4 levels of
 * halving (256-, 128-, 64-, 32-bit pieces of two vectors, then one add),
 * 45 instructions where 16 separate horizontal sums take about 128. The inputs are
 * read in the order (n % 4)·4 + n / 4, which is what makes the output
 * lanes come out in order. A fixed tree: reproducible. */
static inline __m512 attn_hsum16_avx512(const __m512 *x)
{
    __m512 c[8], e[4], g[2];
    for (int k = 0; k < 8; k++) {
        __m512 a = x[(2 * k % 4) * 4 + 2 * k / 4], b = x[((2 * k + 1) % 4) * 4 + (2 * k + 1) / 4];
        c[k] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    }
    for (int k = 0; k < 4; k++)
        e[k] = _mm512_add_ps(_mm512_shuffle_f32x4(c[2 * k], c[2 * k + 1], 0x88),
                             _mm512_shuffle_f32x4(c[2 * k], c[2 * k + 1], 0xDD));
    for (int k = 0; k < 2; k++)
        g[k] = _mm512_add_ps(_mm512_shuffle_ps(e[2 * k], e[2 * k + 1], 0x88),
                             _mm512_shuffle_ps(e[2 * k], e[2 * k + 1], 0xDD));
    return _mm512_add_ps(_mm512_shuffle_ps(g[0], g[1], 0x88), _mm512_shuffle_ps(g[0], g[1], 0xDD));
}

#endif
