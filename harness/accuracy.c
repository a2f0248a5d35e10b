#include "accuracy.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

attn_problem attn_problem_for(const attn_shape *s, const float *q, const float *k, const float *v)
{
    return (attn_problem){
        .shape = *s,
        .scale = s->scale != 0.0f ? s->scale : 1.0f / sqrtf((float)s->d_k),
        .group = s->heads_q / s->heads_kv,
        .threads = omp_get_max_threads(),
        .q = q,
        .k = k,
        .v = v,
        .o = NULL,
    };
}

int attn_check_output(const attn_variant *v, const attn_problem *p, const float *o,
                      int64_t row_stride, attn_err_stats *out)
{
    const attn_shape *s = &p->shape;
    const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
    const size_t per_row = 3 * (size_t)s->d_v + (size_t)s->n_kv;
    const int threads = omp_get_max_threads();
    double *scratch = malloc(sizeof(double) * per_row * (size_t)threads);
    attn_err_stats *partial = calloc((size_t)threads, sizeof *partial);
    if (row_stride < 1)
        row_stride = 1;
    if (!scratch || !partial) {
        free(scratch);
        free(partial);
        return ATTN_ENOMEM;
    }
    /* Per-thread partial statistics merged in thread order: the report is
     * the same whatever the scheduling. */
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num();
        double *mine = scratch + per_row * (size_t)t;
        attn_ref_row r = {.o = mine,
                          .D = mine + s->d_v,
                          .M = mine + 2 * (size_t)s->d_v,
                          .scores = mine + 3 * (size_t)s->d_v};
        attn_err_init(&partial[t]);
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; row += row_stride) {
            int32_t i = (int32_t)(row % s->n_q);
            int32_t h = (int32_t)(row / s->n_q % s->heads_q);
            int32_t b = (int32_t)(row / s->n_q / s->heads_q);
            attn_reference_row(p, b, h, i, &r);
            attn_err_row(&partial[t], p, b, h, i, &r, o + (size_t)row * s->d_v, v->exp_ulps,
                         attn_rescales(v, p, r.n_seen));
        }
    }
    attn_err_init(out);
    for (int t = 0; t < threads; t++)
        attn_err_merge(out, &partial[t]);
    free(scratch);
    free(partial);
    return ATTN_OK;
}
