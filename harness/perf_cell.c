#include "perf_cell.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "perf_cases.h"

int attn_perf_skip_reason(const attn_variant *v, const attn_perf_case *pc, size_t *workspace_bytes,
                          char *why, size_t cap)
{
    *workspace_bytes = 0;
    const attn_shape *s = &pc->shape;
    attn_problem p = attn_problem_make_typed(s, &pc->types, attn_variant_default_p_round(v), NULL,
                                             NULL, NULL, NULL);
    p.threads = pc->threads;
    size_t bytes = 0;
    int ws_rc = attn_variant_workspace_typed(v, &p, &bytes);
    if (ws_rc == ATTN_OK)
        *workspace_bytes = bytes;
    if (!attn_variant_runnable(v)) {
        char missing[128];
        attn_variant_missing(v, missing, sizeof missing);
        snprintf(why, cap, "needs %s", missing);
        return 1;
    }
    /* The class the public API runs the variant in (P in f32, or the
     * rounded one of a variant built around it). */
    const attn_run_options opt = {pc->types, attn_variant_default_p_round(v)};
    if (attn_variant_check_types(v, &opt, why, cap) != ATTN_OK)
        return 1; /* "variant blas does not take kv = bf16" */
    if (ws_rc != ATTN_OK) {
        snprintf(why, cap, "workspace size overflows");
        return 1;
    }
    if (bytes > attn_workspace_limit()) {
        snprintf(why, cap, "workspace %zu bytes exceeds limit %zu", bytes, attn_workspace_limit());
        return 1;
    }
    if (attn_cost_too_slow(v, s)) {
        snprintf(why, cap, "%s at n >= %d takes minutes per call", v->name,
                 ATTN_QUADRATIC_ONE_THREAD_MAX_N);
        return 1;
    }
    return 0;
}

/* Never more: 64 copies of a tiny decode shape are plenty. */
enum { MAX_COPIES = 64 };
/* When the cache size is unknown. */
static const long default_llc_bytes = 256L << 20;

int attn_perf_copies(const attn_shape *s, const attn_types *t, long llc_bytes)
{
    if (!attn_perf_bandwidth_bound(s))
        return 1;
    double bytes = attn_perf_bytes(s, t);
    double want = 2.0 * (double)(llc_bytes > 0 ? llc_bytes : default_llc_bytes);
    double copies = ceil(want / bytes);
    return copies < 1 ? 1 : copies > MAX_COPIES ? MAX_COPIES : (int)copies;
}

/* Bytes of one copy of a tensor of n elements of type t: whole cache lines,
 * so every copy starts 64-byte aligned. */
static size_t copy_stride(size_t n, int32_t t)
{
    return (n * attn_dtype_size(t) + 63) & ~(size_t)63;
}

static void *alloc_copies(size_t stride, int copies, attn_pages pages)
{
    return attn_big_alloc(stride * (size_t)copies, pages);
}

/* The f32 data of one tensor rounded to nearest even into its type, in
 * parallel: a 32768-key cache is 67 M elements. */
static void narrow_into(void *dst, int32_t t, const float *src, size_t n)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < (int64_t)n; i++)
        attn_store_elem(dst, t, (size_t)i, src[i]);
}

/* Fills copy 0 of Q, K, V: straight into an f32 tensor, through an f32
 * scratch copy into a narrow one. Returns the generator's shape, or a
 * shape with batch 0 when a scratch cannot be allocated. */
static attn_shape fill_inputs(attn_perf_cell *c)
{
    const attn_shape *s = &c->shape;
    const int32_t type[3] = {c->types.q, c->types.kv, c->types.kv};
    const size_t n[3] = {attn_q_elems(s), attn_kv_elems(s, s->d_k), attn_kv_elems(s, s->d_v)};
    void *dst[3] = {c->q, c->k, c->v};
    float *f32[3] = {NULL, NULL, NULL};
    attn_shape filled = *s;
    filled.batch = 0;
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        f32[i] = type[i] == ATTN_F32 ? dst[i] : malloc(sizeof(float) * (n[i] ? n[i] : 1));
        ok &= f32[i] != NULL;
    }
    if (ok) {
        attn_case data = {.shape = *s, .data = DATA_NORMAL};
        filled = attn_case_fill(&data, 1, f32[0], f32[1], f32[2]);
        for (int i = 0; i < 3; i++)
            if (type[i] != ATTN_F32)
                narrow_into(dst[i], type[i], f32[i], n[i]);
    }
    for (int i = 0; i < 3; i++)
        if (type[i] != ATTN_F32)
            free(f32[i]);
    return filled;
}

int attn_perf_cell_setup(attn_perf_cell *c, const attn_variant *v, const attn_perf_case *pc,
                         long llc_bytes, attn_pages pages, char *why, size_t cap)
{
    const attn_shape *s = &pc->shape;
    memset(c, 0, sizeof *c);
    c->variant = v;
    c->shape = *s;
    c->types = pc->types;
    c->threads = pc->threads;
    c->copies = attn_perf_copies(s, &pc->types, llc_bytes);
    c->q_stride = copy_stride(attn_q_elems(s), c->types.q);
    c->k_stride = copy_stride(attn_kv_elems(s, s->d_k), c->types.kv);
    c->v_stride = copy_stride(attn_kv_elems(s, s->d_v), c->types.kv);
    c->o_stride = copy_stride(attn_o_elems(s), c->types.o);
    c->q = alloc_copies(c->q_stride, c->copies, pages);
    c->k = alloc_copies(c->k_stride, c->copies, pages);
    c->v = alloc_copies(c->v_stride, c->copies, pages);
    c->o = alloc_copies(c->o_stride, c->copies, pages);
    if (!c->q || !c->k || !c->v || !c->o) {
        snprintf(why, cap, "cannot allocate the inputs (%d copies)", c->copies);
        attn_perf_cell_free(c);
        return -1;
    }
    c->shape = fill_inputs(c);
    if (c->shape.batch == 0) {
        snprintf(why, cap, "cannot allocate the f32 inputs to round from");
        attn_perf_cell_free(c);
        return -1;
    }
    for (int i = 1; i < c->copies; i++) {
        memcpy((char *)c->q + i * c->q_stride, c->q, c->q_stride);
        memcpy((char *)c->k + i * c->k_stride, c->k, c->k_stride);
        memcpy((char *)c->v + i * c->v_stride, c->v, c->v_stride);
    }
    memset(c->o, 0, c->o_stride * (size_t)c->copies);
    c->problem = attn_problem_make_typed(&c->shape, &c->types, attn_variant_default_p_round(v),
                                         c->q, c->k, c->v, c->o);
    c->problem.threads = c->threads;
    if (attn_variant_workspace_typed(v, &c->problem, &c->workspace_bytes) != ATTN_OK) {
        snprintf(why, cap, "workspace size overflows");
        attn_perf_cell_free(c);
        return -1;
    }
    /* Never NULL, like the dispatcher's, even for an empty workspace. */
    c->workspace = attn_big_alloc(c->workspace_bytes + 64, pages);
    if (!c->workspace) {
        snprintf(why, cap, "cannot allocate %zu bytes of workspace", c->workspace_bytes);
        attn_perf_cell_free(c);
        return -1;
    }
    /* Fault the pages in now, not in the first timed call. */
    memset(c->workspace, 0, c->workspace_bytes);
    return 0;
}

int attn_perf_cell_run(attn_perf_cell *c)
{
    const size_t i = (size_t)c->next;
    c->next = c->next + 1 < c->copies ? c->next + 1 : 0;
    c->problem.q = (const char *)c->q + i * c->q_stride;
    c->problem.k = (const char *)c->k + i * c->k_stride;
    c->problem.v = (const char *)c->v + i * c->v_stride;
    c->problem.o = (char *)c->o + i * c->o_stride;
    omp_set_num_threads(c->threads);
    return attn_variant_run_in(c->variant, &c->problem, c->workspace);
}

void attn_perf_cell_free(attn_perf_cell *c)
{
    free(c->q);
    free(c->k);
    free(c->v);
    free(c->o);
    free(c->workspace);
    memset(c, 0, sizeof *c);
}
