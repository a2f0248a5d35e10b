/* naive — the textbook, and rule B's yardstick: per head, materialise the
 * n_q x n_kv score matrix in float32, a max-shifted softmax row by row, then
 * the weighted sum P·V. Plain loops, one thread, no intrinsics. */
#include <math.h>
#include <string.h>

#include "variant.h"

/* Workspace: the head's n_q x n_kv scores, then one widened Q row, one
 * widened K or V row and one f32 output row (for f16/bf16 tensors). */
static int naive_workspace(const attn_problem *p, size_t *bytes)
{
    const attn_shape *s = &p->shape;
    size_t n, rows = (size_t)s->d_k + (size_t)(s->d_k > s->d_v ? s->d_k : s->d_v) + (size_t)s->d_v;
    if (__builtin_mul_overflow((size_t)s->n_q, (size_t)s->n_kv, &n) ||
        __builtin_add_overflow(n, rows, &n) || __builtin_mul_overflow(n, sizeof(float), bytes))
        return ATTN_ENOMEM;
    return ATTN_OK;
}

/* Row `row` (n elements) of a tensor of type t as f32: in place for f32,
 * else widened into buf. */
static const float *row_f32(const void *base, int32_t t, size_t row, int32_t n, float *buf)
{
    if (t == ATTN_F32)
        return (const float *)base + row * (size_t)n;
    for (int32_t c = 0; c < n; c++)
        buf[c] = attn_load_elem(base, t, row * (size_t)n + c);
    return buf;
}

static void naive_head(const attn_problem *p, const void *q, const void *k, const void *v, void *o,
                       float *scores)
{
    const attn_shape *s = &p->shape;
    const attn_types *ty = &p->types;
    float *qbuf = scores + (size_t)s->n_q * s->n_kv, *kvbuf = qbuf + s->d_k;
    float *obuf = kvbuf + (s->d_k > s->d_v ? s->d_k : s->d_v);
    for (int32_t i = 0; i < s->n_q; i++) {
        float *row = scores + (size_t)i * s->n_kv;
        float *out = ty->o == ATTN_F32 ? (float *)o + (size_t)i * s->d_v : obuf;
        const float *qi = row_f32(q, ty->q, (size_t)i, s->d_k, qbuf);
        int32_t seen = attn_keys_seen(s, i); /* masked keys are never read */
        if (seen == 0) {
            memset(attn_elem_at_mut(o, ty->o, (size_t)i * s->d_v), 0,
                   attn_dtype_size(ty->o) * (size_t)s->d_v);
            continue;
        }
        for (int32_t j = 0; j < seen; j++) {
            const float *kj = row_f32(k, ty->kv, (size_t)j, s->d_k, kvbuf);
            float dot = 0.0f;
            for (int32_t t = 0; t < s->d_k; t++)
                dot += qi[t] * kj[t];
            row[j] = dot * p->scale;
        }
        /* Written as a comparison, not fmaxf, so a NaN score is not hidden
         * from the sum (it reaches it through expf(NaN - max) either way). */
        float max = row[0];
        for (int32_t j = 1; j < seen; j++)
            if (row[j] > max)
                max = row[j];
        float sum = 0.0f;
        for (int32_t j = 0; j < seen; j++) {
            row[j] = expf(row[j] - max);
            sum += row[j];
        }
        /* "P in f32": normalised weights into P·V. "P rounded to t": each
         * weight exp(s - max) rounded once to t as it enters P·V, and the
         * normaliser the sum of the unrounded weights, applied at the end
         * (what an online-softmax kernel with a bf16/f16 P·V does). */
        const int rounded = p->p_round != ATTN_F32;
        for (int32_t j = 0; j < seen; j++)
            row[j] = rounded ? attn_round_to(p->p_round, row[j]) : row[j] / sum;
        for (int32_t c = 0; c < s->d_v; c++)
            out[c] = 0.0f;
        for (int32_t j = 0; j < seen; j++) {
            const float *vj = row_f32(v, ty->kv, (size_t)j, s->d_v, kvbuf);
            for (int32_t c = 0; c < s->d_v; c++)
                out[c] += row[j] * vj[c];
        }
        if (rounded)
            for (int32_t c = 0; c < s->d_v; c++)
                out[c] /= sum;
        if (ty->o != ATTN_F32)
            for (int32_t c = 0; c < s->d_v; c++)
                attn_store_elem(o, ty->o, (size_t)i * s->d_v + c, out[c]);
    }
}

static int naive_run(const attn_problem *p, void *workspace)
{
    const attn_shape *s = &p->shape;
    for (int32_t b = 0; b < s->batch; b++)
        for (int32_t h = 0; h < s->heads_q; h++)
            naive_head(p, attn_q_head(p, b, h), attn_k_head(p, b, h), attn_v_head(p, b, h),
                       attn_o_head(p, b, h), workspace);
    return ATTN_OK;
}

const attn_variant attn_variant_naive = {
    .name = "naive",
    .required_features = 0,
    .description = "textbook: n_q x n_kv float32 scores, softmax by row, then P.V; one thread",
    .family = ATTN_FAMILY_QUADRATIC,
    .cost = ATTN_COST_QUADRATIC_ONE_THREAD,
    .exp_ulps = 1, /* glibc expf: < 1 ulp */
    .tiles = {0},
    .widening = ATTN_WIDEN_ON_LOAD, /* a row at a time */
    /* Rule B's yardstick in every class: "P rounded to t" too. */
    .p_rounds = ATTN_DTYPES_ALL,
    .workspace_size = naive_workspace,
    .run = naive_run,
};
