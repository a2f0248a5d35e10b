/* flash_running_max.h — the online softmax's per-block state update, one
 * definition for every kernel written on the vec_* primitives (vec_avx2.h,
 * vec_avx512.h, vec_portable16.h; include one of them first): the block
 * kernels of flash_block_generic.h and avx512_bf16's. */
#ifndef ATTN_FLASH_RUNNING_MAX_H
#define ATTN_FLASH_RUNNING_MAX_H

#include "flash_driver.h"

/* The new running max m' = max(m, the block's row max bmax) stored in
 * t->m, the weights' shift (m', or 0 for a row that has seen nothing yet:
 * exp(-inf - 0) = 0) and alpha = exp(m - shift) for the row vectors [0, nv).
 * Returns nonzero when some row's max moved (alpha != 1). */
FLASH_INLINE int running_max(const flash_tile *t, const int nv, const vec_f *bmax, vec_f *shift,
                             vec_f *alpha)
{
    int moved = 0;
    for (int v = 0; v < nv; v++) {
        vec_f m = vec_load(t->m + VEC_LANES * v);
        vec_f m_new = vec_max_nan_skips(bmax[v], m);
        shift[v] = vec_zero_where_minus_inf(m_new);
        alpha[v] = vec_exp(vec_sub(m, shift[v]));
        moved |= vec_any_not_one(alpha[v]);
        vec_store(t->m + VEC_LANES * v, m_new);
    }
    return moved != 0;
}

/* l = l·alpha + the block's sum of weights, row vectors [0, nv). */
FLASH_INLINE void running_sum(const flash_tile *t, const int nv, const vec_f *alpha,
                              const vec_f *sum)
{
    for (int v = 0; v < nv; v++)
        vec_store(t->l + VEC_LANES * v,
                  vec_fmadd(vec_load(t->l + VEC_LANES * v), alpha[v], sum[v]));
}

#endif
