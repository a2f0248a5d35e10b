/* naive — the textbook, and rule B's yardstick: per head, materialise the
 * n_q x n_kv score matrix in float32, a max-shifted softmax row by row, then
 * the weighted sum P·V. Plain loops, one thread, no intrinsics. */
#include <math.h>
#include <string.h>

#include "variant.h"

static int naive_workspace(const attn_problem *p, size_t *bytes)
{
    size_t n;
    if (__builtin_mul_overflow((size_t)p->shape.n_q, (size_t)p->shape.n_kv, &n) ||
        __builtin_mul_overflow(n, sizeof(float), bytes))
        return ATTN_ENOMEM;
    return ATTN_OK;
}

static void naive_head(const attn_problem *p, const float *q, const float *k, const float *v,
                       float *o, float *scores)
{
    const attn_shape *s = &p->shape;
    for (int32_t i = 0; i < s->n_q; i++) {
        float *row = scores + (size_t)i * s->n_kv;
        float *out = o + (size_t)i * s->d_v;
        const float *qi = q + (size_t)i * s->d_k;
        int32_t seen = attn_keys_seen(s, i); /* masked keys are never read */
        if (seen == 0) {
            memset(out, 0, sizeof(float) * (size_t)s->d_v);
            continue;
        }
        for (int32_t j = 0; j < seen; j++) {
            const float *kj = k + (size_t)j * s->d_k;
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
        for (int32_t j = 0; j < seen; j++)
            row[j] /= sum;
        for (int32_t c = 0; c < s->d_v; c++)
            out[c] = 0.0f;
        for (int32_t j = 0; j < seen; j++) {
            const float *vj = v + (size_t)j * s->d_v;
            for (int32_t c = 0; c < s->d_v; c++)
                out[c] += row[j] * vj[c];
        }
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
    .workspace_size = naive_workspace,
    .run = naive_run,
};
