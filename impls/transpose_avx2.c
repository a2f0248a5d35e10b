/* transpose_avx2.c — transpose.h's transpose in 8 x 8 blocks of ymm
 * registers (unpack, shuffle, 128-bit permute); the edges that are not
 * whole blocks by the portable loops. -mavx2. */
#include <immintrin.h>

#include "transpose.h"

/* r[i] (row i of the block) becomes column i. */
static inline void transpose8(__m256 r[8])
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

void attn_transpose_avx2(const float *src, size_t src_ld, float *dst, size_t dst_ld, int32_t n_rows,
                         int32_t n_cols, const float *div)
{
    const int32_t rows8 = n_rows / 8 * 8, cols8 = n_cols / 8 * 8;
    for (int32_t r0 = 0; r0 < rows8; r0 += 8)
        for (int32_t c0 = 0; c0 < cols8; c0 += 8) {
            __m256 x[8];
            for (int i = 0; i < 8; i++)
                x[i] = _mm256_loadu_ps(src + (size_t)(r0 + i) * src_ld + (size_t)c0);
            transpose8(x);
            for (int i = 0; i < 8; i++) {
                if (div)
                    x[i] = _mm256_div_ps(x[i], _mm256_set1_ps(div[c0 + i]));
                _mm256_storeu_ps(dst + (size_t)(c0 + i) * dst_ld + (size_t)r0, x[i]);
            }
        }
    attn_transpose_edges(src, src_ld, dst, dst_ld, n_rows, n_cols, div, 8);
}
