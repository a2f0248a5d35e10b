#include "accuracy.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

/* Row `row` of an O of type t widened to f32; an element still holding
 * the "never written" pattern of its type becomes ATTN_UNSET_BITS, so the
 * rules see it whatever the type. */
static uint16_t unset_bits16(int32_t t)
{
    /* Signalling NaNs no conversion produces (those quiet their NaNs). */
    return t == ATTN_F16 ? 0x7D01u : 0x7FA1u;
}

static const float *o_row_f32(const void *o, int32_t t, size_t row, int32_t d_v, float *buf)
{
    if (t == ATTN_F32)
        return (const float *)o + row * (size_t)d_v;
    const uint16_t *h = (const uint16_t *)o + row * (size_t)d_v;
    const uint32_t unset = ATTN_UNSET_BITS;
    for (int32_t c = 0; c < d_v; c++) {
        if (h[c] == unset_bits16(t))
            memcpy(&buf[c], &unset, sizeof unset);
        else
            buf[c] = attn_load_elem(h, t, (size_t)c);
    }
    return buf;
}

int attn_check_output(const attn_variant *v, const attn_problem *p, const void *o,
                      int64_t row_stride, attn_err_stats *out)
{
    const attn_shape *s = &p->shape;
    /* The reference sees the inputs and the shape as the user gave them
     * (scale 0 included), nothing the dispatcher derived. */
    const attn_ref_input in =
        attn_ref_input_make_typed(s, &p->types, p->q, p->k, p->v, v->denormals_are_zero);
    const attn_err_class cls = {p->types.o, p->p_round};
    const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
    if (row_stride < 1)
        row_stride = 1;
    /* doubles a row: o, D, M, scores; then d_v floats of widened O (as doubles' room) */
    const size_t per_row = 4 * (size_t)s->d_v + (size_t)s->n_kv;
    /* The rows checked, in chunks of `together`: the reference takes a
     * chunk's rows of one K/V head at once (attn_reference_rows). */
    const int32_t together = attn_ref_rows_within(per_row);
    const int64_t checked = (rows + row_stride - 1) / row_stride;
    const int64_t chunks = (checked + together - 1) / together;
    const int threads = omp_get_max_threads();
    double *scratch = malloc(sizeof(double) * per_row * (size_t)together * (size_t)threads);
    attn_err_stats *partial = calloc((size_t)threads, sizeof *partial);
    if (!scratch || !partial) {
        free(scratch);
        free(partial);
        return ATTN_ENOMEM;
    }
    int failed = 0;
    /* Per-thread partial statistics merged in thread order: the report is
     * the same whatever the scheduling. */
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        int t = omp_get_thread_num();
        double *mine = scratch + per_row * (size_t)together * (size_t)t;
        attn_ref_row r[ATTN_REF_ROWS_MAX];
        for (int32_t m = 0; m < together; m++) {
            double *at = mine + per_row * m;
            r[m] = (attn_ref_row){.o = at,
                                  .D = at + s->d_v,
                                  .M = at + 2 * (size_t)s->d_v,
                                  .scores = at + 3 * (size_t)s->d_v};
        }
        attn_err_init(&partial[t]);
#pragma omp for schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t first = c * together;
            const int64_t last = first + together < checked ? first + together : checked;
            for (int64_t k = first; k < last;) {
                int32_t b = 0, h[ATTN_REF_ROWS_MAX], i[ATTN_REF_ROWS_MAX];
                const int32_t n =
                    attn_ref_rows_at(s, k * row_stride, row_stride, (int32_t)(last - k), &b, h, i);
                if (attn_reference_rows(&in, b, h, i, n, r) != ATTN_OK) {
                    failed = 1;
                    break;
                }
                for (int32_t m = 0; m < n; m++) {
                    const float *got = o_row_f32(o, p->types.o, (size_t)((k + m) * row_stride),
                                                 s->d_v, (float *)(r[m].scores + s->n_kv));
                    attn_err_row(&partial[t], &in, b, h[m], i[m], &r[m], got, v->exp_ulps,
                                 attn_variant_rescales(v, p->threads, r[m].n_seen), &cls);
                }
                k += n;
            }
        }
    }
    if (failed) {
        free(scratch);
        free(partial);
        return ATTN_ENOMEM;
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

int attn_case_buffers_alloc_typed(attn_case_buffers *b, const attn_shape *s, const attn_types *t)
{
    memset(b, 0, sizeof *b);
    b->types = *t;
    b->o_elems = attn_o_elems(s);
    size_t nq = attn_q_elems(s), nk = attn_kv_elems(s, s->d_k), nv = attn_kv_elems(s, s->d_v);
    b->q = malloc(sizeof(float) * nq);
    b->k = malloc(sizeof(float) * nk);
    b->v = malloc(sizeof(float) * nv);
    b->tq = t->q == ATTN_F32 ? (void *)b->q : malloc(2 * nq);
    b->tk = t->kv == ATTN_F32 ? (void *)b->k : malloc(2 * nk);
    b->tv = t->kv == ATTN_F32 ? (void *)b->v : malloc(2 * nv);
    b->o_block = malloc(attn_dtype_size(t->o) * b->o_elems + 2 * sizeof(float) * ATTN_GUARD_FLOATS);
    b->o = b->o_block ? b->o_block + sizeof(float) * ATTN_GUARD_FLOATS : NULL;
    return b->q && b->k && b->v && b->tq && b->tk && b->tv && b->o_block ? 0 : -1;
}

int attn_case_buffers_alloc(attn_case_buffers *b, const attn_shape *s)
{
    const attn_types f32 = {ATTN_F32, ATTN_F32, ATTN_F32};
    return attn_case_buffers_alloc_typed(b, s, &f32);
}

void attn_case_buffers_free(attn_case_buffers *b)
{
    if (b->tq != b->q)
        free(b->tq);
    if (b->tk != b->k)
        free(b->tk);
    if (b->tv != b->v)
        free(b->tv);
    free(b->q);
    free(b->k);
    free(b->v);
    free(b->o_block);
}

static void narrow(const float *src, int32_t t, void *dst, size_t n)
{
    if (dst != (const void *)src)
        for (size_t i = 0; i < n; i++)
            attn_store_elem(dst, t, i, src[i]);
}

void attn_case_buffers_narrow(attn_case_buffers *b, const attn_shape *s)
{
    narrow(b->q, b->types.q, b->tq, attn_q_elems(s));
    narrow(b->k, b->types.kv, b->tk, attn_kv_elems(s, s->d_k));
    narrow(b->v, b->types.kv, b->tv, attn_kv_elems(s, s->d_v));
}

float attn_case_buffers_o(const attn_case_buffers *b, size_t i)
{
    return attn_load_elem(b->o, b->types.o, i);
}

static void fill_unset(attn_case_buffers *b)
{
    if (b->types.o == ATTN_F32) {
        fill_bits(b->o, b->o_elems, ATTN_UNSET_BITS);
        return;
    }
    uint16_t *h = b->o, bits = unset_bits16(b->types.o);
    for (size_t i = 0; i < b->o_elems; i++)
        h[i] = bits;
}

int attn_verify_run_class(const attn_variant *v, const attn_shape *s, int32_t p_round,
                          attn_case_buffers *b, attn_err_stats *st, char *why, size_t cap)
{
    float *before = (float *)b->o_block;
    float *after = (float *)((unsigned char *)b->o + attn_dtype_size(b->types.o) * b->o_elems);
    attn_case_buffers_narrow(b, s);
    fill_bits(before, ATTN_GUARD_FLOATS, guard_bits);
    fill_unset(b);
    /* after may be only 2-byte aligned: bytes, not floats */
    for (int i = 0; i < ATTN_GUARD_FLOATS; i++)
        memcpy((unsigned char *)after + 4 * i, &guard_bits, 4);
    attn_run_report report;
    char msg[256];
    const attn_run_options opt = {b->types, p_round};
    int rc =
        attn_run_variant_typed(v, s, &opt, b->tq, b->tk, b->tv, b->o, &report, msg, sizeof msg);
    if (rc != ATTN_OK) {
        snprintf(why, cap, "attn_run returned %d: %s", rc, msg);
        return -1;
    }
    int intact = guards_intact(before, ATTN_GUARD_FLOATS);
    for (int i = 0; i < ATTN_GUARD_FLOATS; i++) {
        uint32_t g;
        memcpy(&g, (unsigned char *)after + 4 * i, 4);
        intact &= g == guard_bits;
    }
    if (!intact) {
        snprintf(why, cap, "guard bytes around O overwritten");
        return -1;
    }
    if (!report.workspace_guard_ok) {
        snprintf(why, cap, "guard bytes around the workspace overwritten");
        return -1;
    }
    attn_problem p = attn_problem_make_typed(s, &b->types, p_round, b->tq, b->tk, b->tv, NULL);
    if (attn_check_output(v, &p, b->o, 1, st) != ATTN_OK) {
        snprintf(why, cap, "out of memory for the reference");
        return -1;
    }
    return 0;
}

int attn_verify_run(const attn_variant *v, const attn_shape *s, attn_case_buffers *b,
                    attn_err_stats *st, char *why, size_t cap)
{
    return attn_verify_run_class(v, s, ATTN_F32, b, st, why, cap);
}
