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

#endif
