/* Double precision, two-pass max-shifted softmax on the inputs widened to
 * double (float32, f16 or bf16, each decoded here from its bits). It reads only the keys a row
 * sees, like every variant. Indexing, visibility and scale come from the contract (reference.h). */
#include "reference.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static const double unit_roundoff = 0x1p-24;

attn_ref_input attn_ref_input_make_typed(const attn_shape *s, const attn_types *t, const void *q,
                                         const void *k, const void *v, int flush_subnormals)
{
    /* attn.h: scale 0 means 1/sqrt(d_k), here in double, not as the
     * dispatcher rounds it. */
    double scale = s->scale != 0.0f ? (double)s->scale : 1.0 / sqrt((double)s->d_k);
    return (attn_ref_input){.shape = *s,
                            .scale = scale,
                            .types = *t,
                            .flush_subnormals = flush_subnormals,
                            .q = q,
                            .k = k,
                            .v = v};
}

attn_ref_input attn_ref_input_make(const attn_shape *s, const float *q, const float *k,
                                   const float *v)
{
    const attn_types f32 = {ATTN_F32, ATTN_F32, ATTN_F32};
    return attn_ref_input_make_typed(s, &f32, q, k, v, 0);
}

/* 2^k for -1022 <= k <= 1023, a normal double built from its fields: the
 * decoding below multiplies an integer of at most 11 bits by it, exactly.
 * Not ldexp: a libm call per element, and the reference decodes each K and
 * V element once per query row; with ldexp, ldexp and scalbn were 44 % of
 * `verify --variant amx --cases full` (bf16 inputs). */
static double pow2(int k)
{
    const uint64_t bits = (uint64_t)(k + 1023) << 52;
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The formats from their definitions: binary16 is 1 sign, 5 exponent (bias
 * 15) and 10 fraction bits; bf16 the top 16 bits of a binary32. */
static inline double decode(const void *base, int32_t type, size_t index, int flush_subnormals)
{
    if (type == 0)
        return ((const float *)base)[index];
    uint16_t h;
    memcpy(&h, (const unsigned char *)base + 2 * index, sizeof h);
    double sign = (h & 0x8000u) ? -1.0 : 1.0;
    if (type == 1) {
        int e = (h >> 10) & 0x1F, f = h & 0x3FF;
        if (e == 31)
            return f ? NAN : sign * INFINITY;
        if (e == 0) /* zero or subnormal: f · 2^-24 */
            return flush_subnormals ? sign * 0.0 : sign * ((double)f * pow2(-24));
        return sign * ((double)(f + 1024) * pow2(e - 25));
    }
    int e = (h >> 7) & 0xFF, f = h & 0x7F;
    if (e == 255)
        return f ? NAN : sign * INFINITY;
    if (e == 0) /* zero or subnormal: f · 2^-133 */
        return flush_subnormals ? sign * 0.0 : sign * ((double)f * pow2(-133));
    return sign * ((double)(f + 128) * pow2(e - 134));
}

double attn_ref_decode(const void *base, int32_t type, size_t index, int flush_subnormals)
{
    return decode(base, type, index, flush_subnormals);
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

static size_t q_row(const attn_shape *s, int32_t b, int32_t h, int32_t i)
{
    return ((size_t)b * (size_t)s->heads_q + (size_t)h) * (size_t)s->n_q + (size_t)i;
}

/* K/V row j of the K/V head query head h reads. */
static size_t kv_row(const attn_shape *s, int32_t b, int32_t h, int32_t j)
{
    size_t kv_head = (size_t)h / ((size_t)s->heads_q / (size_t)s->heads_kv);
    return ((size_t)b * (size_t)s->heads_kv + kv_head) * (size_t)s->n_kv + (size_t)j;
}

double attn_ref_q_value(const attn_ref_input *in, int32_t b, int32_t h, int32_t i, int32_t t)
{
    return attn_ref_decode(in->q, in->types.q,
                           q_row(&in->shape, b, h, i) * (size_t)in->shape.d_k + (size_t)t,
                           in->flush_subnormals);
}

double attn_ref_k_value(const attn_ref_input *in, int32_t b, int32_t h, int32_t j, int32_t t)
{
    return attn_ref_decode(in->k, in->types.kv,
                           kv_row(&in->shape, b, h, j) * (size_t)in->shape.d_k + (size_t)t,
                           in->flush_subnormals);
}

double attn_ref_v_value(const attn_ref_input *in, int32_t b, int32_t h, int32_t j, int32_t c)
{
    return attn_ref_decode(in->v, in->types.kv,
                           kv_row(&in->shape, b, h, j) * (size_t)in->shape.d_v + (size_t)c,
                           in->flush_subnormals);
}

enum { Q_ROW_HELD = 512 };

int attn_reference_row(const attn_ref_input *in, int32_t b, int32_t h, int32_t i, attn_ref_row *r)
{
    const attn_shape *s = &in->shape;
    const int flush = in->flush_subnormals;
    const size_t q0 = q_row(s, b, h, i) * (size_t)s->d_k;
    const size_t k0 = kv_row(s, b, h, 0) * (size_t)s->d_k, v0 = kv_row(s, b, h, 0) * (size_t)s->d_v;
    const double scale = in->scale;
    int32_t n = attn_ref_keys_seen(s, i);

    r->n_seen = n;
    r->top_key = -1;
    r->top_gap = INFINITY;
    r->nan_in_qk = 0;
    r->inf_seen = 0;
    r->sigma = 0.0;
    /* The query row decoded once when it fits here (the score loop below
     * would decode each element again for every key). */
    double q_row_values[Q_ROW_HELD];
    const int held = s->d_k <= Q_ROW_HELD;
    for (int32_t t = 0; t < s->d_k; t++) {
        double x = decode(in->q, in->types.q, q0 + (size_t)t, flush);
        if (held)
            q_row_values[t] = x;
        r->nan_in_qk |= isnan(x);
        r->inf_seen |= isinf(x);
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
        const size_t kj = k0 + (size_t)j * s->d_k;
        double dot = 0.0, abs_dot = 0.0;
        for (int32_t t = 0; t < s->d_k; t++) {
            double x = decode(in->k, in->types.kv, kj + (size_t)t, flush);
            double qt = held ? q_row_values[t] : decode(in->q, in->types.q, q0 + (size_t)t, flush);
            r->nan_in_qk |= isnan(x);
            r->inf_seen |= isinf(x);
            dot += qt * x;
            abs_dot += fabs(qt * x);
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
        const size_t vj = v0 + (size_t)j * s->d_v;
        r->scores[j] = w;
        for (int32_t c = 0; c < s->d_v; c++) {
            double x = decode(in->v, in->types.kv, vj + (size_t)c, flush);
            r->inf_seen |= isinf(x);
            r->o[c] += w * x;
            r->D[c] += w * fabs(x);
            if (fabs(x) > r->M[c] || isnan(x))
                r->M[c] = fabs(x);
        }
    }
    return ATTN_OK;
}

int attn_ref_attention_typed(const attn_ref_input *in, double *o)
{
    const attn_shape *s = &in->shape;
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
            attn_reference_row(in, b, h, i, &r);
        }
    }
    free(scratch);
    return ATTN_OK;
}

int attn_ref_attention(const attn_shape *s, const float *q, const float *k, const float *v,
                       double *o)
{
    const attn_ref_input in = attn_ref_input_make(s, q, k, v);
    return attn_ref_attention_typed(&in, o);
}
