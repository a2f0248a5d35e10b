/* transpose_avx2.c — transpose.h's transpose in 8 x 8 blocks of ymm
 * registers (unpack, shuffle, 128-bit permute), through the block loop of
 * transpose_blocks.h. -mavx2. */
#include <immintrin.h>

#define TRANSPOSE_VEC __m256
#define TRANSPOSE_LANES 8
#define TRANSPOSE_LOADU _mm256_loadu_ps
#define TRANSPOSE_STOREU _mm256_storeu_ps
#define TRANSPOSE_DIV _mm256_div_ps
#define TRANSPOSE_SET1 _mm256_set1_ps

/* r[i] (row i of the block) becomes column i. */
static inline void transpose_block(__m256 r[8])
{
    __m256 t[8], s[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        s[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        s[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        s[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        s[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(s[i], s[i + 4], 0x31);
    }
}

#include "transpose_blocks.h"

void attn_transpose_avx2(const float *src, size_t src_ld, float *dst, size_t dst_ld, int32_t n_rows,
                         int32_t n_cols, const float *div)
{
    transpose_blocks(src, src_ld, dst, dst_ld, n_rows, n_cols, div);
}
