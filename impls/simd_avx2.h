/* simd_avx2.h — AVX2+FMA helpers shared by the AVX2 code: the exp
 * (exp_avx2.h) and tail masks. Include only from files compiled with
 * -mavx2 -mfma (or a superset, e.g. the AVX-512 flags). */
#ifndef ATTN_SIMD_AVX2_H
#define ATTN_SIMD_AVX2_H

#include <immintrin.h>

#include "exp_avx2.h"

/* All-ones in lanes [0, n), n in 0..8: the mask of vmaskmovps. */
static inline __m256i attn_tail_mask_avx2(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Lane n of the result is the sum of the 8 lanes of x[n]: a transpose and
 * add in three levels (horizontal adds within 128-bit halves, then the
 * halves), so 8 dot products finish in 7 adds rather than 8 reductions. */
static inline __m256 attn_hsum8_avx2(const __m256 *x)
{
    __m256 t0 = _mm256_hadd_ps(x[0], x[1]), t1 = _mm256_hadd_ps(x[2], x[3]);
    __m256 t2 = _mm256_hadd_ps(x[4], x[5]), t3 = _mm256_hadd_ps(x[6], x[7]);
    __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    /* u0: [x0..x3 over low halves | x0..x3 over high halves], u1 for x4..x7 */
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                         _mm256_permute2f128_ps(u0, u1, 0x31));
}

#endif
