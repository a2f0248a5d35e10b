/* transpose_avx512.c — transpose.h's transpose in 16 x 16 blocks of zmm
 * registers (unpack, shuffle, two rounds of 128-bit lane shuffles),
 * through the block loop of transpose_blocks.h. -mavx512f. */
#include <immintrin.h>

#define TRANSPOSE_VEC __m512
#define TRANSPOSE_LANES 16
#define TRANSPOSE_LOADU _mm512_loadu_ps
#define TRANSPOSE_STOREU _mm512_storeu_ps
#define TRANSPOSE_DIV _mm512_div_ps
#define TRANSPOSE_SET1 _mm512_set1_ps

/* r[i] (row i of the block) becomes column i. */
static inline void transpose_block(__m512 r[16])
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

#include "transpose_blocks.h"

void attn_transpose_avx512(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                           int32_t n_rows, int32_t n_cols, const float *div)
{
    transpose_blocks(src, src_ld, dst, dst_ld, n_rows, n_cols, div);
}
