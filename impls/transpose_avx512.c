/* transpose_avx512.c — transpose.h's transpose in 16 x 16 blocks of zmm
 * registers (unpack, shuffle, two rounds of 128-bit lane shuffles); the
 * edges that are not whole blocks by the portable loops. -mavx512f. */
#include <immintrin.h>

#include "transpose.h"

/* r[i] (row i of the block) becomes column i. */
static inline void transpose16(__m512 r[16])
{
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int h = 0; h < 16; h += 8)
        for (int i = 0; i < 4; i++) {
            t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
            t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xDD);
        }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    }
}

void attn_transpose_avx512(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                           int32_t n_rows, int32_t n_cols, const float *div)
{
    const int32_t rows16 = n_rows / 16 * 16, cols16 = n_cols / 16 * 16;
    for (int32_t r0 = 0; r0 < rows16; r0 += 16)
        for (int32_t c0 = 0; c0 < cols16; c0 += 16) {
            __m512 x[16];
            for (int i = 0; i < 16; i++)
                x[i] = _mm512_loadu_ps(src + (size_t)(r0 + i) * src_ld + (size_t)c0);
            transpose16(x);
            for (int i = 0; i < 16; i++) {
                if (div)
                    x[i] = _mm512_div_ps(x[i], _mm512_set1_ps(div[c0 + i]));
                _mm512_storeu_ps(dst + (size_t)(c0 + i) * dst_ld + (size_t)r0, x[i]);
            }
        }
    attn_transpose_edges(src, src_ld, dst, dst_ld, n_rows, n_cols, div, 16);
}
