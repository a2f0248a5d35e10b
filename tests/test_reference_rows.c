/* The reference takes rows that read one K/V head together
 * (attn_reference_rows: each K/V row decoded once for all of them, four
 * dot products in one loop). What that must not change: every field of a
 * row, bit for bit (a NaN's payload aside), as the row gets it alone,
 * whatever rows are beside it (causal rows that see different keys, rows
 * of several query heads of one K/V head, rows that see no key), in every
 * element type, with and without flushed subnormals, on data with NaN,
 * Inf and subnormals; the whole-O reference the same; the runs
 * attn_ref_rows_at cuts never mixing batches or K/V heads; a block it
 * cannot take refused; and how many rows a caller's scratch lets it take. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dtype.h"
#include "reference.h"

/* A small xorshift: the test's data is its own, not the harness's cases. */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int32_t pick(uint64_t *s, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(next(s) % (uint64_t)(hi - lo + 1));
}

/* One element's bits in type t: mostly moderate values, now and then a
 * NaN, an Inf, a subnormal or a zero (1 in 64 each when `specials`). */
static void fill(void *dst, int32_t t, size_t n, int specials, uint64_t *s)
{
    for (size_t e = 0; e < n; e++) {
        const uint64_t r = next(s);
        const int kind = specials ? (int)(r >> 58) : 63; /* 0..63 */
        const uint32_t sign = (uint32_t)(r >> 57) & 1, frac = (uint32_t)r;
        if (t == 0) {
            uint32_t bits = sign << 31 | (uint32_t)(120 + (r >> 40) % 10) << 23 | (frac & 0x7FFFFF);
            if (kind == 0)
                bits = 0x7FC00000u | (frac & 0xFFFF); /* NaN */
            else if (kind == 1)
                bits = sign << 31 | 0x7F800000u; /* Inf */
            else if (kind == 2)
                bits = sign << 31 | (frac & 0x7FFFFF); /* subnormal */
            else if (kind == 3)
                bits = sign << 31;
            memcpy((float *)dst + e, &bits, 4);
            continue;
        }
        const int exp_bits = t == 1 ? 5 : 8, frac_bits = t == 1 ? 10 : 7;
        const uint32_t bias = t == 1 ? 15 : 127, fmask = (1u << frac_bits) - 1,
                       emax = (1u << exp_bits) - 1;
        uint32_t h =
            sign << 15 | (uint32_t)(bias - 4 + (r >> 40) % 8) << frac_bits | (frac & fmask);
        if (kind == 0)
            h = emax << frac_bits | 1 | (frac & fmask); /* NaN */
        else if (kind == 1)
            h = sign << 15 | emax << frac_bits; /* Inf */
        else if (kind == 2)
            h = sign << 15 | (frac & fmask) | 1; /* subnormal */
        else if (kind == 3)
            h = sign << 15;
        ((uint16_t *)dst)[e] = (uint16_t)h;
    }
}

static attn_ref_row row_at(double *base, const attn_shape *s)
{
    return (attn_ref_row){.o = base,
                          .D = base + s->d_v,
                          .M = base + 2 * (size_t)s->d_v,
                          .scores = base + 3 * (size_t)s->d_v};
}

/* Bit for bit, but any NaN for a NaN: which operand's payload a NaN
 * result carries depends on the code path GCC picked for the loop (a
 * vector body or its scalar peel, chosen by the arrays' alignment and
 * overlap), and nothing reads a payload. */
static int same_bits(const double *a, const double *b, int32_t n)
{
    for (int32_t e = 0; e < n; e++)
        if (memcmp(&a[e], &b[e], sizeof a[e]) != 0 && !(isnan(a[e]) && isnan(b[e])))
            return 0;
    return 1;
}

/* Every field of two rows' reference, bit for bit. */
static int same_row(const attn_ref_row *a, const attn_ref_row *b, int32_t d_v)
{
    return a->n_seen == b->n_seen && a->top_key == b->top_key && a->nan_in_qk == b->nan_in_qk &&
           a->inf_seen == b->inf_seen && same_bits(&a->sigma, &b->sigma, 1) &&
           same_bits(&a->top_gap, &b->top_gap, 1) && same_bits(a->o, b->o, d_v) &&
           same_bits(a->D, b->D, d_v) && same_bits(a->M, b->M, d_v) &&
           same_bits(a->scores, b->scores, a->n_seen);
}

/* One random problem: each row alone, then in the runs attn_ref_rows_at
 * cuts at three strides, then the whole O. */
static void one_case(check_tally *t, uint64_t *seed, int n_case)
{
    attn_shape s = {0};
    s.batch = pick(seed, 1, 2);
    s.heads_kv = pick(seed, 1, 3);
    s.heads_q = s.heads_kv * pick(seed, 1, 4);
    s.n_q = pick(seed, 1, 40);
    s.n_kv = pick(seed, 1, 70);
    s.d_k = pick(seed, 1, 40);
    s.d_v = pick(seed, 1, 40);
    s.causal = (int32_t)(next(seed) & 1);
    s.scale = (next(seed) & 3) == 0 ? -0.3f : 0.0f;
    const attn_types ty = {pick(seed, 0, 2), pick(seed, 0, 2), 0};
    const int specials = (next(seed) & 1) != 0, flush = ty.kv != 0 && (next(seed) & 1) != 0;
    const size_t nq = (size_t)s.batch * s.heads_q * s.n_q * s.d_k,
                 nk = (size_t)s.batch * s.heads_kv * s.n_kv * s.d_k,
                 nv = (size_t)s.batch * s.heads_kv * s.n_kv * s.d_v;
    void *q = malloc(nq * attn_dtype_size(ty.q)), *k = malloc(nk * attn_dtype_size(ty.kv)),
         *v = malloc(nv * attn_dtype_size(ty.kv));
    fill(q, ty.q, nq, specials, seed);
    fill(k, ty.kv, nk, specials, seed);
    fill(v, ty.kv, nv, specials, seed);
    const attn_ref_input in = attn_ref_input_make_typed(&s, &ty, q, k, v, flush);
    const int64_t rows = (int64_t)s.batch * s.heads_q * s.n_q;
    const size_t per_row = 3 * (size_t)s.d_v + (size_t)s.n_kv;
    double *alone = malloc(sizeof(double) * per_row * (size_t)rows);
    attn_ref_row *ra = malloc(sizeof *ra * (size_t)rows);
    for (int64_t row = 0; row < rows; row++) {
        ra[row] = row_at(alone + per_row * (size_t)row, &s);
        const int32_t i = (int32_t)(row % s.n_q), h = (int32_t)(row / s.n_q % s.heads_q),
                      b = (int32_t)(row / s.n_q / s.heads_q);
        CHECK(t, attn_reference_row(&in, b, h, i, &ra[row]) == ATTN_OK, "case %d row %lld", n_case,
              (long long)row);
    }
    double *together = malloc(sizeof(double) * per_row * ATTN_REF_ROWS_MAX);
    attn_ref_row rt[ATTN_REF_ROWS_MAX];
    for (int m = 0; m < ATTN_REF_ROWS_MAX; m++)
        rt[m] = row_at(together + per_row * m, &s);
    const int64_t strides[3] = {1, 3, pick(seed, 2, 9)};
    for (int si = 0; si < 3; si++) {
        const int64_t stride = strides[si];
        int64_t covered = 0;
        for (int64_t row = 0; row < rows;) {
            int32_t b = -1, h[ATTN_REF_ROWS_MAX], i[ATTN_REF_ROWS_MAX];
            const int32_t left = (int32_t)((rows - row + stride - 1) / stride);
            const int32_t max_rows = pick(seed, 1, ATTN_REF_ROWS_MAX);
            const int32_t n = attn_ref_rows_at(&s, row, stride, max_rows, &b, h, i);
            CHECK(t, n >= 1 && n <= max_rows && n <= left, "case %d: a run of %d rows (%d asked)",
                  n_case, n, max_rows);
            if (n < 1)
                break;
            CHECK(t, attn_reference_rows(&in, b, h, i, n, rt) == ATTN_OK, "case %d", n_case);
            for (int32_t m = 0; m < n; m++) {
                const int64_t at = row + m * stride;
                const int32_t ri = (int32_t)(at % s.n_q), rh = (int32_t)(at / s.n_q % s.heads_q),
                              rb = (int32_t)(at / s.n_q / s.heads_q);
                CHECK(t,
                      b == rb && h[m] == rh && i[m] == ri &&
                          h[m] / (s.heads_q / s.heads_kv) == h[0] / (s.heads_q / s.heads_kv),
                      "case %d: run row %d is not row %lld of the batch and K/V head", n_case,
                      (int)m, (long long)at);
                CHECK(t, same_row(&rt[m], &ra[at], s.d_v),
                      "case %d (B %d Hq %d Hkv %d nq %d nkv %d dk %d dv %d causal %d, q %d kv %d, "
                      "flush %d), stride %lld: row %lld beside %d others differs from alone",
                      n_case, s.batch, s.heads_q, s.heads_kv, s.n_q, s.n_kv, s.d_k, s.d_v, s.causal,
                      ty.q, ty.kv, flush, (long long)stride, (long long)at, (int)n - 1);
            }
            /* A run stops short only at a batch or K/V head boundary. */
            const int64_t after = row + n * stride;
            if (n < max_rows && n < left && after < rows) {
                const int64_t g = s.heads_q / s.heads_kv;
                const int64_t kv_a = (row / s.n_q) / g, kv_b = (after / s.n_q) / g;
                CHECK(t, kv_a != kv_b, "case %d: a run cut short inside one K/V head", n_case);
            }
            covered += n;
            row = after;
        }
        CHECK(t, covered == (rows + stride - 1) / stride, "case %d: runs covered %lld rows", n_case,
              (long long)covered);
    }
    double *whole = malloc(sizeof(double) * (size_t)rows * s.d_v);
    CHECK(t, attn_ref_attention_typed(&in, whole) == ATTN_OK, "case %d: whole O", n_case);
    for (int64_t row = 0; row < rows; row++)
        CHECK(t, same_bits(whole + (size_t)row * s.d_v, ra[row].o, s.d_v),
              "case %d: the whole O's row %lld differs from the row alone", n_case, (long long)row);
    free(whole);
    free(together);
    free(ra);
    free(alone);
    free(q);
    free(k);
    free(v);
}

/* Blocks attn_reference_rows refuses: no rows, too many, two K/V heads. */
static void refusals(check_tally *t)
{
    const attn_shape s = {1, 4, 2, 3, 5, 4, 4, 0, 0.0f};
    float q[4 * 3 * 4] = {0}, k[2 * 5 * 4] = {0}, v[2 * 5 * 4] = {0};
    const attn_ref_input in = attn_ref_input_make(&s, q, k, v);
    double buf[ATTN_REF_ROWS_MAX + 1][3 * 4 + 5];
    attn_ref_row r[ATTN_REF_ROWS_MAX + 1];
    int32_t h[ATTN_REF_ROWS_MAX + 1] = {0}, i[ATTN_REF_ROWS_MAX + 1] = {0};
    for (int m = 0; m <= ATTN_REF_ROWS_MAX; m++)
        r[m] = row_at(buf[m], &s);
    CHECK(t, attn_reference_rows(&in, 0, h, i, 0, r) == ATTN_EINVAL, "0 rows taken");
    CHECK(t, attn_reference_rows(&in, 0, h, i, ATTN_REF_ROWS_MAX + 1, r) == ATTN_EINVAL,
          "%d rows taken", ATTN_REF_ROWS_MAX + 1);
    h[1] = 2; /* heads 0 and 2 read K/V heads 0 and 1 */
    CHECK(t, attn_reference_rows(&in, 0, h, i, 2, r) == ATTN_EINVAL,
          "rows of two K/V heads taken together");
    /* How many rows a caller's scratch takes together: all, or 16 MiB's. */
    CHECK(t, attn_ref_rows_within(1) == ATTN_REF_ROWS_MAX, "%d", attn_ref_rows_within(1));
    CHECK(t, attn_ref_rows_within(((size_t)16 << 20) / 8 / 10) == 10, "%d",
          attn_ref_rows_within(((size_t)16 << 20) / 8 / 10));
    CHECK(t, attn_ref_rows_within((size_t)1 << 40) == 1, "%d",
          attn_ref_rows_within((size_t)1 << 40));
    h[1] = 1; /* heads 0 and 1 share K/V head 0 */
    CHECK(t, attn_reference_rows(&in, 0, h, i, 2, r) == ATTN_OK, "rows of one K/V head refused");
}

int main(void)
{
    check_tally t = {0, 0};
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (int c = 0; c < 300; c++)
        one_case(&t, &seed, c);
    refusals(&t);
    return check_report("reference_rows", &t);
}
