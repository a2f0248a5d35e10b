/* Double precision, two-pass max-shifted softmax on the float32 inputs
 * widened to double. It reads only the keys a row sees, like every variant.
 * Indexing, visibility and scale come from the contract (reference.h). */
#include "reference.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static const double unit_roundoff = 0x1p-24;

attn_ref_input attn_ref_input_make(const attn_shape *s, const float *q, const float *k,
                                   const float *v)
{
    /* attn.h: scale 0 means 1/sqrt(d_k), here in double, not as the
     * dispatcher rounds it. */
    double scale = s->scale != 0.0f ? (double)s->scale : 1.0 / sqrt((double)s->d_k);
    return (attn_ref_input){.shape = *s, .scale = scale, .q = q, .k = k, .v = v};
}

int32_t attn_ref_keys_seen(const attn_shape *s, int32_t i)
{
    if (!s->causal)
        return s->n_kv;
    /* The last key row i may see is j = i + (n_kv - n_q); keys 0..j count j + 1. */
    int64_t last = (int64_t)i + ((int64_t)s->n_kv - s->n_q);
    if (last < 0)
        return 0;
    return last >= s->n_kv ? s->n_kv : (int32_t)(last + 1);
}

const float *attn_ref_q_row(const attn_ref_input *in, int32_t b, int32_t h, int32_t i)
{
    const attn_shape *s = &in->shape;
    size_t row = ((size_t)b * (size_t)s->heads_q + (size_t)h) * (size_t)s->n_q + (size_t)i;
    return in->q + row * (size_t)s->d_k;
}

/* K/V row j of the K/V head query head h reads. */
static size_t kv_row(const attn_shape *s, int32_t b, int32_t h, int32_t j)
{
    size_t kv_head = (size_t)h / ((size_t)s->heads_q / (size_t)s->heads_kv);
    return ((size_t)b * (size_t)s->heads_kv + kv_head) * (size_t)s->n_kv + (size_t)j;
}

const float *attn_ref_k_row(const attn_ref_input *in, int32_t b, int32_t h, int32_t j)
{
    return in->k + kv_row(&in->shape, b, h, j) * (size_t)in->shape.d_k;
}

const float *attn_ref_v_row(const attn_ref_input *in, int32_t b, int32_t h, int32_t j)
{
    return in->v + kv_row(&in->shape, b, h, j) * (size_t)in->shape.d_v;
}

int attn_reference_row(const attn_ref_input *in, int32_t b, int32_t h, int32_t i, attn_ref_row *r)
{
    const attn_shape *s = &in->shape;
    const float *q = attn_ref_q_row(in, b, h, i);
    const float *k = attn_ref_k_row(in, b, h, 0);
    const float *v = attn_ref_v_row(in, b, h, 0);
    const double scale = in->scale;
    int32_t n = attn_ref_keys_seen(s, i);

    r->n_seen = n;
    r->top_key = -1;
    r->top_gap = INFINITY;
    r->nan_in_qk = 0;
    r->inf_seen = 0;
    r->sigma = 0.0;
    for (int32_t t = 0; t < s->d_k; t++) {
        r->nan_in_qk |= isnan(q[t]);
        r->inf_seen |= isinf(q[t]);
    }
    for (int32_t c = 0; c < s->d_v; c++) {
        r->o[c] = 0.0;
        r->D[c] = 0.0;
        r->M[c] = 0.0;
    }
    if (n == 0)
        return ATTN_OK;

    double max = -INFINITY, second = -INFINITY, worst_abs_dot = 0.0;
    for (int32_t j = 0; j < n; j++) {
        const float *kj = k + (size_t)j * s->d_k;
        double dot = 0.0, abs_dot = 0.0;
        for (int32_t t = 0; t < s->d_k; t++) {
            r->nan_in_qk |= isnan(kj[t]);
            r->inf_seen |= isinf(kj[t]);
            dot += (double)q[t] * kj[t];
            abs_dot += fabs((double)q[t] * kj[t]);
        }
        double sc = dot * scale;
        r->scores[j] = sc;
        if (abs_dot > worst_abs_dot)
            worst_abs_dot = abs_dot;
        if (sc > max) {
            second = max;
            max = sc;
            r->top_key = j;
        } else if (sc > second) {
            second = sc;
        }
    }
    r->sigma = (s->d_k + 2) * unit_roundoff * fabs(scale) * worst_abs_dot;
    r->top_gap = n == 1 ? INFINITY : max - second;

    double sum = 0.0;
    for (int32_t j = 0; j < n; j++) {
        /* A NaN score reaches the sum through exp(NaN - max). */
        r->scores[j] = exp(r->scores[j] - max);
        sum += r->scores[j];
    }
    for (int32_t j = 0; j < n; j++) {
        double w = r->scores[j] / sum;
        const float *vj = v + (size_t)j * s->d_v;
        r->scores[j] = w;
        for (int32_t c = 0; c < s->d_v; c++) {
            double x = vj[c];
            r->inf_seen |= isinf(x);
            r->o[c] += w * x;
            r->D[c] += w * fabs(x);
            if (fabs(x) > r->M[c] || isnan(x))
                r->M[c] = fabs(x);
        }
    }
    return ATTN_OK;
}

int attn_ref_attention(const attn_shape *s, const float *q, const float *k, const float *v,
                       double *o)
{
    const attn_ref_input in = attn_ref_input_make(s, q, k, v);
    const int threads = omp_get_max_threads();
    const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
    const size_t per_thread = 2 * (size_t)s->d_v + (size_t)s->n_kv;
    double *scratch = malloc(sizeof(double) * per_thread * (size_t)threads);
    if (!scratch)
        return ATTN_ENOMEM;
#pragma omp parallel num_threads(threads)
    {
        double *mine = scratch + per_thread * (size_t)omp_get_thread_num();
        attn_ref_row r = {.D = mine, .M = mine + s->d_v, .scores = mine + 2 * (size_t)s->d_v};
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; row++) {
            int32_t i = (int32_t)(row % s->n_q);
            int32_t h = (int32_t)(row / s->n_q % s->heads_q);
            int32_t b = (int32_t)(row / s->n_q / s->heads_q);
            r.o = o + (size_t)row * s->d_v;
            attn_reference_row(&in, b, h, i, &r);
        }
    }
    free(scratch);
    return ATTN_OK;
}
