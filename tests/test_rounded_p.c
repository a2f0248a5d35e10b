/* "P rounded to t" (docs/accuracy.md): each weight exp(s - max) is rounded to t
 * once, to nearest even, as it enters P·V. Rules A and B cannot tell a
 * weight rounded toward zero (or twice) from one rounded to nearest: the
 * class bound has a factor 2 to spare and random data average the bias
 * out (docs/accuracy-classes.md). Here the data leave no room: one weight
 * p lies 0.6-0.9 of a t-ulp above a t value, so nearest rounds it up and
 * truncation down, with every other weight exactly 1 and V picking out
 * p's key:  O = p̂ / (S + p)  with p̂ = RNE_t(p) (S keys of score 0).
 * Every variant declaring the class, in the first types it takes of f32
 * Q and O over f32, bf16 or f16 K/V, must give that O within 8 f32 ulps,
 * or, in decode heads of 4 rows only, p / (S + p) (P kept in f32, more
 * accurate than the class: avx512_bf16's decode of 1, 2 or 4 rows). The
 * weight sits at an even key, at an odd key and as an odd last key (the
 * pairs of vdpbf16ps), in a tile of 20 identical query rows (block
 * kernels) and in decode heads of 4 and 8 rows (few-rows kernels). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dtype.h"
#include "variant.h"

enum { ROWS = 20, MAX_KEYS = 4, PICKS = 3 };

/* Bits of t's significand below the leading one (bf16 7, f16 10). */
static int fraction_bits(int32_t t)
{
    return t == ATTN_BF16 ? 7 : 10;
}

/* Where p lies between the two t values around it, in t-ulps (0 .. 1):
 * p in [2^-2, 1), normal in both types. */
static double ulp_fraction(double p, int32_t t)
{
    const double ulp = ldexp(1.0, ilogb(p) - fraction_bits(t));
    return (p - floor(p / ulp) * ulp) / ulp;
}

/* The value of p rounded to t, to nearest even (from the exact p). */
static double round_to(double p, int32_t t)
{
    const double ulp = ldexp(1.0, ilogb(p) - fraction_bits(t));
    return nearbyint(p / ulp) * ulp;
}

/* Scores x (exact in every type: 7 fraction bits) with e^x 0.6-0.9 of a
 * t-ulp above a t value; returns how many (up to PICKS). */
static int pick_scores(int32_t t, float *out)
{
    int n = 0;
    for (int m = 0; m < 128 && n < PICKS; m++) {
        const float x = -(1.0f + (float)m / 128.0f) * 0.5f; /* -0.5 .. -1 */
        const double f = ulp_fraction(exp((double)x), t);
        if (f > 0.6 && f < 0.9)
            out[n++] = x;
    }
    return n;
}

/* The types v takes in class p_round with f32 Q and O: K/V f32, bf16, f16. */
static int pick_types(const attn_variant *v, int32_t p_round, attn_types *out)
{
    static const int32_t kv[] = {ATTN_F32, ATTN_BF16, ATTN_F16};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        const attn_run_options opt = {{ATTN_F32, kv[i], ATTN_F32}, p_round};
        if (attn_variant_check_types(v, &opt, NULL, 0) == ATTN_OK) {
            *out = opt.types;
            return 1;
        }
    }
    return 0;
}

/* One layout: n keys of score 0 but key `at`, whose score is x; V = 1 at
 * `at`, 0 elsewhere. ROWS query rows of one head (the block kernels), or
 * `heads` query heads of one row over one K/V head (a decode head of that
 * many rows: the few-rows kernels). */
static void check_layout(check_tally *t, const attn_variant *v, int32_t p_round,
                         const attn_types *ty, float x, int32_t n, int32_t at, int32_t heads)
{
    const int32_t rows = heads > 1 ? heads : ROWS;
    const attn_shape s = {1, heads, 1, heads > 1 ? 1 : ROWS, n, 1, 1, 0, 1.0f};
    float q[ROWS], kf[MAX_KEYS], vf[MAX_KEYS], o[ROWS];
    uint16_t kh[MAX_KEYS], vh[MAX_KEYS];
    const int narrow = ty->kv != ATTN_F32;
    for (int r = 0; r < rows; r++)
        q[r] = 1.0f;
    for (int32_t j = 0; j < n; j++) {
        kf[j] = j == at ? x : 0.0f;
        vf[j] = j == at ? 1.0f : 0.0f;
        if (narrow) {
            attn_store_elem(kh, ty->kv, (size_t)j, kf[j]);
            attn_store_elem(vh, ty->kv, (size_t)j, vf[j]);
        }
    }
    const attn_run_options opt = {*ty, p_round};
    char msg[256];
    int rc = attn_run_variant_typed(v, &s, &opt, q, narrow ? (void *)kh : (void *)kf,
                                    narrow ? (void *)vh : (void *)vf, o, NULL, msg, sizeof msg);
    CHECK(t, rc == ATTN_OK, "%s p=%s: %s", v->name, attn_dtype_name(p_round), msg);
    if (rc != ATTN_OK)
        return;
    const double p = exp((double)x), others = (double)(n - 1);
    const double rounded = round_to(p, p_round) / (others + p), exact = p / (others + p);
    /* P in f32 is more accurate than the class, allowed where a variant
     * says it keeps it: avx512_bf16's decode of 1, 2 or 4 rows (the 4-head
     * layout). Everywhere else the weight must come out rounded. */
    const int f32_ok = heads == 4;
    for (int r = 0; r < rows; r++) {
        const double tol = 8.0 * ldexp(1.0, ilogb(rounded) - 23);
        CHECK(t, fabs(o[r] - rounded) <= tol || (f32_ok && fabs(o[r] - exact) <= tol),
              "%s p=%s kv=%s, %d heads, %d keys, e^%g at key %d: row %d O = %.9g, want %.9g (p "
              "rounded to nearest) or %.9g (p in f32)",
              v->name, attn_dtype_name(p_round), attn_dtype_name(ty->kv), (int)heads, (int)n,
              (double)x, (int)at, r, (double)o[r], rounded, exact);
    }
}

int main(void)
{
    check_tally t = {0, 0};
    static const int32_t classes[] = {ATTN_BF16, ATTN_F16};
    /* (keys, the key holding the rounded weight): the second and the first
     * of a pair, and an odd last key paired with nothing. */
    static const int32_t layouts[][2] = {{2, 1}, {2, 0}, {3, 2}};
    /* One head of ROWS rows; decode heads of 4 and 8 rows (avx512_bf16's
     * pairs on vdpbf16ps at 8). */
    static const int32_t heads[] = {1, 4, 8};
    int checked = 0;
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!attn_variant_runnable(v))
            continue;
        for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++) {
            attn_types ty;
            if (!(attn_variant_p_rounds(v) & ATTN_DTYPE_BIT(classes[c])) ||
                !pick_types(v, classes[c], &ty))
                continue;
            float x[PICKS];
            const int nx = pick_scores(classes[c], x);
            CHECK(&t, nx == PICKS, "only %d scores for %s", nx, attn_dtype_name(classes[c]));
            for (int k = 0; k < nx; k++)
                for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
                    for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++)
                        check_layout(&t, v, classes[c], &ty, x[k], layouts[l][0], layouts[l][1],
                                     heads[h]);
            checked++;
        }
    }
    CHECK(&t, checked >= 2, "no variant computes a rounded class here (naive always does)");
    return check_report("rounded_p", &t);
}
