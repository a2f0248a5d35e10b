/* block_softmax_vec.h — block_softmax.h's step in one ISA's vectors,
 * written against the primitives of vec_avx2.h / vec_avx512.h: a file
 * includes one of them, then this, and gives block_softmax_vec a public
 * name (block_softmax_avx2.c, block_softmax_avx512.c). Two passes over a
 * row vector's scores where the C form takes five, the same bits for the
 * same exp (tests/test_block_softmax.c). */
#ifndef ATTN_BLOCK_SOFTMAX_VEC_H
#define ATTN_BLOCK_SOFTMAX_VEC_H

#include <math.h>

#include "block_softmax.h"

/* A row vector's scores of key `key`, scaled, -inf in the lanes whose row
 * does not see it (its seen count is not above it). */
static inline vec_f scaled_scores(const float *s, vec_f scale, int masked, vec_i seen, int32_t key)
{
    const vec_f x = vec_mul(vec_load(s), scale);
    return masked ? vec_select(vec_sees(seen, key), x, vec_set1(-INFINITY)) : x;
}

static int block_softmax_vec(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha)
{
    const int32_t rows = t->rows;
    const vec_f scale = vec_set1(t->scale);
    int moved = 0;
    /* One row vector at a time: its max, then its weights and sum, in
     * registers; a block's scores (at most 64 x 64 floats) stay in L1. */
    for (int32_t r = 0; r < rows; r += VEC_LANES) {
        const vec_i seen = masked ? vec_load_i32(t->seen + r) : vec_zero_i32();
        const vec_f m = vec_load(t->m + r);
        float *s = t->scores + r;
        /* max(x, m'): m' where x is NaN, so a NaN score reaches O through
         * its exp, not through the max. */
        vec_f m_new = m;
        for (int32_t j = 0; j < nb; j++)
            m_new = vec_max_nan_skips(
                scaled_scores(s + (size_t)j * rows, scale, masked, seen, j0 + j), m_new);
        /* A row that has seen only -inf shifts by 0: exp(-inf) = 0, not
         * exp(-inf - -inf) = NaN. */
        const vec_f shift = vec_zero_where_minus_inf(m_new);
        const vec_f a = vec_exp(vec_sub(m, shift));
        vec_store(alpha + r, a);
        vec_store(t->m + r, m_new);
        /* The accumulator's rescale, here where a is in a register, and
         * only for a row vector whose alpha moved (x·1 = x: skipping it
         * changes no bit). As a plain C loop of its own after the step,
         * built for the baseline ISA, it took 5 % of xsmm's call
         * (perf, n 4096, 8 heads, d 128, 1 thread, Sapphire Rapids). */
        if (vec_any_not_one(a)) {
            moved = 1;
            for (int32_t c = 0; c < t->d_v; c++) {
                float *acc = t->acc + (size_t)c * rows + r;
                vec_store(acc, vec_mul(vec_load(acc), a));
            }
        }
        vec_f sum = vec_zero();
        for (int32_t j = 0; j < nb; j++) {
            float *sj = s + (size_t)j * rows;
            const vec_f p = vec_exp(vec_sub(scaled_scores(sj, scale, masked, seen, j0 + j), shift));
            vec_store(sj, p);
            sum = vec_add(sum, p);
        }
        vec_store(t->l + r, vec_add(vec_mul(vec_load(t->l + r), a), sum));
    }
    return moved != 0;
}

#endif
