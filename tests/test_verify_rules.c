/* The checks themselves can fail: deliberately broken variants, each caught
 * by the rule meant for it (guard bytes, rule A, rule B, rule C). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "variant.h"

extern const attn_variant attn_variant_naive;

/* The rogues wrap the real naive, reached through the table as any
 * caller would (a variant exports nothing but its descriptor). */
static int naive_workspace(const attn_problem *p, size_t *bytes)
{
    return attn_variant_naive.workspace_size(p, bytes);
}
static int naive_run(const attn_problem *p, void *workspace)
{
    return attn_variant_naive.run(p, workspace);
}

static int overrun_workspace(const attn_problem *p, void *ws)
{
    size_t bytes;
    naive_workspace(p, &bytes);
    int rc = naive_run(p, ws);
    ((unsigned char *)ws)[((bytes + 63) & ~(size_t)63) + 3] ^= 1; /* past the end */
    return rc;
}

static int overrun_o(const attn_problem *p, void *ws)
{
    int rc = naive_run(p, ws);
    const attn_shape *s = &p->shape;
    ((float *)p->o)[(size_t)s->batch * s->heads_q * s->n_q * s->d_v] = 0.0f; /* one past O */
    return rc;
}

static int skip_last_element(const attn_problem *p, void *ws)
{
    const attn_shape *s = &p->shape;
    size_t n = (size_t)s->batch * s->heads_q * s->n_q * s->d_v;
    float last = ((float *)p->o)[n - 1]; /* the harness's "never written" pattern */
    int rc = naive_run(p, ws);
    ((float *)p->o)[n - 1] = last;
    return rc;
}

/* One key too few: every row ignores its last visible key. */
static int drop_last_key(const attn_problem *p, void *ws)
{
    attn_problem shorter = *p;
    shorter.shape.n_kv -= 1;
    shorter.shape.n_q = p->shape.n_q; /* same rows, one key fewer each */
    /* K and V keep their strides: run head by head with the longer stride. */
    const attn_shape *s = &p->shape;
    for (int32_t b = 0; b < s->batch; b++)
        for (int32_t h = 0; h < s->heads_q; h++) {
            attn_problem one = shorter;
            one.shape.batch = 1;
            one.shape.heads_q = 1;
            one.shape.heads_kv = 1;
            one.group = 1;
            one.q = attn_q_head(p, b, h);
            one.k = attn_k_head(p, b, h);
            one.v = attn_v_head(p, b, h);
            one.o = attn_o_head(p, b, h);
            naive_run(&one, ws);
        }
    return ATTN_OK;
}

/* Hides NaN: replaces every NaN of the output with 0. */
static int hide_nan(const attn_problem *p, void *ws)
{
    const attn_shape *s = &p->shape;
    int rc = naive_run(p, ws);
    for (size_t i = 0; i < (size_t)s->batch * s->heads_q * s->n_q * s->d_v; i++)
        if (isnan(((float *)p->o)[i]))
            ((float *)p->o)[i] = 0.0f;
    return rc;
}

/* Skips the rows whose q holds a NaN, leaving O as the harness filled it:
 * a NaN there must not pass for the NaN rule C asks for. */
static int skip_nan_rows(const attn_problem *p, void *ws)
{
    const attn_shape *s = &p->shape;
    size_t n = (size_t)s->batch * s->heads_q * s->n_q * s->d_v;
    float *keep = malloc(sizeof(float) * n);
    if (!keep)
        return ATTN_ENOMEM;
    memcpy(keep, p->o, sizeof(float) * n);
    int rc = naive_run(p, ws);
    for (size_t row = 0; row < n / (size_t)s->d_v; row++) {
        const float *q = (const float *)p->q + row * (size_t)s->d_k;
        int has_nan = 0;
        for (int32_t t = 0; t < s->d_k; t++)
            has_nan |= isnan(q[t]);
        if (has_nan)
            memcpy((float *)p->o + row * (size_t)s->d_v, keep + row * (size_t)s->d_v,
                   sizeof(float) * (size_t)s->d_v);
    }
    free(keep);
    return rc;
}

/* Writes -0 instead of +0 for rows that see no key. */
static int negative_zero(const attn_problem *p, void *ws)
{
    const attn_shape *s = &p->shape;
    int rc = naive_run(p, ws);
    for (int32_t i = 0; i < s->n_q; i++)
        if (attn_keys_seen(s, i) == 0)
            ((float *)attn_o_head(p, 0, 0))[(size_t)i * s->d_v] = -0.0f;
    return rc;
}

/* Resolves the default scale (0) as 1/d_k instead of the contract's
 * 1/sqrt(d_k): the reference resolves it on its own, so this must fail. */
static int wrong_default_scale(const attn_problem *p, void *ws)
{
    attn_problem wrong = *p;
    if (p->shape.scale == 0.0f)
        wrong.scale = 1.0f / (float)p->shape.d_k;
    return naive_run(&wrong, ws);
}

static attn_variant rogue(const char *name, int (*run)(const attn_problem *, void *))
{
    return (attn_variant){.name = name,
                          .description = "deliberately broken",
                          .exp_ulps = 1,
                          .workspace_size = naive_workspace,
                          .run = run};
}

/* Runs `v` on case `c` (seed 1); returns the stats and the run's verdict. */
static int run_case(const attn_variant *v, attn_case c, attn_err_stats *st, char *why)
{
    attn_case_buffers b;
    if (attn_case_buffers_alloc(&b, &c.shape) != 0)
        return -2;
    attn_shape s = attn_case_fill(&c, 1, b.q, b.k, b.v);
    int rc = attn_verify_run(v, &s, &b, st, why, 400);
    attn_case_buffers_free(&b);
    return rc;
}

int main(void)
{
    check_tally t = {0};
    attn_err_stats st;
    char why[400];
    const attn_case small = {.shape = {1, 2, 1, 20, 30, 8, 8, 1, 0.0f}, .data = DATA_NORMAL};

    attn_variant naive = rogue("naive", naive_run);
    CHECK(&t, run_case(&naive, small, &st, why) == 0 && st.failures == 0, "naive itself: %s %s",
          why, st.first_failure);

    attn_variant v = rogue("overrun_workspace", overrun_workspace);
    CHECK(&t, run_case(&v, small, &st, why) == -1 && strstr(why, "workspace"),
          "workspace overrun not caught: '%s'", why);

    v = rogue("overrun_o", overrun_o);
    CHECK(&t, run_case(&v, small, &st, why) == -1 && strstr(why, "around O"),
          "O overrun not caught: '%s'", why);

    v = rogue("skip_last_element", skip_last_element);
    CHECK(&t,
          run_case(&v, small, &st, why) == 0 && st.failures > 0 &&
              strstr(st.first_failure, "never written"),
          "unwritten element not caught: '%s'", st.first_failure);

    v = rogue("drop_last_key", drop_last_key);
    CHECK(&t,
          run_case(&v, small, &st, why) == 0 && st.failures > 0 &&
              strstr(st.first_failure, "rule A"),
          "one key too few at n=30 not caught by rule A: '%s'", st.first_failure);

    /* At n = 4096 rule A's slack (~3n u) hides one key too few; rule B sees it. */
    const attn_case long_rows = {.shape = {1, 1, 1, 4, 4096, 16, 16, 0, 0.0f}, .data = DATA_NORMAL};
    attn_err_stats naive_st;
    CHECK(&t, run_case(&naive, long_rows, &naive_st, why) == 0, "naive long: %s", why);
    CHECK(&t, run_case(&v, long_rows, &st, why) == 0, "drop long: %s", why);
    CHECK(&t, !attn_rule_b_holds(st.e_m, naive_st.e_m),
          "rule B missed one key too few: E_M %.1fu vs naive %.1fu", st.e_m, naive_st.e_m);
    CHECK(&t, attn_rule_b_holds(naive_st.e_m, naive_st.e_m), "rule B rejects naive itself");

    v = rogue("hide_nan", hide_nan);
    const attn_case nan_q = {.shape = {1, 2, 2, 10, 10, 4, 4, 0, 0.0f}, .data = DATA_NAN_Q};
    CHECK(&t,
          run_case(&v, nan_q, &st, why) == 0 && st.failures > 0 &&
              strstr(st.first_failure, "rule C"),
          "a hidden NaN row not caught: '%s'", st.first_failure);
    const attn_case nan_v = {.shape = {1, 2, 2, 10, 10, 4, 4, 0, 0.0f}, .data = DATA_NAN_V};
    CHECK(&t,
          run_case(&v, nan_v, &st, why) == 0 && st.failures > 0 &&
              strstr(st.first_failure, "rule C"),
          "a hidden NaN column not caught: '%s'", st.first_failure);

    v = rogue("skip_nan_rows", skip_nan_rows);
    CHECK(&t,
          run_case(&v, nan_q, &st, why) == 0 && st.failures > 0 &&
              strstr(st.first_failure, "never written"),
          "an unwritten NaN row passed for a NaN result: '%s'", st.first_failure);

    v = rogue("negative_zero", negative_zero);
    const attn_case no_key = {.shape = {1, 1, 1, 12, 4, 4, 4, 1, 0.0f}, .data = DATA_NORMAL};
    CHECK(&t,
          run_case(&v, no_key, &st, why) == 0 && st.failures > 0 && strstr(st.first_failure, "+0"),
          "-0 for a row with no key not caught: '%s'", st.first_failure);
    v = rogue("wrong_default_scale", wrong_default_scale);
    CHECK(&t,
          run_case(&v, small, &st, why) == 0 && st.failures > 0 &&
              strstr(st.first_failure, "rule A"),
          "a default scale of 1/d_k not caught: '%s'", st.first_failure);
    return check_report("verify_rules", &t);
}
