/* The block loop of transpose.h's vector versions, written once and
 * compiled in each ISA's file with that file's vector type
 * (transpose_avx2.c, transpose_avx512.c define TRANSPOSE_VEC,
 * TRANSPOSE_LANES, TRANSPOSE_LOADU, TRANSPOSE_STOREU, TRANSPOSE_DIV,
 * TRANSPOSE_SET1 and a function transpose_block(TRANSPOSE_VEC r[]) that
 * turns the rows r[i] of a TRANSPOSE_LANES-square block into its columns,
 * before including it). Whole blocks here; the edges by the portable
 * loops (attn_transpose_edges). */
#ifndef ATTN_TRANSPOSE_BLOCKS_H
#define ATTN_TRANSPOSE_BLOCKS_H

#include "transpose.h"

static void transpose_blocks(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                             int32_t n_rows, int32_t n_cols, const float *div)
{
    enum { N = TRANSPOSE_LANES };
    const int32_t rows_n = n_rows / N * N, cols_n = n_cols / N * N;
    for (int32_t r0 = 0; r0 < rows_n; r0 += N)
        for (int32_t c0 = 0; c0 < cols_n; c0 += N) {
            TRANSPOSE_VEC x[N];
            for (int i = 0; i < N; i++)
                x[i] = TRANSPOSE_LOADU(src + (size_t)(r0 + i) * src_ld + (size_t)c0);
            transpose_block(x);
            for (int i = 0; i < N; i++) {
                if (div)
                    x[i] = TRANSPOSE_DIV(x[i], TRANSPOSE_SET1(div[c0 + i]));
                TRANSPOSE_STOREU(dst + (size_t)(c0 + i) * dst_ld + (size_t)r0, x[i]);
            }
        }
    attn_transpose_edges(src, src_ld, dst, dst_ld, n_rows, n_cols, div, N);
}

#endif
