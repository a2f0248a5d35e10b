/* transpose.h — the flash driver's two transposes of a tile (flash_driver.c):
 * the queries into rows-as-lanes (qt[c][r]) before the key blocks, and the
 * accumulators (acc[c][r]) back into O's rows after them, divided by each
 * row's sum l. Chosen at run time like the widening (dtype.h): 16 x 16
 * blocks in zmm registers with AVX-512F, 8 x 8 in ymm with AVX2, else
 * plain loops. Every version gives the same bits: a move, and one IEEE
 * division per element. Scalar element-by-element copies with a stride of
 * a tile's rows cost ~40 thousand cycles a 64 x 128 tile, about one key
 * block's work, so 8-13 % of a call at n = 512 (perf, cpu-clock). */
#ifndef ATTN_TRANSPOSE_H
#define ATTN_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

/* dst[c·dst_ld + r] = src[r·src_ld + c] for r < n_rows, c < n_cols; divided
 * by div[c] when div is not NULL (the division of each element alone). */
typedef void (*attn_transpose_fn)(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                                  int32_t n_rows, int32_t n_cols, const float *div);

void attn_transpose_portable(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                             int32_t n_rows, int32_t n_cols, const float *div);
/* What a version working in block x block tiles leaves: the columns past
 * its whole tiles, then the rows past them, by the portable loops. */
void attn_transpose_edges(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                          int32_t n_rows, int32_t n_cols, const float *div, int32_t block);
/* -mavx2 (transpose_avx2.c); call only with AVX2. */
void attn_transpose_avx2(const float *src, size_t src_ld, float *dst, size_t dst_ld, int32_t n_rows,
                         int32_t n_cols, const float *div);
/* -mavx512f (transpose_avx512.c); call only with AVX-512F. */
void attn_transpose_avx512(const float *src, size_t src_ld, float *dst, size_t dst_ld,
                           int32_t n_rows, int32_t n_cols, const float *div);

/* The widest of the three this CPU runs (ATTN_CPU_MASK respected). */
attn_transpose_fn attn_transpose_best(void);

#endif
