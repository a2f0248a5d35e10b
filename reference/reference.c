/* Double precision, two-pass max-shifted softmax on the float32 inputs
 * widened to double. It reads only the keys a row sees, like every variant. */
#include "reference.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static const double unit_roundoff = 0x1p-24;

void attn_reference_row(const attn_problem *p, int32_t b, int32_t h, int32_t i, attn_ref_row *r)
{
    const attn_shape *s = &p->shape;
    const float *q = attn_q_head(p, b, h) + (size_t)i * s->d_k;
    const float *k = attn_k_head(p, b, h);
    const float *v = attn_v_head(p, b, h);
    const double scale = p->scale;
    int32_t n = attn_keys_seen(s, i);

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
        return;

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
}

int attn_reference(const attn_shape *s, const float *q, const float *k, const float *v, double *o)
{
    int rc = attn_check_shape(s, NULL, 0);
    if (rc != ATTN_OK)
        return rc;
    if (!q || !k || !v || !o)
        return ATTN_EINVAL;
    attn_problem p = attn_problem_make(s, q, k, v, NULL);
    const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
    const size_t per_thread = 2 * (size_t)s->d_v + (size_t)s->n_kv;
    double *scratch = malloc(sizeof(double) * per_thread * (size_t)p.threads);
    if (!scratch)
        return ATTN_ENOMEM;
#pragma omp parallel num_threads(p.threads)
    {
        double *mine = scratch + per_thread * (size_t)omp_get_thread_num();
        attn_ref_row r = {.D = mine, .M = mine + s->d_v, .scores = mine + 2 * (size_t)s->d_v};
#pragma omp for schedule(static)
        for (int64_t row = 0; row < rows; row++) {
            int32_t i = (int32_t)(row % s->n_q);
            int32_t h = (int32_t)(row / s->n_q % s->heads_q);
            int32_t b = (int32_t)(row / s->n_q / s->heads_q);
            r.o = o + (size_t)row * s->d_v;
            attn_reference_row(&p, b, h, i, &r);
        }
    }
    free(scratch);
    return ATTN_OK;
}
