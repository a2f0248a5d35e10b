/* simd_avx512.h — AVX-512F helpers shared by the AVX-512 code: the exp
 * (exp_avx512.h), the fixed-order 16-vector horizontal sum, tail masks.
 * Include only from files compiled with -mavx512f -mfma. */
#ifndef ATTN_SIMD_AVX512_H
#define ATTN_SIMD_AVX512_H

#include <immintrin.h>

#include "exp_avx512.h"

/* Lanes [0, n) set, n in 0..16. */
static inline __mmask16 attn_tail_mask_avx512(int n)
{
    return (__mmask16)((1u << n) - 1u);
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
