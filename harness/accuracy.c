#include "accuracy.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

int attn_check_output(const attn_variant *v, const attn_problem *p, const float *o,
                      int64_t row_stride, attn_err_stats *out)
{
    const attn_shape *s = &p->shape;
    /* The reference sees the inputs and the shape as the user gave them
     * (scale 0 included), nothing the dispatcher derived. */
    const attn_ref_input in = attn_ref_input_make(s, p->q, p->k, p->v);
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
            attn_reference_row(&in, b, h, i, &r);
            attn_err_row(&partial[t], &in, b, h, i, &r, o + (size_t)row * s->d_v, v->exp_ulps,
                         attn_variant_rescales(v, p->threads, r.n_seen));
        }
    }
    attn_err_init(out);
    for (int t = 0; t < threads; t++)
        attn_err_merge(out, &partial[t]);
    free(scratch);
    free(partial);
    return ATTN_OK;
}

static const uint32_t guard_bits = 0x7FC0DEADu; /* a quiet NaN with a payload */

static void fill_bits(float *x, size_t n, uint32_t bits)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &bits, sizeof bits);
}

static int guards_intact(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        if (b != guard_bits)
            return 0;
    }
    return 1;
}

int attn_case_buffers_alloc(attn_case_buffers *b, const attn_shape *s)
{
    b->o_elems = attn_o_elems(s);
    b->q = malloc(sizeof(float) * attn_q_elems(s));
    b->k = malloc(sizeof(float) * attn_kv_elems(s, s->d_k));
    b->v = malloc(sizeof(float) * attn_kv_elems(s, s->d_v));
    b->o_block = malloc(sizeof(float) * (b->o_elems + 2 * ATTN_GUARD_FLOATS));
    b->o = b->o_block ? b->o_block + ATTN_GUARD_FLOATS : NULL;
    return b->q && b->k && b->v && b->o_block ? 0 : -1;
}

void attn_case_buffers_free(attn_case_buffers *b)
{
    free(b->q);
    free(b->k);
    free(b->v);
    free(b->o_block);
}

/* One run of `v` on the data in `b`, checked on every row. Returns 0, or -1
 * with `why` set when the run itself failed. */
int attn_verify_run(const attn_variant *v, const attn_shape *s, attn_case_buffers *b,
                    attn_err_stats *st, char *why, size_t cap)
{
    fill_bits(b->o_block, ATTN_GUARD_FLOATS, guard_bits);
    fill_bits(b->o, b->o_elems, ATTN_UNSET_BITS);
    fill_bits(b->o + b->o_elems, ATTN_GUARD_FLOATS, guard_bits);
    attn_run_report report;
    char msg[256];
    int rc = attn_run_variant(v, s, b->q, b->k, b->v, b->o, &report, msg, sizeof msg);
    if (rc != ATTN_OK) {
        snprintf(why, cap, "attn_run returned %d: %s", rc, msg);
        return -1;
    }
    if (!guards_intact(b->o_block, ATTN_GUARD_FLOATS) ||
        !guards_intact(b->o + b->o_elems, ATTN_GUARD_FLOATS)) {
        snprintf(why, cap, "guard bytes around O overwritten");
        return -1;
    }
    if (!report.workspace_guard_ok) {
        snprintf(why, cap, "guard bytes around the workspace overwritten");
        return -1;
    }
    attn_problem p = attn_problem_make(s, b->q, b->k, b->v, NULL);
    if (attn_check_output(v, &p, b->o, 1, st) != ATTN_OK) {
        snprintf(why, cap, "out of memory for the reference");
        return -1;
    }
    return 0;
}
