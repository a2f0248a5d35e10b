/* block_softmax.h — one key block's online-softmax step over a tile in the
 * driver's layout (scores[j][r]: flash_driver.h), for kernels whose GEMMs
 * are not their own (xsmm): the row max of the scaled scores, m and l
 * updated, the weights written over the scores, alpha[r] = exp(m - m').
 * Three forms with the same bits for the same exp:
 *   attn_block_softmax_c       plain C passes over contiguous rows with any
 *                              exp over arrays (libm's, exp_array.h's);
 *   attn_block_softmax_avx2    AVX2 + FMA with attn_exp_avx2, in two passes
 *                              instead of five (block_softmax_avx2.c, built
 *                              with its ISA's flags: call only when
 *                              attn_cpu() has AVX2 and FMA; rows a multiple
 *                              of 8);
 *   attn_block_softmax_avx512  the same with attn_exp_avx512 on 16 lanes
 *                              (block_softmax_avx512.c: AVX512F and FMA;
 *                              rows a multiple of 16).
 * The two vector forms are one body (block_softmax_vec.h) on each ISA's
 * primitives, and store alpha whole vectors at a time: alpha 64-byte
 * aligned for them.
 * All take keys [j0, j0 + nb) of tile t (masked: -inf where a row does not
 * see the key): x = s·scale (or -inf), m' = the max over x skipping NaN,
 * shift = m' or 0 where m' = -inf, alpha = exp(m - shift), p = exp(x -
 * shift), l = l·alpha + Σ_j p in key order (a multiply and an add, not an
 * FMA), and the accumulator acc[c][r] (d_v columns, leading dimension
 * rows) multiplied by alpha[r] (the vector forms skip a row vector whose
 * alphas are all 1: the same bits). All return nonzero when some alpha is
 * not 1. */
#ifndef ATTN_BLOCK_SOFTMAX_H
#define ATTN_BLOCK_SOFTMAX_H

#include <stddef.h>
#include <stdint.h>

#include "exp_array.h"
#include "flash_driver.h"

/* Tiles of up to 64 rows (flash_driver.h's most). */
int attn_block_softmax_c(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha,
                         attn_exp_array_fn exp_array);
int attn_block_softmax_avx2(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha);
int attn_block_softmax_avx512(const flash_tile *t, int32_t j0, int32_t nb, int masked,
                              float *alpha);

#endif
