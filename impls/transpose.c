/* transpose.c — the portable transpose and the run-time choice (transpose.h). */
#include "transpose.h"

#include "cpu_features.h"

void attn_transpose_portable(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                             int32_t n_rows, int32_t n_cols, const float *div)
{
    /* 8 x 8 blocks: each block's source and destination lines stay in L1. */
    for (int32_t r0 = 0; r0 < n_rows; r0 += 8)
        for (int32_t c0 = 0; c0 < n_cols; c0 += 8) {
            const int32_t r1 = n_rows - r0 < 8 ? n_rows : r0 + 8;
            const int32_t c1 = n_cols - c0 < 8 ? n_cols : c0 + 8;
            for (int32_t c = c0; c < c1; c++)
                for (int32_t r = r0; r < r1; r++) {
                    const float x = src[(size_t)r * src_ld + (size_t)c];
                    dst[(size_t)c * dst_ld + (size_t)r] = div ? x / div[c] : x;
                }
        }
}

void attn_transpose_edges(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                          int32_t n_rows, int32_t n_cols, const float *div, int32_t block)
{
    const int32_t rows_done = n_rows / block * block, cols_done = n_cols / block * block;
    if (cols_done < n_cols)
        attn_transpose_portable(src + cols_done, src_ld, dst + (size_t)cols_done * dst_ld, dst_ld,
                                rows_done, n_cols - cols_done, div ? div + cols_done : NULL);
    if (rows_done < n_rows)
        attn_transpose_portable(src + (size_t)rows_done * src_ld, src_ld, dst + rows_done, dst_ld,
                                n_rows - rows_done, n_cols, div);
}

attn_transpose_fn attn_transpose_best(void)
{
    const uint32_t f = attn_cpu()->features;
    if (f & ATTN_CPU_AVX512F)
        return attn_transpose_avx512;
    if (f & ATTN_CPU_AVX2)
        return attn_transpose_avx2;
    return attn_transpose_portable;
}
