/* The checks themselves can fail: deliberately broken variants, each caught
 * by the rule meant for it (guard bytes, rule A, rule B, rule C), in f32
 * and in the precision classes of bf16/f16 (docs/accuracy-classes.md): one
 * job, the judge's own test, so one file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "dtype.h"
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

/* ---- Rogues per precision class ---- */

/* Typed rogues: they declare what they take like a real variant would. */
static attn_variant typed_rogue(const char *name, int (*run)(const attn_problem *, void *),
                                int (*ws)(const attn_problem *, size_t *), attn_widening widening,
                                uint32_t p_rounds, int daz)
{
    attn_variant v = rogue(name, run);
    v.workspace_size = ws ? ws : naive_workspace;
    v.widening = widening;
    v.p_rounds = p_rounds;
    v.denormals_are_zero = daz;
    return v;
}

/* Bytes of naive's workspace rounded up to a cache line: where a rogue's
 * own part starts. */
static size_t naive_part(const attn_problem *p)
{
    size_t bytes = 0;
    naive_workspace(p, &bytes);
    return (bytes + 63) & ~(size_t)63;
}

/* O rounded toward zero instead of to nearest: naive into an f32 O in the
 * workspace, then each element truncated to O's type (what a conversion
 * that drops the low bits does). */
static int o_trunc_workspace(const attn_problem *p, size_t *bytes)
{
    *bytes = naive_part(p) + sizeof(float) * attn_o_elems(&p->shape);
    return ATTN_OK;
}

static uint16_t toward_zero(int32_t t, float x)
{
    if (t == ATTN_BF16)
        return (uint16_t)(attn_f32_bits(x) >> 16);
    uint16_t h = attn_f32_to_f16(x); /* nearest; one step back when that was away from 0 */
    if (!isnan(x) && fabsf(attn_f16_to_f32(h)) > fabsf(x))
        h--;
    return h;
}

static int o_toward_zero(const attn_problem *p, void *ws)
{
    attn_problem f32_o = *p;
    float *o = (float *)((unsigned char *)ws + naive_part(p));
    f32_o.types.o = ATTN_F32;
    f32_o.o = o;
    int rc = naive_run(&f32_o, ws);
    for (size_t i = 0; i < attn_o_elems(&p->shape); i++) {
        if (p->types.o == ATTN_F32)
            ((float *)p->o)[i] = o[i];
        else
            ((uint16_t *)p->o)[i] = toward_zero(p->types.o, o[i]);
    }
    return rc;
}

/* Denormals-are-zero: the f32 inputs the dispatcher widened are copied
 * with subnormals flushed (a widened bf16 subnormal is an f32 subnormal;
 * an f16 one is an f32 normal, so only bf16 inputs are affected, as with
 * vdpbf16ps), then naive runs on the copies. */
static int daz_workspace(const attn_problem *p, size_t *bytes)
{
    const attn_shape *s = &p->shape;
    *bytes = naive_part(p) + sizeof(float) * (attn_q_elems(s) + attn_kv_elems(s, s->d_k) +
                                              attn_kv_elems(s, s->d_v));
    return ATTN_OK;
}

static const float *flushed_copy(const float *src, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = fpclassify(src[i]) == FP_SUBNORMAL ? copysignf(0.0f, src[i]) : src[i];
    return dst;
}

static int flush_subnormal_inputs(const attn_problem *p, void *ws)
{
    const attn_shape *s = &p->shape;
    const size_t nq = attn_q_elems(s), nk = attn_kv_elems(s, s->d_k);
    float *copy = (float *)((unsigned char *)ws + naive_part(p));
    attn_problem flushed = *p;
    flushed.q = flushed_copy(p->q, nq, copy);
    flushed.k = flushed_copy(p->k, nk, copy + nq);
    flushed.v = flushed_copy(p->v, attn_kv_elems(s, s->d_v), copy + nq + nk);
    return naive_run(&flushed, ws);
}

/* "P rounded twice": an online kernel over blocks of 16 keys that keeps
 * each block's weights rounded to t and, when a later block raises the
 * running max, rescales the rounded weights by alpha and rounds them to t
 * again; the normaliser is the sum of what it multiplies. Workspace: one
 * row of weights. */
enum { TWICE_KEYS = 16 };
static int twice_workspace(const attn_problem *p, size_t *bytes)
{
    *bytes = sizeof(float) * (size_t)p->shape.n_kv;
    return ATTN_OK;
}

static void twice_row(const attn_problem *p, const float *qi, const float *k, const float *v,
                      int32_t seen, float *w, float *out)
{
    const attn_shape *s = &p->shape;
    float m = -INFINITY;
    for (int32_t j0 = 0; j0 < seen; j0 += TWICE_KEYS) {
        const int32_t j1 = j0 + TWICE_KEYS < seen ? j0 + TWICE_KEYS : seen;
        float mb = m;
        for (int32_t j = j0; j < j1; j++) {
            float dot = 0.0f;
            for (int32_t t = 0; t < s->d_k; t++)
                dot += qi[t] * k[(size_t)j * s->d_k + t];
            w[j] = dot * p->scale;
            mb = w[j] > mb ? w[j] : mb;
        }
        const float alpha = expf(m - mb);
        for (int32_t j = 0; j < j0; j++)
            w[j] = attn_round_to(p->p_round, alpha * w[j]); /* the second rounding */
        for (int32_t j = j0; j < j1; j++)
            w[j] = attn_round_to(p->p_round, expf(w[j] - mb));
        m = mb;
    }
    float l = 0.0f;
    for (int32_t c = 0; c < s->d_v; c++)
        out[c] = 0.0f;
    for (int32_t j = 0; j < seen; j++) {
        l += w[j];
        for (int32_t c = 0; c < s->d_v; c++)
            out[c] += w[j] * v[(size_t)j * s->d_v + c];
    }
    for (int32_t c = 0; c < s->d_v; c++)
        out[c] /= l;
}

static int p_rounded_twice(const attn_problem *p, void *ws)
{
    const attn_shape *s = &p->shape;
    for (int32_t b = 0; b < s->batch; b++)
        for (int32_t h = 0; h < s->heads_q; h++) {
            const float *q = attn_q_head(p, b, h), *k = attn_k_head(p, b, h),
                        *v = attn_v_head(p, b, h);
            float *o = attn_o_head(p, b, h);
            for (int32_t i = 0; i < s->n_q; i++) {
                const int32_t seen = attn_keys_seen(s, i);
                float *out = o + (size_t)i * s->d_v;
                if (seen == 0)
                    memset(out, 0, sizeof(float) * (size_t)s->d_v);
                else
                    twice_row(p, q + (size_t)i * s->d_k, k, v, seen, ws, out);
            }
        }
    return ATTN_OK;
}

/* Runs `v` on case `c` in its types and class over seeds 1..seeds, the
 * statistics merged as verify merges them. */
static int run_class(const attn_variant *v, const attn_case *c, int seeds, attn_err_stats *st,
                     char *why)
{
    attn_case_buffers b;
    attn_err_init(st);
    int rc = attn_case_buffers_alloc_typed(&b, &c->shape, &c->types) != 0 ? -2 : 0;
    for (int seed = 1; rc == 0 && seed <= seeds; seed++) {
        attn_shape s = attn_case_fill(c, (uint64_t)seed, b.q, b.k, b.v);
        attn_err_stats one;
        rc = attn_verify_run_class(v, &s, c->p_round, &b, &one, why, 400);
        attn_err_merge(st, &one);
    }
    attn_case_buffers_free(&b);
    return rc;
}

/* The rule named in a failure report: "rule A", "rule C" or none. */
static int failed_rule(const attn_err_stats *st, char rule)
{
    char want[8];
    snprintf(want, sizeof want, "rule %c", rule);
    return st->failures > 0 && strncmp(st->first_failure, want, strlen(want)) == 0;
}

/* One key too few at n_kv = 4096: rule A's slack hides it in every class;
 * rule B against naive in the same types and class must not. */
static void test_class_drop_key(check_tally *t)
{
    attn_variant naive =
        typed_rogue("naive", naive_run, NULL, ATTN_WIDEN_ON_LOAD, ATTN_DTYPES_ALL, 0);
    attn_variant drop =
        typed_rogue("drop_last_key", drop_last_key, NULL, ATTN_WIDEN_ON_LOAD, ATTN_DTYPES_ALL, 0);
    const struct {
        attn_types types;
        int32_t p_round;
    } classes[] = {
        {{ATTN_F32, ATTN_F32, ATTN_F32}, ATTN_BF16},
        {{ATTN_BF16, ATTN_BF16, ATTN_F32}, ATTN_BF16},
        {{ATTN_BF16, ATTN_BF16, ATTN_BF16}, ATTN_BF16},
        {{ATTN_BF16, ATTN_BF16, ATTN_BF16}, ATTN_F32},
        {{ATTN_F16, ATTN_F16, ATTN_F16}, ATTN_F32},
        {{ATTN_F16, ATTN_F16, ATTN_F16}, ATTN_F16},
    };
    char name[256], why[400];
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        const attn_case c = {.shape = {1, 1, 1, 4, 4096, 16, 16, 0, 0.0f},
                             .data = DATA_NORMAL,
                             .types = classes[i].types,
                             .p_round = classes[i].p_round};
        attn_case_name("drop_last_key", &c, name, sizeof name);
        attn_err_stats naive_st, st;
        CHECK(t, run_class(&naive, &c, 3, &naive_st, why) == 0 && naive_st.failures == 0,
              "naive %s: %s %s", name, why, naive_st.first_failure);
        CHECK(t, run_class(&drop, &c, 3, &st, why) == 0, "%s: %s", name, why);
        CHECK(t, !attn_rule_b_holds(st.e_m, naive_st.e_m),
              "%s: rule B missed one key too few: E_M %.1fu vs naive %.1fu", name, st.e_m,
              naive_st.e_m);
        printf("%s: E_M %.1fu, naive %.1fu (rule A %s)\n", name, st.e_m, naive_st.e_m,
               st.failures ? "fired" : "silent");
    }
}

/* O rounded toward zero: up to a whole ulp of O's type where rule A allows
 * half of one (u_O·|o|, docs/accuracy-classes.md "O in bf16 or f16"), so
 * rule A fires; naive, rounding to nearest, passes the same data. */
static void test_class_o_toward_zero(check_tally *t)
{
    attn_variant naive = typed_rogue("naive", naive_run, NULL, ATTN_WIDEN_ON_LOAD, 0, 0);
    attn_variant trunc =
        typed_rogue("o_toward_zero", o_toward_zero, o_trunc_workspace, ATTN_WIDEN_ON_LOAD, 0, 0);
    const attn_types types[] = {{ATTN_BF16, ATTN_BF16, ATTN_BF16},
                                {ATTN_F16, ATTN_F16, ATTN_F16},
                                {ATTN_F32, ATTN_F32, ATTN_BF16},
                                {ATTN_F32, ATTN_F32, ATTN_F16}};
    char name[256], why[400];
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const attn_case c = {
            .shape = {1, 2, 1, 20, 30, 8, 8, 1, 0.0f}, .data = DATA_NORMAL, .types = types[i]};
        attn_case_name("o_toward_zero", &c, name, sizeof name);
        attn_err_stats st;
        CHECK(t, run_class(&naive, &c, 3, &st, why) == 0 && st.failures == 0, "naive %s: %s %s",
              name, why, st.first_failure);
        CHECK(t, run_class(&trunc, &c, 3, &st, why) == 0 && failed_rule(&st, 'A'),
              "%s: O rounded toward zero not caught by rule A: '%s'", name, st.first_failure);
    }
}

/* P rounded twice with the normaliser of the rounded weights: up to ~4·u_t·D
 * where rule A allows 2·u_t/(1 - u_t)·D (docs/accuracy-classes.md). On
 * random data the roundings mostly cancel (rule B's 4x swallows the rest),
 * so the data realise the bad case: 17 keys, the first block of 16 holding
 * one key with v = 1 (rounded twice, up) and 15 tied keys with v = 0
 * (rounded down), the 17th key raising the max. Found by a search over
 * bf16 scores; rule A's ratio there is 1.28. */
static void test_class_p_rounded_twice(check_tally *t)
{
    attn_variant naive =
        typed_rogue("naive", naive_run, NULL, ATTN_WIDEN_ON_LOAD, ATTN_DTYPES_ALL, 0);
    attn_variant twice = typed_rogue("p_rounded_twice", p_rounded_twice, twice_workspace,
                                     ATTN_WIDEN_BY_DISPATCHER, ATTN_DTYPES_ALL, 0);
    const attn_shape s = {1, 1, 1, 1, 17, 1, 1, 0, 1.0f};
    const attn_types types = {ATTN_BF16, ATTN_BF16, ATTN_F32};
    attn_case_buffers b;
    char why[400];
    if (attn_case_buffers_alloc_typed(&b, &s, &types) != 0) {
        CHECK(t, 0, "cannot allocate");
        attn_case_buffers_free(&b);
        return;
    }
    b.q[0] = 1.0f;
    for (int j = 0; j < 17; j++) {
        b.k[j] = j == 0 ? -0x1.0ap-1f : j < 16 ? 0x1.2cp-3f : 0x1.a8p-1f; /* bf16 values */
        b.v[j] = j == 0 ? 1.0f : 0.0f;
    }
    attn_err_stats st;
    CHECK(t, attn_verify_run_class(&naive, &s, ATTN_BF16, &b, &st, why, sizeof why) == 0,
          "naive: %s", why);
    CHECK(t, st.failures == 0, "naive in p=bf16 fails the crafted data: %s", st.first_failure);
    CHECK(t, attn_verify_run_class(&twice, &s, ATTN_BF16, &b, &st, why, sizeof why) == 0,
          "twice: %s", why);
    CHECK(t, failed_rule(&st, 'A'), "P rounded twice not caught by rule A: '%s' (slack %.3gx)",
          st.first_failure, st.worst_ratio > 0 ? 1.0 / st.worst_ratio : INFINITY);
    attn_case_buffers_free(&b);
}

/* Subnormal bf16 inputs read as zero: undeclared, rule A fires on
 * data=subnormal (a row whose only visible V row is subnormal comes out 0);
 * declared, the reference flushes them too and the same kernel passes. */
static void test_class_daz(check_tally *t)
{
    attn_variant hidden = typed_rogue("undeclared_daz", flush_subnormal_inputs, daz_workspace,
                                      ATTN_WIDEN_BY_DISPATCHER, 0, 0);
    attn_variant declared = typed_rogue("declared_daz", flush_subnormal_inputs, daz_workspace,
                                        ATTN_WIDEN_BY_DISPATCHER, 0, 1);
    const attn_types types[] = {{ATTN_BF16, ATTN_BF16, ATTN_F32},
                                {ATTN_BF16, ATTN_BF16, ATTN_BF16},
                                {ATTN_F32, ATTN_BF16, ATTN_F32}};
    char name[256], why[400];
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const attn_case c = {
            .shape = {1, 2, 2, 33, 33, 9, 9, 1, 0.0f}, .data = DATA_SUBNORMAL, .types = types[i]};
        attn_case_name("daz", &c, name, sizeof name);
        attn_err_stats st;
        CHECK(t, run_class(&hidden, &c, 3, &st, why) == 0 && failed_rule(&st, 'A'),
              "%s: undeclared denormals-are-zero not caught by rule A: '%s'", name,
              st.first_failure);
        CHECK(t, run_class(&declared, &c, 3, &st, why) == 0 && st.failures == 0,
              "%s: declared denormals-are-zero fails: %s %s", name, why, st.first_failure);
    }
}

/* Rule A's underflow floor (docs/accuracy.md): two equal keys, V = 3 and 0
 * times the smallest subnormal, so o = 1.5 subnormals exactly. The float
 * nearest (2 subnormals, ties to even) must pass, though it is off by
 * 2^-150 while M·u is ~2^-167; a result 2^-140 away must still fail. */
static void test_subnormal_floor(check_tally *t)
{
    const attn_shape s = {1, 1, 1, 1, 2, 1, 1, 0, 1.0f};
    const float q[1] = {0.0f}, k[2] = {0.0f, 0.0f}, v[2] = {0x3p-149f, 0.0f};
    attn_ref_input in = attn_ref_input_make(&s, q, k, v);
    double o[1], D[1], M[1], scores[2];
    attn_ref_row r = {.o = o, .D = D, .M = M, .scores = scores};
    CHECK(t, attn_reference_row(&in, 0, 0, 0, &r) == ATTN_OK && o[0] == 0x3p-150,
          "subnormal floor: the reference gave %a, not 0x3p-150", o[0]);
    const float nearest[1] = {0x1p-148f}, far[1] = {0x1p-140f};
    attn_err_stats st;
    attn_err_init(&st);
    attn_err_row(&st, &in, 0, 0, 0, &r, nearest, 1, 1, NULL);
    CHECK(t, st.failures == 0, "a correctly rounded subnormal O failed: %s", st.first_failure);
    attn_err_init(&st);
    attn_err_row(&st, &in, 0, 0, 0, &r, far, 1, 1, NULL);
    CHECK(t, st.failures > 0 && strstr(st.first_failure, "rule A"),
          "an O 2^-140 off at subnormal scale passed rule A: '%s'", st.first_failure);
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
    test_class_drop_key(&t);
    test_class_o_toward_zero(&t);
    test_class_p_rounded_twice(&t);
    test_class_daz(&t);
    test_subnormal_floor(&t);
    return check_report("verify_rules", &t);
}
