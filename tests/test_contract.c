/* The public contract of include/attn.h: every error code, each bad field
 * named, no write to O on any error, names and lookups. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "check.h"
#include "default_types.h"
#include "variant.h"

static const attn_shape good = {1, 2, 1, 3, 4, 5, 6, 0, 0.0f};

static float q[64], k[64], v[64], o[64];

static int o_untouched(void)
{
    for (int i = 0; i < 64; i++)
        if (o[i] != 12345.0f)
            return 0;
    return 1;
}

static void reset_o(void)
{
    for (int i = 0; i < 64; i++)
        o[i] = 12345.0f;
}

/* attn_run must refuse `s` with `code`, name `field` in the message of the
 * internal checker, and leave O alone, for every variant (each in its
 * default types: default_types.h). */
static void expect_refused(check_tally *t, const attn_shape *s, int code, const char *field)
{
    char msg[256];
    for (int i = 0; i < attn_variant_count(); i++) {
        const char *name = attn_variant_name(i);
        reset_o();
        int rc = run_default_types(name, s, q, k, v, o);
        CHECK(t, rc == code, "%s: expected %d for bad %s, got %d", name, code, field, rc);
        CHECK(t, o_untouched(), "%s wrote O on a refused call (%s)", name, field);
    }
    if (code == ATTN_EINVAL && s) {
        CHECK(t, attn_check_shape(s, msg, sizeof msg) == ATTN_EINVAL, "checker accepted %s", field);
        CHECK(t, strstr(msg, field) != NULL, "message '%s' does not name %s", msg, field);
    }
}

static void test_bad_fields(check_tally *t)
{
    struct {
        const char *field;
        attn_shape s;
    } bad[] = {
        {"batch", {0, 2, 1, 3, 4, 5, 6, 0, 0}},
        {"heads_q", {1, -2, 1, 3, 4, 5, 6, 0, 0}},
        {"heads_kv", {1, 2, 0, 3, 4, 5, 6, 0, 0}},
        {"heads_kv", {1, 4, 3, 3, 4, 5, 6, 0, 0}}, /* does not divide heads_q */
        {"n_q", {1, 2, 1, 0, 4, 5, 6, 0, 0}},
        {"n_kv", {1, 2, 1, 3, -7, 5, 6, 0, 0}},
        /* rows past ATTN_MAX_ROWS (K and V of d 1 would fit in memory) */
        {"n_kv = 2147418113 exceeds 2147418112", {1, 1, 1, 1, ATTN_MAX_ROWS + 1, 1, 1, 0, 0}},
        {"n_q = 2147483647 exceeds", {1, 1, 1, INT32_MAX, 1, 1, 1, 0, 0}},
        {"d_k", {1, 2, 1, 3, 4, 0, 6, 0, 0}},
        {"d_v", {1, 2, 1, 3, 4, 5, INT32_MIN, 0, 0}},
        {"causal", {1, 2, 1, 3, 4, 5, 6, 2, 0}},
        {"causal", {1, 2, 1, 3, 4, 5, 6, -1, 0}},
        {"scale", {1, 2, 1, 3, 4, 5, 6, 0, NAN}},
        {"scale", {1, 2, 1, 3, 4, 5, 6, 0, INFINITY}},
        {"scale", {1, 2, 1, 3, 4, 5, 6, 0, -INFINITY}},
        /* byte counts that overflow size_t: 2^31^4 floats */
        {"Q of batch", {INT32_MAX, INT32_MAX, 1, ATTN_MAX_ROWS, 1, INT32_MAX, 1, 0, 0}},
        {"K of batch", {65536, 1, 1, 1, ATTN_MAX_ROWS, INT32_MAX, 1, 0, 0}},
        {"V of batch", {65536, 1, 1, 1, ATTN_MAX_ROWS, 1, INT32_MAX, 0, 0}},
        {"O of batch", {65536, 1, 1, ATTN_MAX_ROWS, 1, 1, INT32_MAX, 0, 0}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_refused(t, &bad[i].s, ATTN_EINVAL, bad[i].field);
}

static void test_null_pointers(check_tally *t)
{
    for (int i = 0; i < attn_variant_count(); i++) {
        const char *name = attn_variant_name(i);
        reset_o();
        CHECK(t, run_default_types(name, NULL, q, k, v, o) == ATTN_EINVAL, "%s: NULL shape", name);
        CHECK(t, run_default_types(name, &good, NULL, k, v, o) == ATTN_EINVAL, "%s: NULL q", name);
        CHECK(t, run_default_types(name, &good, q, NULL, v, o) == ATTN_EINVAL, "%s: NULL k", name);
        CHECK(t, run_default_types(name, &good, q, k, NULL, o) == ATTN_EINVAL, "%s: NULL v", name);
        CHECK(t, run_default_types(name, &good, q, k, v, NULL) == ATTN_EINVAL, "%s: NULL o", name);
        CHECK(t, o_untouched(), "%s wrote O on a NULL argument", name);
    }
    double ref[64];
    CHECK(t, attn_reference(NULL, q, k, v, ref) == ATTN_EINVAL, "reference: NULL shape");
    CHECK(t, attn_reference(&good, q, k, v, NULL) == ATTN_EINVAL, "reference: NULL o");
    attn_shape bad = good;
    bad.heads_kv = 3;
    CHECK(t, attn_reference(&bad, q, k, v, ref) == ATTN_EINVAL, "reference: bad heads_kv");
}

static void test_names(check_tally *t)
{
    int n = attn_variant_count();
    CHECK(t, n >= 1, "no variants");
    CHECK(t, attn_variant_name(-1) == NULL, "index -1");
    CHECK(t, attn_variant_name(n) == NULL, "index count");
    CHECK(t, attn_variant_name(0) && strcmp(attn_variant_name(0), "naive") == 0,
          "first variant is not naive");
    for (int i = 0; i < n; i++) {
        const char *name = attn_variant_name(i);
        int s = attn_variant_supported(name);
        CHECK(t, s == 0 || s == 1, "%s: supported() = %d", name, s);
        for (int j = 0; j < i; j++)
            CHECK(t, strcmp(name, attn_variant_name(j)) != 0, "duplicate name %s", name);
    }
    CHECK(t, attn_variant_supported("no-such-variant") == ATTN_ENOTFOUND, "unknown name");
    CHECK(t, attn_variant_supported(NULL) == ATTN_ENOTFOUND, "NULL name");
    reset_o();
    CHECK(t, attn_run("no-such-variant", &good, q, k, v, o) == ATTN_ENOTFOUND, "run unknown");
    CHECK(t, attn_run(NULL, &good, q, k, v, o) == ATTN_ENOTFOUND, "run NULL name");
    CHECK(t, o_untouched(), "O written for an unknown variant");
    const int codes[] = {ATTN_OK, ATTN_EINVAL, ATTN_ENOTSUP, ATTN_ENOMEM, ATTN_ENOTFOUND, 42};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        CHECK(t, attn_strerror(codes[i]) && attn_strerror(codes[i])[0], "strerror(%d)", codes[i]);
    CHECK(t, strstr(attn_strerror(ATTN_ENOMEM), "workspace") != NULL, "ENOMEM text");
    CHECK(t,
          ATTN_OK == 0 && ATTN_EINVAL == -1 && ATTN_ENOTSUP == -2 && ATTN_ENOMEM == -3 &&
              ATTN_ENOTFOUND == -4,
          "error code values");
}

/* naive's n x n workspace at n = 300000 is 360 GB: refused before any
 * allocation, with O untouched (the inputs are never read, so a tiny
 * buffer stands in for them). */
static void test_naive_enomem(check_tally *t)
{
    attn_shape huge = {1, 1, 1, 300000, 300000, 1, 1, 0, 0.0f};
    float *big = calloc(300000, sizeof(float));
    CHECK(t, big != NULL, "calloc");
    if (!big)
        return;
    big[0] = 777.0f;
    int rc = attn_run("naive", &huge, big, big, big, big);
    CHECK(t, rc == ATTN_ENOMEM, "naive at n=300000 returned %d, want ENOMEM", rc);
    CHECK(t, big[0] == 777.0f, "O written on ENOMEM");
    free(big);
}

/* The layout and the ABI: field order is part of the contract. */
static void test_abi(check_tally *t)
{
    CHECK(t, sizeof(attn_shape) == 9 * 4, "sizeof(attn_shape) = %zu", sizeof(attn_shape));
    attn_shape s;
    CHECK(t,
          (char *)&s.batch - (char *)&s == 0 && (char *)&s.heads_q - (char *)&s == 4 &&
              (char *)&s.heads_kv - (char *)&s == 8 && (char *)&s.n_q - (char *)&s == 12 &&
              (char *)&s.n_kv - (char *)&s == 16 && (char *)&s.d_k - (char *)&s == 20 &&
              (char *)&s.d_v - (char *)&s == 24 && (char *)&s.causal - (char *)&s == 28 &&
              (char *)&s.scale - (char *)&s == 32,
          "field offsets");
}

/* A good call works for every supported variant and matches the reference:
 * within 1e-5 in f32; a variant that takes only bf16 K/V sees the inputs
 * rounded to bf16 (2^-9 each), its weights and O rounded too: within 0.05
 * of O's magnitude (<= 1 here). Accuracy proper is verify's. */
static void test_good_call(check_tally *t)
{
    for (int i = 0; i < 64; i++) {
        q[i] = (float)sin(i * 0.7);
        k[i] = (float)cos(i * 1.3);
        v[i] = (float)sin(i * 0.3 + 1.0);
    }
    double ref[64];
    CHECK(t, attn_reference(&good, q, k, v, ref) == ATTN_OK, "reference");
    for (int i = 0; i < attn_variant_count(); i++) {
        const char *name = attn_variant_name(i);
        reset_o();
        int rc = run_default_types(name, &good, q, k, v, o);
        if (attn_variant_supported(name) != 1) {
            CHECK(t, rc == ATTN_ENOTSUP, "%s unsupported but returned %d", name, rc);
            continue;
        }
        CHECK(t, rc == ATTN_OK, "%s returned %d", name, rc);
        double worst = 0;
        for (int e = 0; e < 2 * 3 * 6; e++)
            worst = fmax(worst, fabs(o[e] - ref[e]));
        const double tol = attn_variant_takes_f32(attn_find_variant(name)) ? 1e-5 : 0.05;
        CHECK(t, worst < tol, "%s differs from the reference by %g", name, worst);
    }
}

int main(void)
{
    check_tally t = {0};
    test_abi(&t);
    test_names(&t);
    test_bad_fields(&t);
    test_null_pointers(&t);
    test_naive_enomem(&t);
    test_good_call(&t);
    return check_report("contract", &t);
}
