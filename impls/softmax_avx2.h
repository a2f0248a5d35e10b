/* softmax_avx2.h — one key block's online-softmax step over a tile in the
 * driver's layout (scores[j][r], rows a multiple of 8: flash_driver.h), in
 * AVX2 + FMA, for kernels whose GEMMs are not their own (xsmm): the row max
 * of the scaled scores, m and l updated, the weights written over the
 * scores, alpha[r] = exp(m - m'). Compiled with its ISA's flags in its own
 * file: call only when attn_cpu() has AVX2 and FMA. */
#ifndef ATTN_SOFTMAX_AVX2_H
#define ATTN_SOFTMAX_AVX2_H

#include <stdint.h>

#include "flash_driver.h"

/* Keys [j0, j0 + nb) of tile t (masked: -inf where a row does not see the
 * key). The same bits as these plain C passes, which xsmm ran before,
 * with attn_exp_avx2 as their exp: x = s·scale (or -inf), m' = the max
 * over x skipping NaN, shift = m' or 0 where m' = -inf, alpha = exp(m -
 * shift), p = exp(x - shift), l = l·alpha + Σ_j p in key order (a multiply
 * and an add, not an FMA). Two passes over the scores instead of five.
 * Returns nonzero when some alpha is not 1 (the accumulator needs its
 * rescale). */
int attn_block_softmax_avx2(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha);

#endif
