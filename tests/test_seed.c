/* The seed article's worked numbers (shared/seed-attention-math.md), through
 * the reference and through every variant this CPU runs. */
#include <math.h>
#include <stdio.h>

#include "attn.h"
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
        if (attn_variant_supported(name) != 1)
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
        if (attn_variant_supported(name) != 1)
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

int main(void)
{
    check_tally t = {0};
    test_softmax(&t);
    test_cat_eats_fish(&t);
    return check_report("seed", &t);
}
