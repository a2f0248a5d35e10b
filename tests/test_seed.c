/* The seed article's worked numbers (shared/seed-attention-math.md), through
 * the reference and through every variant this CPU runs, in f32 and through
 * attn_run_typed in bf16 and f16 (within the class's bounds). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accuracy.h"
#include "attn.h"
#include "cases.h"
#include "check.h"

/* x rounded to `places` decimals equals `want` (as printed in the digest). */
static int rounds_to(double x, double want, int places)
{
    double f = pow(10.0, places);
    return fabs(round(x * f) - round(want * f)) < 0.5;
}

static void test_softmax(check_tally *t)
{
    const float scores[5] = {3.2f, 4.0f, 1.0f, 6.2f, 8.0f};
    const double percent[5] = {0.68998, 1.53557, 0.07645, 13.85857, 83.83943};
    const double exps[5] = {24.53, 54.60, 2.72, 492.75, 2980.96};
    float q[1] = {1.0f}, v[25] = {0}, o[5];
    double ref[5], sum = 0;
    for (int i = 0; i < 5; i++) {
        v[i * 5 + i] = 1.0f; /* V = identity: O is the weight vector */
        CHECK(t, rounds_to(exp((double)scores[i]), exps[i], 2), "exp(%g)", (double)scores[i]);
        sum += exp((double)scores[i]);
    }
    CHECK(t, rounds_to(sum, 3555.56, 2), "sum of exps %.4f", sum);
    attn_shape s = {1, 1, 1, 1, 5, 1, 5, 0, 1.0f};
    CHECK(t, attn_reference(&s, q, scores, v, ref) == ATTN_OK, "reference");
    /* The digest's exact weights are of the decimal scores; 3.2f is not 3.2,
     * so the float32 inputs move the reference by their own rounding only. */
    const double decimal[5] = {3.2, 4.0, 1.0, 6.2, 8.0};
    double decimal_sum = 0;
    for (int i = 0; i < 5; i++)
        decimal_sum += exp(decimal[i]);
    for (int i = 0; i < 5; i++) {
        double w = exp(decimal[i]) / decimal_sum;
        CHECK(t, rounds_to(100 * w, percent[i], 5), "exact weight %d = %.7f%%", i, 100 * w);
        CHECK(t, fabs(ref[i] - w) <= 1e-6 * w, "reference weight %d = %.9f vs %.9f", i, ref[i], w);
    }
    for (int vi = 0; vi < attn_variant_count(); vi++) {
        const char *name = attn_variant_name(vi);
        /* f32 tensors; a variant that takes none has its turn in test_typed */
        if (attn_variant_supported(name) != 1 || !attn_variant_takes_f32(attn_find_variant(name)))
            continue;
        CHECK(t, attn_run(name, &s, q, scores, v, o) == ATTN_OK, "%s", name);
        for (int i = 0; i < 5; i++)
            CHECK(t, fabs(o[i] - ref[i]) <= 4 * 0x1p-24 * ref[i] + 1e-9,
                  "%s weight %d: %.9f vs %.9f", name, i, (double)o[i], ref[i]);
    }
}

static void test_cat_eats_fish(check_tally *t)
{
    /* X = [[1,2],[3,1],[2,4]], W_Q = W_K = I, W_V swaps the dimensions. */
    const float q[6] = {1, 2, 3, 1, 2, 4}, k[6] = {1, 2, 3, 1, 2, 4}, v[6] = {2, 1, 1, 3, 4, 2};
    const double want_o[6] = {3.862310, 2.000000, 2.492819, 2.478457, 3.995761, 2.000000};
    const double want_fish_weights[3] = {0.000848, 0.000848, 0.998304};
    const float eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    attn_shape s = {1, 1, 1, 3, 3, 2, 2, 0, 0.0f}, sw = {1, 1, 1, 3, 3, 2, 3, 0, 0.0f};
    double ref[6], ref_w[9];
    float o[6], w[9];
    CHECK(t, attn_reference(&s, q, k, v, ref) == ATTN_OK, "reference");
    CHECK(t, attn_reference(&sw, q, k, eye, ref_w) == ATTN_OK, "reference weights");
    for (int i = 0; i < 6; i++)
        CHECK(t, rounds_to(ref[i], want_o[i], 6), "reference o[%d] = %.8f", i, ref[i]);
    for (int j = 0; j < 3; j++)
        CHECK(t, rounds_to(ref_w[6 + j], want_fish_weights[j], 6), "fish weight %d = %.8f", j,
              ref_w[6 + j]);
    for (int vi = 0; vi < attn_variant_count(); vi++) {
        const char *name = attn_variant_name(vi);
        if (attn_variant_supported(name) != 1 || !attn_variant_takes_f32(attn_find_variant(name)))
            continue;
        CHECK(t,
              attn_run(name, &s, q, k, v, o) == ATTN_OK &&
                  attn_run(name, &sw, q, k, eye, w) == ATTN_OK,
              "%s", name);
        for (int i = 0; i < 6; i++)
            CHECK(t, fabs(o[i] - ref[i]) < 2e-6, "%s o[%d] = %.8f, want %.8f", name, i,
                  (double)o[i], ref[i]);
        for (int j = 0; j < 9; j++)
            CHECK(t, fabs(w[j] - ref_w[j]) < 1e-6, "%s weight %d", name, j);
    }
}

/* One example in types `ty`: every runnable variant that takes them,
 * through the verify path in its default class (inputs rounded to ty,
 * rules A and C of the class, guards), and O the article's numbers but for
 * the inputs' rounding (`tol`, absolute), O's own (half an ulp of its
 * type, relative) and, for a variant that rounds P to t, the class's
 * 2·u_t/(1 - u_t)·max|v| (docs/accuracy-classes.md). */
static void typed_example(check_tally *t, const attn_shape *s, const attn_types *ty, const float *q,
                          const float *k, const float *v, const double *want, double tol,
                          const char *what)
{
    attn_case_buffers b;
    const size_t nq = attn_q_elems(s), nk = attn_kv_elems(s, s->d_k), nv = attn_kv_elems(s, s->d_v);
    if (attn_case_buffers_alloc_typed(&b, s, ty) != 0) {
        CHECK(t, 0, "%s: cannot allocate", what);
        attn_case_buffers_free(&b);
        return;
    }
    const attn_case c = {.shape = *s, .types = *ty};
    char name[256], why[400];
    for (int vi = 0; vi < attn_variant_table_size; vi++) {
        const attn_variant *var = attn_variant_table[vi];
        if (attn_variant_supports(var->name, ty) != 1)
            continue;
        const int32_t p_round = attn_variant_default_p_round(var);
        const double u_p = p_round == ATTN_BF16 ? 0x1p-8 : p_round == ATTN_F16 ? 0x1p-11 : 0.0;
        double v_max = 0.0;
        for (size_t e = 0; e < nv; e++)
            v_max = fmax(v_max, fabs((double)v[e]));
        const double tol_p = 2.0 * u_p / (1.0 - u_p) * v_max;
        memcpy(b.q, q, sizeof(float) * nq);
        memcpy(b.k, k, sizeof(float) * nk);
        memcpy(b.v, v, sizeof(float) * nv);
        attn_case_name(var->name, &c, name, sizeof name);
        attn_err_stats st;
        CHECK(t, attn_verify_run_class(var, s, p_round, &b, &st, why, sizeof why) == 0, "%s %s: %s",
              what, name, why);
        CHECK(t, st.failures == 0, "%s %s: %s", what, name, st.first_failure);
        const double u_o = ty->o == ATTN_BF16 ? 0x1p-8 : ty->o == ATTN_F16 ? 0x1p-11 : 0x1p-24;
        for (size_t e = 0; e < b.o_elems; e++)
            CHECK(t,
                  fabs(attn_case_buffers_o(&b, e) - want[e]) <= tol + tol_p + u_o * fabs(want[e]),
                  "%s %s: o[%zu] = %.6f, the article's %.6f", what, name, e,
                  (double)attn_case_buffers_o(&b, e), want[e]);
    }
    attn_case_buffers_free(&b);
}

/* The two examples in bf16 and f16 tensors and over narrow KV caches. The
 * cat's inputs are small integers, exact in every type: only O's rounding
 * (and the article's 6 decimals) separate it from the article. The
 * softmax's scores are not (6.2 is 6.1875 in bf16, 6.19921875 in f16):
 * its weights move by up to 0.0019 in bf16 and 0.0001 in f16 (measured;
 * twice that allowed). */
static void test_typed(check_tally *t)
{
    const attn_types types[] = {{ATTN_BF16, ATTN_BF16, ATTN_BF16},
                                {ATTN_F16, ATTN_F16, ATTN_F16},
                                {ATTN_F32, ATTN_BF16, ATTN_F32},
                                {ATTN_F32, ATTN_F16, ATTN_F32}};
    const float scores[5] = {3.2f, 4.0f, 1.0f, 6.2f, 8.0f};
    const double weights[5] = {0.0068998, 0.0153557, 0.0007645, 0.1385857, 0.8383943};
    float one[1] = {1.0f}, eye5[25] = {0};
    for (int i = 0; i < 5; i++)
        eye5[i * 5 + i] = 1.0f;
    const float x[6] = {1, 2, 3, 1, 2, 4}, xv[6] = {2, 1, 1, 3, 4, 2};
    const double want_o[6] = {3.862310, 2.000000, 2.492819, 2.478457, 3.995761, 2.000000};
    const attn_shape softmax = {1, 1, 1, 1, 5, 1, 5, 0, 1.0f}, cat = {1, 1, 1, 3, 3, 2, 2, 0, 0.0f};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const double moved = types[i].kv == ATTN_BF16 ? 0.004 : 0.0002;
        typed_example(t, &softmax, &types[i], one, scores, eye5, weights, moved, "softmax");
        typed_example(t, &cat, &types[i], x, x, xv, want_o, 1e-6, "cat eats fish");
    }
}

int main(void)
{
    check_tally t = {0};
    test_softmax(&t);
    test_cat_eats_fish(&t);
    test_typed(&t);
    return check_report("seed", &t);
}
