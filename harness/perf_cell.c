#include "perf_cell.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "perf_cases.h"

int attn_perf_skip_reason(const attn_variant *v, const attn_shape *s, int threads,
                          size_t *workspace_bytes, char *why, size_t cap)
{
    *workspace_bytes = 0;
    attn_problem p = attn_problem_make(s, NULL, NULL, NULL, NULL);
    p.threads = threads;
    size_t bytes = 0;
    int ws_rc = v->workspace_size(&p, &bytes);
    if (ws_rc == ATTN_OK)
        *workspace_bytes = bytes;
    if (!attn_variant_runnable(v)) {
        char missing[128];
        attn_variant_missing(v, missing, sizeof missing);
        snprintf(why, cap, "needs %s", missing);
        return 1;
    }
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

int attn_perf_copies(const attn_shape *s, long llc_bytes)
{
    if (!attn_perf_bandwidth_bound(s))
        return 1;
    double bytes = attn_perf_bytes(s);
    double want = 2.0 * (double)(llc_bytes > 0 ? llc_bytes : default_llc_bytes);
    double copies = ceil(want / bytes);
    return copies < 1 ? 1 : copies > MAX_COPIES ? MAX_COPIES : (int)copies;
}

static float *alloc_copies(size_t stride, int copies)
{
    size_t bytes = stride * (size_t)copies * sizeof(float);
    return aligned_alloc(64, bytes ? bytes : 64);
}

int attn_perf_cell_setup(attn_perf_cell *c, const attn_variant *v, const attn_shape *s, int threads,
                         long llc_bytes, char *why, size_t cap)
{
    memset(c, 0, sizeof *c);
    c->variant = v;
    c->shape = *s;
    c->threads = threads;
    c->copies = attn_perf_copies(s, llc_bytes);
    c->q_stride = attn_line_floats(attn_q_elems(s));
    c->k_stride = attn_line_floats(attn_kv_elems(s, s->d_k));
    c->v_stride = attn_line_floats(attn_kv_elems(s, s->d_v));
    c->o_stride = attn_line_floats(attn_o_elems(s));
    c->q = alloc_copies(c->q_stride, c->copies);
    c->k = alloc_copies(c->k_stride, c->copies);
    c->v = alloc_copies(c->v_stride, c->copies);
    c->o = alloc_copies(c->o_stride, c->copies);
    if (!c->q || !c->k || !c->v || !c->o) {
        snprintf(why, cap, "cannot allocate the inputs (%d copies)", c->copies);
        attn_perf_cell_free(c);
        return -1;
    }
    attn_case data = {.shape = *s, .data = DATA_NORMAL};
    c->shape = attn_case_fill(&data, 1, c->q, c->k, c->v);
    for (int i = 1; i < c->copies; i++) {
        memcpy(c->q + i * c->q_stride, c->q, sizeof(float) * c->q_stride);
        memcpy(c->k + i * c->k_stride, c->k, sizeof(float) * c->k_stride);
        memcpy(c->v + i * c->v_stride, c->v, sizeof(float) * c->v_stride);
    }
    memset(c->o, 0, sizeof(float) * c->o_stride * (size_t)c->copies);
    c->problem = attn_problem_make(&c->shape, c->q, c->k, c->v, NULL);
    c->problem.o = c->o;
    c->problem.threads = threads;
    if (v->workspace_size(&c->problem, &c->workspace_bytes) != ATTN_OK) {
        snprintf(why, cap, "workspace size overflows");
        attn_perf_cell_free(c);
        return -1;
    }
    /* Never NULL, like the dispatcher's, even for an empty workspace. */
    c->workspace = aligned_alloc(64, ((c->workspace_bytes + 63) & ~(size_t)63) + 64);
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
    c->problem.q = c->q + i * c->q_stride;
    c->problem.k = c->k + i * c->k_stride;
    c->problem.v = c->v + i * c->v_stride;
    c->problem.o = c->o + i * c->o_stride;
    omp_set_num_threads(c->threads);
    return c->variant->run(&c->problem, c->workspace);
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
