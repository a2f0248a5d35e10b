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

/* Rows of one batch that read one K/V head, judged side by side: each K
 * and V row is decoded once for all of them instead of once a row (the
 * decoding, a type switch and for f16/bf16 the fields' arithmetic, was
 * most of the reference's time), and four rows' dot products run in one
 * loop as four independent sums. Every sum of a row still runs over t and
 * j in order, alone, so a row's bits do not depend on the rows beside it
 * (test_reference_rows). */

/* One row's state between the passes. */
typedef struct row_pass {
    attn_ref_row *r;
    const double *q; /* the row's query, decoded */
    double max, second, worst_abs_dot, sum;
} row_pass;

/* dot_m = sum_t q_m[t] x[t] and abs_m = sum_t |q_m[t] x[t]|, t in order,
 * for m < 4 (rows past `rows` repeat row 0 and are dropped). */
static void dot_rows4(const double *x, const double *const q[4], int rows, int32_t d, double *dot,
                      double *abs_dot)
{
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    const double *q0 = q[0], *q1 = rows > 1 ? q[1] : q[0], *q2 = rows > 2 ? q[2] : q[0],
                 *q3 = rows > 3 ? q[3] : q[0];
    for (int32_t t = 0; t < d; t++) {
        const double x_t = x[t], p0 = q0[t] * x_t, p1 = q1[t] * x_t, p2 = q2[t] * x_t,
                     p3 = q3[t] * x_t;
        d0 += p0;
        d1 += p1;
        d2 += p2;
        d3 += p3;
        a0 += fabs(p0);
        a1 += fabs(p1);
        a2 += fabs(p2);
        a3 += fabs(p3);
    }
    const double ds[4] = {d0, d1, d2, d3}, as[4] = {a0, a1, a2, a3};
    for (int m = 0; m < rows; m++) {
        dot[m] = ds[m];
        abs_dot[m] = as[m];
    }
}

/* Decodes row `row` (d elements) of a Q, K or V tensor into x; *nan and
 * *inf nonzero when any element is NaN, +-Inf. */
static void decode_row(const void *base, int32_t type, size_t row, int32_t d, int flush, double *x,
                       int *nan, int *inf)
{
    int any_nan = 0, any_inf = 0;
    for (int32_t t = 0; t < d; t++) {
        x[t] = decode(base, type, row * (size_t)d + (size_t)t, flush);
        any_nan |= isnan(x[t]);
        any_inf |= isinf(x[t]);
    }
    *nan = any_nan;
    *inf = any_inf;
}

/* The scores of key j (decoded in kr) for the rows of `act` that see it. */
static void score_key(const attn_ref_input *in, row_pass *rp, const int32_t *act, int32_t n_act,
                      int32_t j, const double *kr)
{
    for (int32_t a = 0; a < n_act; a += 4) {
        const int rows = n_act - a < 4 ? (int)(n_act - a) : 4;
        const double *q[4] = {NULL, NULL, NULL, NULL};
        double dot[4], abs_dot[4];
        for (int m = 0; m < rows; m++)
            q[m] = rp[act[a + m]].q;
        dot_rows4(kr, q, rows, in->shape.d_k, dot, abs_dot);
        for (int m = 0; m < rows; m++) {
            row_pass *p = &rp[act[a + m]];
            double sc = dot[m] * in->scale;
            p->r->scores[j] = sc;
            if (abs_dot[m] > p->worst_abs_dot)
                p->worst_abs_dot = abs_dot[m];
            if (sc > p->max) {
                p->second = p->max;
                p->max = sc;
                p->r->top_key = j;
            } else if (sc > p->second) {
                p->second = sc;
            }
        }
    }
}

/* Value rows go through o, D and M four keys a pass: each element still
 * takes key j's term before key j + 1's, as one key a pass would add
 * them, with a quarter of the loads and stores of o, D and M. */
enum { V_KEYS = 4 };

/* One key's term for one element: w x into o, w |x| into D, |x| into M
 * (a NaN x kept there). `|`, not `||`, and a select: no branch, so GCC
 * vectorizes the loops around it. */
static inline void add_term(double w, double x, double *o_c, double *D_c, double *M_c)
{
    const double x_abs = fabs(x);
    *o_c += w * x;
    *D_c += w * x_abs;
    *M_c = (x_abs > *M_c) | isnan(x) ? x_abs : *M_c;
}

/* Four keys' terms, in key order, for each of d_v elements. restrict on
 * parameters: GCC ignores it on local pointers and then gives up on the
 * run-time overlap checks the loop would need (more than 10). */
static void add_four(double *restrict o, double *restrict D, double *restrict M,
                     const double *restrict v, const double w[V_KEYS], int32_t d_v)
{
    const double w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
    const double *restrict v1 = v + d_v, *restrict v2 = v1 + d_v, *restrict v3 = v2 + d_v;
    for (int32_t c = 0; c < d_v; c++) {
        double o_c = o[c], D_c = D[c], M_c = M[c];
        add_term(w0, v[c], &o_c, &D_c, &M_c);
        add_term(w1, v1[c], &o_c, &D_c, &M_c);
        add_term(w2, v2[c], &o_c, &D_c, &M_c);
        add_term(w3, v3[c], &o_c, &D_c, &M_c);
        o[c] = o_c;
        D[c] = D_c;
        M[c] = M_c;
    }
}

static void add_one(double *restrict o, double *restrict D, double *restrict M,
                    const double *restrict v, double w, int32_t d_v)
{
    for (int32_t c = 0; c < d_v; c++)
        add_term(w, v[c], &o[c], &D[c], &M[c]);
}

/* Keys [j, j + nk) (nk <= V_KEYS; their value rows decoded in vr, d_v
 * apart) weighted into a row's o, D, M; their weights replace their
 * exps in scores. */
static void add_values(row_pass *p, int32_t j, int32_t nk, const double *vr, int32_t d_v)
{
    attn_ref_row *r = p->r;
    double w[V_KEYS] = {0.0, 0.0, 0.0, 0.0};
    for (int32_t k = 0; k < nk; k++) {
        w[k] = r->scores[j + k] / p->sum;
        r->scores[j + k] = w[k];
    }
    if (nk == V_KEYS) {
        add_four(r->o, r->D, r->M, vr, w, d_v);
        return;
    }
    for (int32_t k = 0; k < nk; k++)
        add_one(r->o, r->D, r->M, vr + (size_t)k * d_v, w[k], d_v);
}

int attn_reference_rows(const attn_ref_input *in, int32_t b, const int32_t *h, const int32_t *i,
                        int32_t count, attn_ref_row *r)
{
    const attn_shape *s = &in->shape;
    if (count < 1 || count > ATTN_REF_ROWS_MAX)
        return ATTN_EINVAL;
    const size_t kv0 = kv_row(s, b, h[0], 0);
    for (int32_t m = 1; m < count; m++)
        if (kv_row(s, b, h[m], 0) != kv0)
            return ATTN_EINVAL;
    const int flush = in->flush_subnormals;
    const int32_t d_k = s->d_k, d_v = s->d_v;
    double *buf =
        malloc(sizeof(double) * ((size_t)(count + 1) * (size_t)d_k + V_KEYS * (size_t)d_v));
    if (!buf)
        return ATTN_ENOMEM;
    double *kr = buf + (size_t)count * d_k, *vr = kr + d_k;
    row_pass rp[ATTN_REF_ROWS_MAX];
    int32_t keys = 0; /* the most keys a row sees */
    for (int32_t m = 0; m < count; m++) {
        attn_ref_row *row = &r[m];
        double *q = buf + (size_t)m * d_k;
        row->n_seen = attn_ref_keys_seen(s, i[m]);
        row->top_key = -1;
        row->top_gap = INFINITY;
        row->sigma = 0.0;
        decode_row(in->q, in->types.q, q_row(s, b, h[m], i[m]), d_k, flush, q, &row->nan_in_qk,
                   &row->inf_seen);
        for (int32_t c = 0; c < d_v; c++) {
            row->o[c] = 0.0;
            row->D[c] = 0.0;
            row->M[c] = 0.0;
        }
        rp[m] = (row_pass){.r = row, .q = q, .max = -INFINITY, .second = -INFINITY};
        keys = row->n_seen > keys ? row->n_seen : keys;
    }
    /* The rows that see key j: the rows of `act` before n_act. */
    int32_t act[ATTN_REF_ROWS_MAX], n_act = 0;
    for (int32_t j = 0; j < keys; j++) {
        int k_nan, k_inf;
        decode_row(in->k, in->types.kv, kv0 + (size_t)j, d_k, flush, kr, &k_nan, &k_inf);
        n_act = 0;
        for (int32_t m = 0; m < count; m++)
            if (j < r[m].n_seen) {
                act[n_act++] = m;
                r[m].nan_in_qk |= k_nan;
                r[m].inf_seen |= k_inf;
            }
        score_key(in, rp, act, n_act, j, kr);
    }
    for (int32_t m = 0; m < count; m++) {
        row_pass *p = &rp[m];
        const int32_t n = p->r->n_seen;
        if (n == 0)
            continue;
        p->r->sigma = (d_k + 2) * unit_roundoff * fabs(in->scale) * p->worst_abs_dot;
        p->r->top_gap = n == 1 ? INFINITY : p->max - p->second;
        double sum = 0.0;
        for (int32_t j = 0; j < n; j++) {
            /* A NaN score reaches the sum through exp(NaN - max). */
            p->r->scores[j] = exp(p->r->scores[j] - p->max);
            sum += p->r->scores[j];
        }
        p->sum = sum;
    }
    for (int32_t j = 0; j < keys; j += V_KEYS) {
        const int32_t nk = keys - j < V_KEYS ? keys - j : V_KEYS;
        int v_inf[V_KEYS];
        for (int32_t k = 0; k < nk; k++) {
            int v_nan;
            decode_row(in->v, in->types.kv, kv0 + (size_t)(j + k), d_v, flush, vr + (size_t)k * d_v,
                       &v_nan, &v_inf[k]);
        }
        for (int32_t m = 0; m < count; m++) {
            /* The keys of the pass this row sees: a row sees keys 0 .. n_seen - 1. */
            const int32_t seen = r[m].n_seen - j < nk ? r[m].n_seen - j : nk;
            for (int32_t k = 0; k < seen; k++)
                r[m].inf_seen |= v_inf[k];
            if (seen > 0)
                add_values(&rp[m], j, seen, vr, d_v);
        }
    }
    free(buf);
    return ATTN_OK;
}

int attn_reference_row(const attn_ref_input *in, int32_t b, int32_t h, int32_t i, attn_ref_row *r)
{
    return attn_reference_rows(in, b, &h, &i, 1, r);
}

int32_t attn_ref_rows_within(size_t doubles)
{
    const size_t budget = (size_t)16 << 20,
                 rows = budget / (sizeof(double) * (doubles ? doubles : 1));
    return rows >= ATTN_REF_ROWS_MAX ? ATTN_REF_ROWS_MAX : rows < 1 ? 1 : (int32_t)rows;
}

int32_t attn_ref_rows_at(const attn_shape *s, int64_t row, int64_t stride, int32_t max_rows,
                         int32_t *b, int32_t *h, int32_t *i)
{
    int32_t n = 0;
    size_t kv = 0;
    for (; n < max_rows && n < ATTN_REF_ROWS_MAX; n++, row += stride) {
        const int32_t ri = (int32_t)(row % s->n_q), rh = (int32_t)(row / s->n_q % s->heads_q),
                      rb = (int32_t)(row / s->n_q / s->heads_q);
        if (n > 0 && (rb != *b || kv_row(s, rb, rh, 0) != kv))
            break;
        *b = rb;
        kv = kv_row(s, rb, rh, 0);
        h[n] = rh;
        i[n] = ri;
    }
    return n;
}

int attn_ref_attention_typed(const attn_ref_input *in, double *o)
{
    const attn_shape *s = &in->shape;
    const int threads = omp_get_max_threads();
    const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
    const size_t per_row = 2 * (size_t)s->d_v + (size_t)s->n_kv;
    const int32_t together = attn_ref_rows_within(per_row);
    const int64_t chunks = (rows + together - 1) / together;
    double *scratch = malloc(sizeof(double) * per_row * (size_t)together * (size_t)threads);
    if (!scratch)
        return ATTN_ENOMEM;
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        double *mine = scratch + per_row * (size_t)together * (size_t)omp_get_thread_num();
        attn_ref_row r[ATTN_REF_ROWS_MAX];
        for (int32_t m = 0; m < together; m++)
            r[m] = (attn_ref_row){.D = mine + per_row * m,
                                  .M = mine + per_row * m + s->d_v,
                                  .scores = mine + per_row * m + 2 * (size_t)s->d_v};
#pragma omp for schedule(static)
        for (int64_t c = 0; c < chunks; c++) {
            const int64_t end = (c + 1) * together < rows ? (c + 1) * together : rows;
            for (int64_t row = c * together; row < end;) {
                int32_t b = 0, h[ATTN_REF_ROWS_MAX], i[ATTN_REF_ROWS_MAX];
                const int32_t n = attn_ref_rows_at(s, row, 1, (int32_t)(end - row), &b, h, i);
                for (int32_t m = 0; m < n; m++)
                    r[m].o = o + (size_t)(row + m) * s->d_v;
                failed |= attn_reference_rows(in, b, h, i, n, r) != ATTN_OK;
                row += n;
            }
        }
    }
    free(scratch);
    return failed ? ATTN_ENOMEM : ATTN_OK;
}

int attn_ref_attention(const attn_shape *s, const float *q, const float *k, const float *v,
                       double *o)
{
    const attn_ref_input in = attn_ref_input_make(s, q, k, v);
    return attn_ref_attention_typed(&in, o);
}
