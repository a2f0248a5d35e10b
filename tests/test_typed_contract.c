/* attn_run_typed and attn_variant_supports (include/attn.h): NULL and
 * out-of-range types refused and named, combinations and classes a variant
 * does not take refused and named, O untouched on every error; all-f32
 * types are attn_run bit for bit; an f16 O beyond 65504 is Inf. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "check.h"
#include "dtype.h"
#include "variant.h"

extern const attn_variant attn_variant_naive;

static const attn_shape good = {1, 2, 1, 3, 4, 5, 6, 0, 0.0f};
static const attn_types all_f32 = {ATTN_F32, ATTN_F32, ATTN_F32};

/* Room for the good shape in any type: 64 floats, or 128 halves. */
static float q[64], k[64], v[64], o[64];

static void reset_o(void)
{
    memset(o, 0x5A, sizeof o);
}

static int o_untouched(void)
{
    for (size_t i = 0; i < sizeof o; i++)
        if (((const unsigned char *)o)[i] != 0x5A)
            return 0;
    return 1;
}

static void test_null_types(check_tally *t)
{
    for (int i = 0; i < attn_variant_count(); i++) {
        const char *name = attn_variant_name(i);
        reset_o();
        CHECK(t, attn_run_typed(name, &good, NULL, q, k, v, o) == ATTN_EINVAL, "%s: NULL types",
              name);
        CHECK(t, o_untouched(), "%s wrote O with NULL types", name);
        CHECK(t, attn_variant_supports(name, NULL) == ATTN_EINVAL, "%s: supports(NULL)", name);
        char msg[256] = "";
        CHECK(t,
              attn_run_variant_typed(attn_find_variant(name), &good, NULL, q, k, v, o, NULL, msg,
                                     sizeof msg) == ATTN_EINVAL &&
                  strstr(msg, "types"),
              "%s: NULL options: '%s'", name, msg);
    }
    CHECK(t, attn_run_typed("no-such-variant", &good, NULL, q, k, v, o) == ATTN_ENOTFOUND,
          "unknown variant with NULL types");
    CHECK(t, attn_variant_supports("no-such-variant", &all_f32) == ATTN_ENOTFOUND,
          "supports: unknown variant");
    CHECK(t, o_untouched(), "O written for an unknown variant");
}

/* A value outside attn_dtype in each field: refused before any work, the
 * message naming the field and the value. */
static void test_out_of_range(check_tally *t)
{
    const int32_t bad_values[] = {3, 7, -1, INT32_MIN};
    static const char *const fields[] = {"types.q", "types.kv", "types.o", "p_round"};
    for (size_t bi = 0; bi < sizeof bad_values / sizeof bad_values[0]; bi++)
        for (int f = 0; f < 4; f++) {
            attn_run_options opt = {all_f32, ATTN_F32};
            int32_t *slot[4] = {&opt.types.q, &opt.types.kv, &opt.types.o, &opt.p_round};
            *slot[f] = bad_values[bi];
            char want[64];
            snprintf(want, sizeof want, "%s = %d", fields[f], (int)bad_values[bi]);
            for (int i = 0; i < attn_variant_count(); i++) {
                const char *name = attn_variant_name(i);
                char msg[256] = "";
                reset_o();
                if (f < 3) {
                    CHECK(t, attn_run_typed(name, &good, &opt.types, q, k, v, o) == ATTN_EINVAL,
                          "%s: %s", name, want);
                    CHECK(t, attn_variant_supports(name, &opt.types) == ATTN_EINVAL,
                          "%s: supports with %s", name, want);
                }
                CHECK(t,
                      attn_run_variant_typed(attn_find_variant(name), &good, &opt, q, k, v, o, NULL,
                                             msg, sizeof msg) == ATTN_EINVAL,
                      "%s: internal run with %s", name, want);
                CHECK(t, strstr(msg, want) != NULL, "%s: message '%s' does not say '%s'", name, msg,
                      want);
                CHECK(t, o_untouched(), "%s wrote O with %s", name, want);
            }
        }
}

/* A descriptor that takes only f32 K/V (a kernel without a widening path)
 * and computes only "P in f32": everything else is ENOTSUP, named. */
static int naive_ws(const attn_problem *p, size_t *bytes)
{
    return attn_variant_naive.workspace_size(p, bytes);
}
static int naive_run(const attn_problem *p, void *ws)
{
    return attn_variant_naive.run(p, ws);
}

static void test_not_taken(check_tally *t)
{
    const attn_variant f32_kv = {.name = "f32_kv_only",
                                 .description = "takes f32 K/V only",
                                 .exp_ulps = 1,
                                 .kv_types = ATTN_DTYPE_BIT(ATTN_F32),
                                 .widening = ATTN_WIDEN_ON_LOAD,
                                 .workspace_size = naive_ws,
                                 .run = naive_run};
    const struct {
        attn_run_options opt;
        const char *want;
    } refused[] = {
        {{{ATTN_F32, ATTN_F16, ATTN_F32}, ATTN_F32}, "kv = f16"},
        {{{ATTN_BF16, ATTN_BF16, ATTN_BF16}, ATTN_F32}, "kv = bf16"},
        {{{ATTN_F32, ATTN_F32, ATTN_F32}, ATTN_BF16}, "P rounded to bf16"},
        {{{ATTN_F32, ATTN_F32, ATTN_F32}, ATTN_F16}, "P rounded to f16"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char msg[256] = "";
        reset_o();
        int rc = attn_run_variant_typed(&f32_kv, &good, &refused[i].opt, q, k, v, o, NULL, msg,
                                        sizeof msg);
        CHECK(t, rc == ATTN_ENOTSUP, "%s: returned %d", refused[i].want, rc);
        CHECK(t, strstr(msg, refused[i].want) && strstr(msg, "f32_kv_only"),
              "message '%s' does not name '%s'", msg, refused[i].want);
        CHECK(t, o_untouched(), "O written for %s", refused[i].want);
    }
    /* What it takes still runs: f16 Q and O around f32 K/V. */
    const attn_run_options taken = {{ATTN_F16, ATTN_F32, ATTN_F16}, ATTN_F32};
    memset(q, 0, sizeof q);
    char msg[256] = "";
    CHECK(t,
          attn_run_variant_typed(&f32_kv, &good, &taken, q, k, v, o, NULL, msg, sizeof msg) ==
              ATTN_OK,
          "a taken combination refused: %s", msg);

    /* A class a real variant does not compute: avx2 has "P in f32" only;
     * refused whether or not this CPU runs it (the types come first). */
    const attn_variant *avx2 = attn_find_variant("avx2");
    CHECK(t, avx2 != NULL, "no avx2 in the table");
    if (avx2) {
        const attn_run_options p_bf16 = {all_f32, ATTN_BF16};
        reset_o();
        int rc = attn_run_variant_typed(avx2, &good, &p_bf16, q, k, v, o, NULL, msg, sizeof msg);
        CHECK(t, rc == ATTN_ENOTSUP && strstr(msg, "P rounded to bf16"), "avx2 p=bf16: %d '%s'", rc,
              msg);
        CHECK(t, o_untouched(), "avx2 wrote O for a class it does not compute");
    }
}

/* Every variant takes every combination here: supports() says 1 exactly
 * when the variant is supported at all. */
static void test_supports(check_tally *t)
{
    for (int i = 0; i < attn_variant_count(); i++) {
        const char *name = attn_variant_name(i);
        const attn_variant *var = attn_find_variant(name);
        for (int32_t a = 0; a < ATTN_DTYPE_COUNT; a++)
            for (int32_t b = 0; b < ATTN_DTYPE_COUNT; b++) {
                const attn_types ty = {a, b, a};
                const int takes = (attn_variant_type_set(var->q_types) & ATTN_DTYPE_BIT(a)) &&
                                  (attn_variant_type_set(var->kv_types) & ATTN_DTYPE_BIT(b)) &&
                                  (attn_variant_type_set(var->o_types) & ATTN_DTYPE_BIT(a));
                CHECK(t,
                      attn_variant_supports(name, &ty) == (takes && attn_variant_supported(name)),
                      "%s: supports(%s, %s, %s)", name, attn_dtype_name(a), attn_dtype_name(b),
                      attn_dtype_name(a));
            }
    }
}

/* all-f32 types are attn_run: the same bits, on a shape with several
 * blocks, GQA and causal rows, for every variant this CPU runs; a variant
 * that takes no f32 K/V refuses both alike. */
static void test_f32_bitwise(check_tally *t)
{
    const attn_shape s = {2, 4, 2, 37, 53, 16, 24, 1, 0.0f};
    const size_t nq = 2 * 4 * 37 * 16, nk = 2 * 2 * 53 * 16, nv = 2 * 2 * 53 * 24,
                 no = 2 * 4 * 37 * 24;
    float *bq = malloc(sizeof(float) * nq), *bk = malloc(sizeof(float) * nk),
          *bv = malloc(sizeof(float) * nv), *o1 = malloc(sizeof(float) * no),
          *o2 = malloc(sizeof(float) * no);
    CHECK(t, bq && bk && bv && o1 && o2, "malloc");
    if (bq && bk && bv && o1 && o2) {
        for (size_t i = 0; i < nq; i++)
            bq[i] = (float)sin(0.37 * (double)i);
        for (size_t i = 0; i < nk; i++)
            bk[i] = (float)cos(0.11 * (double)i);
        for (size_t i = 0; i < nv; i++)
            bv[i] = (float)sin(0.07 * (double)i + 1.0);
        for (int i = 0; i < attn_variant_count(); i++) {
            const char *name = attn_variant_name(i);
            if (attn_variant_supported(name) != 1)
                continue;
            if (!attn_variant_takes_f32(attn_find_variant(name))) {
                CHECK(t,
                      attn_run(name, &s, bq, bk, bv, o1) == ATTN_ENOTSUP &&
                          attn_run_typed(name, &s, &all_f32, bq, bk, bv, o2) == ATTN_ENOTSUP,
                      "%s takes no f32 K/V but ran all f32", name);
                continue;
            }
            memset(o1, 0, sizeof(float) * no);
            memset(o2, 0xFF, sizeof(float) * no);
            CHECK(t,
                  attn_run(name, &s, bq, bk, bv, o1) == ATTN_OK &&
                      attn_run_typed(name, &s, &all_f32, bq, bk, bv, o2) == ATTN_OK,
                  "%s: a run failed", name);
            CHECK(t, memcmp(o1, o2, sizeof(float) * no) == 0,
                  "%s: attn_run_typed(all f32) differs from attn_run", name);
        }
    }
    free(bq);
    free(bk);
    free(bv);
    free(o1);
    free(o2);
}

/* An f16 O rounds as attn_f32_to_f16: 65504 stays, 65519 is 65504, 65520
 * and beyond are Inf (one key: O is that V row exactly). Then with 40 keys
 * of one value V: the weights sum to 1 within rounding, far from the
 * boundary for 1e5 and -1e5. Every variant that takes f32 K/V with an
 * f16 O (the values are exact only in f32). */
static void test_f16_overflow(check_tally *t)
{
    const float vals[6] = {65504.0f, 65519.0f, 65520.0f, 70000.0f, -70000.0f, 1e30f};
    const uint16_t want[6] = {0x7BFF, 0x7BFF, 0x7C00, 0x7C00, 0xFC00, 0x7C00};
    const attn_types f16_o = {ATTN_F32, ATTN_F32, ATTN_F16};
    const attn_shape one = {1, 1, 1, 3, 1, 2, 6, 0, 0.0f}, many = {1, 1, 1, 2, 40, 2, 2, 1, 0.0f};
    float kk[80], vv[80], qq[6] = {0.5f, -1.0f, 2.0f, 0.25f, 1.0f, 1.0f};
    uint16_t out[18];
    for (int j = 0; j < 40; j++) {
        kk[2 * j] = (float)j / 10.0f;
        kk[2 * j + 1] = 1.0f;
        vv[2 * j] = 1e5f;
        vv[2 * j + 1] = -1e5f;
    }
    for (int i = 0; i < attn_variant_count(); i++) {
        const char *name = attn_variant_name(i);
        if (attn_variant_supports(name, &f16_o) != 1)
            continue;
        CHECK(t, attn_run_typed(name, &one, &f16_o, qq, kk, vals, out) == ATTN_OK, "%s", name);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 6; c++)
                CHECK(t, out[r * 6 + c] == want[c], "%s: f16 O of %g is 0x%04x, want 0x%04x", name,
                      (double)vals[c], out[r * 6 + c], want[c]);
        CHECK(t, attn_run_typed(name, &many, &f16_o, qq, kk, vv, out) == ATTN_OK, "%s", name);
        for (int r = 0; r < 2; r++)
            CHECK(t, out[2 * r] == 0x7C00 && out[2 * r + 1] == 0xFC00,
                  "%s: 40 keys of +-1e5: 0x%04x 0x%04x", name, out[2 * r], out[2 * r + 1]);
    }
}

int main(void)
{
    check_tally t = {0};
    test_null_types(&t);
    test_out_of_range(&t);
    test_not_taken(&t);
    test_supports(&t);
    test_f32_bitwise(&t);
    test_f16_overflow(&t);
    return check_report("typed_contract", &t);
}
