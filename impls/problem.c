/* The problem layer (problem.h): shape checks and the problem a variant is
 * handed. Visibility is in visibility.c, alone (see problem.h). */
#include "problem.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (msg)                                                                                   \
            snprintf(msg, cap, __VA_ARGS__);                                                       \
        return ATTN_EINVAL;                                                                        \
    } while (0)

static int mul_size(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* Bytes of a [x][y][n][d] float tensor, or -1 on overflow. */
static int tensor_bytes(int32_t x, int32_t y, int32_t n, int32_t d, size_t *bytes)
{
    size_t t = sizeof(float);
    if (mul_size(t, (size_t)x, &t) || mul_size(t, (size_t)y, &t) || mul_size(t, (size_t)n, &t) ||
        mul_size(t, (size_t)d, &t))
        return -1;
    /* Element indices are computed in size_t but also as ptrdiff_t by callers. */
    if (t > (size_t)PTRDIFF_MAX)
        return -1;
    *bytes = t;
    return 0;
}

int attn_check_shape(const attn_shape *s, char *msg, size_t cap)
{
    if (msg && cap)
        msg[0] = '\0';
    if (!s)
        FAIL("shape is NULL");
    const struct {
        const char *name;
        int32_t value;
    } positive[] = {{"batch", s->batch}, {"heads_q", s->heads_q}, {"heads_kv", s->heads_kv},
                    {"n_q", s->n_q},     {"n_kv", s->n_kv},       {"d_k", s->d_k},
                    {"d_v", s->d_v}};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        if (positive[i].value < 1)
            FAIL("%s = %d must be >= 1", positive[i].name, (int)positive[i].value);
    /* The kernels walk rows and keys in int32 steps of up to a few hundred
     * (a key block, a tile): a count within one step of INT32_MAX would
     * step past it. */
    const struct {
        const char *name;
        int32_t value;
    } rows[] = {{"n_q", s->n_q}, {"n_kv", s->n_kv}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].value > ATTN_MAX_ROWS)
            FAIL("%s = %d exceeds %d, the most rows a head may have", rows[i].name,
                 (int)rows[i].value, (int)ATTN_MAX_ROWS);
    if (s->heads_q % s->heads_kv != 0)
        FAIL("heads_kv = %d does not divide heads_q = %d", (int)s->heads_kv, (int)s->heads_q);
    if (s->causal != 0 && s->causal != 1)
        FAIL("causal = %d must be 0 or 1", (int)s->causal);
    if (!isfinite(s->scale))
        FAIL("scale = %g must be finite (0 means 1/sqrt(d_k))", (double)s->scale);
    size_t bytes;
    if (tensor_bytes(s->batch, s->heads_q, s->n_q, s->d_k, &bytes))
        FAIL("Q of batch %d x heads_q %d x n_q %d x d_k %d floats overflows the address space",
             (int)s->batch, (int)s->heads_q, (int)s->n_q, (int)s->d_k);
    if (tensor_bytes(s->batch, s->heads_kv, s->n_kv, s->d_k, &bytes))
        FAIL("K of batch %d x heads_kv %d x n_kv %d x d_k %d floats overflows the address space",
             (int)s->batch, (int)s->heads_kv, (int)s->n_kv, (int)s->d_k);
    if (tensor_bytes(s->batch, s->heads_kv, s->n_kv, s->d_v, &bytes))
        FAIL("V of batch %d x heads_kv %d x n_kv %d x d_v %d floats overflows the address space",
             (int)s->batch, (int)s->heads_kv, (int)s->n_kv, (int)s->d_v);
    if (tensor_bytes(s->batch, s->heads_q, s->n_q, s->d_v, &bytes))
        FAIL("O of batch %d x heads_q %d x n_q %d x d_v %d floats overflows the address space",
             (int)s->batch, (int)s->heads_q, (int)s->n_q, (int)s->d_v);
    return ATTN_OK;
}

attn_problem attn_problem_make_typed(const attn_shape *s, const attn_types *t, int32_t p_round,
                                     const void *q, const void *k, const void *v, void *o)
{
    return (attn_problem){
        .shape = *s,
        .scale = s->scale != 0.0f ? s->scale : 1.0f / sqrtf((float)s->d_k),
        .group = s->heads_q / s->heads_kv,
        .threads = omp_get_max_threads(),
        .types = *t,
        .p_round = p_round,
        .q = q,
        .k = k,
        .v = v,
        .o = o,
    };
}

attn_problem attn_problem_make(const attn_shape *s, const float *q, const float *k, const float *v,
                               float *o)
{
    const attn_types f32 = {ATTN_F32, ATTN_F32, ATTN_F32};
    return attn_problem_make_typed(s, &f32, ATTN_F32, q, k, v, o);
}

int32_t attn_first_seeing_row(const attn_shape *s)
{
    /* The keys a row sees never decrease along the rows, so bisect on the
     * visibility helper: O(log n_q), where a scan would take seconds for
     * the 2^31 rows a caller may ask about. */
    int32_t lo = 0, hi = s->n_q; /* the answer is in [lo, hi] */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (attn_keys_seen(s, mid) == 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int attn_zero_rows_before(const attn_problem *p, int32_t first)
{
    const attn_shape *s = &p->shape;
    const int64_t heads = (int64_t)s->batch * s->heads_q;
    if (first <= 0)
        return ATTN_OK;
#pragma omp for schedule(static)
    for (int64_t bh = 0; bh < heads; bh++)
        memset(attn_o_head(p, (int32_t)(bh / s->heads_q), (int32_t)(bh % s->heads_q)), 0,
               attn_dtype_size(p->types.o) * (size_t)first * (size_t)s->d_v); /* +0 in any type */
    return ATTN_OK;
}
