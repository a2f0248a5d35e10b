/* --shape's parser (harness/shape_arg.h): every shape field of a case name
 * reads back as the shape it names (a case name minus its impl= is a valid
 * --shape, whatever the fields' order), the defaults, and each refusal
 * naming the field and its value with the outputs untouched. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cases.h"
#include "check.h"
#include "perf_cases.h"
#include "shape_arg.h"

/* The same cell and the same scale. */
static int same_shape(const attn_shape *a, const attn_shape *b)
{
    return attn_perf_same_cell(a, b) && a->scale == b->scale;
}

/* The case name without its "impl=..," part, fields reversed when `reverse`. */
static void shape_text(const attn_case *c, int reverse, char *buf, size_t cap)
{
    char name[300];
    attn_case_name("x", c, name, sizeof name);
    const char *fields = strchr(name, ',') + 1; /* past impl=x */
    if (!reverse) {
        snprintf(buf, cap, "%s", fields);
        return;
    }
    char copy[300], *parts[16];
    int n = 0;
    snprintf(copy, sizeof copy, "%s", fields);
    for (char *p = strtok(copy, ","); p && n < 16; p = strtok(NULL, ","))
        parts[n++] = p;
    size_t at = 0;
    buf[0] = '\0';
    for (int i = n - 1; i >= 0 && at < cap; i--)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", parts[i], i ? "," : "");
}

static void check_round_trip(check_tally *t)
{
    const attn_case cases[] = {
        {.shape = {1, 8, 8, 512, 512, 64, 64, 0, 0.0f}},
        {.shape = {3, 32, 8, 1, 32768, 128, 128, 1, 0.0f}, .data = DATA_NAN_V},
        {.shape = {2, 28, 4, 3000, 2999, 192, 128, 1, 0.125f}, .data = DATA_NAN_K},
        {.shape = {1, 16, 2, 33, 7, 8, 8, 1, 0.0f}, .data = DATA_HUGE_LOGITS},
        {.shape = {1, 7, 1, 1, 1, 1, 1, 0, -3.5e-7f}, .data = DATA_MASKED_NONFINITE},
        {.shape = {1, 2, 2, 9, 33, 256, 80, 1, 1e30f}, .data = DATA_SUBNORMAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int reverse = 0; reverse <= 1; reverse++) {
            char text[300], msg[300] = "";
            shape_text(&cases[i], reverse, text, sizeof text);
            attn_shape s;
            attn_data_kind data = DATA_KIND_COUNT;
            int rc = attn_shape_arg_parse(text, &s, &data, msg, sizeof msg);
            CHECK(t, rc == 0 && same_shape(&s, &cases[i].shape) && data == cases[i].data,
                  "'%s' reads back as its case (rc %d: %s)", text, rc, msg);
        }
}

/* Every finite nonzero float scale: its case name spells it exactly (the
 * shortest of 6 to 9 digits that reads back), so a name and its --shape
 * are the same cell; scales six digits already spell keep their names. */
static void check_scale_spelling(check_tally *t)
{
    static const struct {
        float scale;
        const char *spelled;
    } kept[] = {{0.125f, ",scale=0.125,"},
                {2.0f, ",scale=2,"},
                {1e30f, ",scale=1e+30,"},
                {-3.5e-7f, ",scale=-3.5e-07,"},
                {0.1f, ",scale=0.1,"},
                {1.0f / 3.0f, ",scale=0.33333334,"},
                {-FLT_MAX, ",scale=-3.4028235e+38,"}};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        const attn_case c = {.shape = {1, 2, 2, 3, 3, 4, 4, 0, kept[i].scale}, .data = DATA_TIED};
        char name[300];
        attn_case_name(NULL, &c, name, sizeof name);
        CHECK(t, strstr(name, kept[i].spelled) != NULL, "scale %a is spelled '%s': %s",
              (double)kept[i].scale, kept[i].spelled, name);
        attn_shape s;
        attn_data_kind data = DATA_NORMAL;
        char msg[300] = "";
        int rc = attn_shape_arg_parse(name, &s, &data, msg, sizeof msg);
        CHECK(t, rc == 0 && same_shape(&s, &c.shape) && data == DATA_TIED,
              "'%s' reads back as its case (rc %d: %s)", name, rc, msg);
    }
    /* Bit patterns across every exponent, subnormals and FLT_MAX's too. */
    uint32_t bits = 0x3f13e93eu; /* 0.5777777f, which %g spelled 0.577778 */
    int wrong = 0;
    for (int i = 0; i < 20000; i++) {
        float scale;
        memcpy(&scale, &bits, sizeof scale);
        bits = bits * 1664525u + 1013904223u;
        if (!isfinite(scale) || scale == 0.0f)
            continue;
        const attn_case c = {.shape = {1, 2, 2, 3, 3, 4, 4, 1, scale}};
        char name[300];
        attn_case_name(NULL, &c, name, sizeof name);
        attn_shape s;
        char msg[300] = "";
        int rc = attn_shape_arg_parse(name, &s, NULL, msg, sizeof msg);
        if (rc != 0 || !same_shape(&s, &c.shape)) {
            if (wrong++ < 3)
                CHECK(t, 0, "'%s' reads back as scale %a (rc %d: %s)", name, (double)s.scale, rc,
                      msg);
        }
    }
    CHECK(t, wrong == 0, "every random float scale reads back from its case name (%d wrong)",
          wrong);
}

static void check_defaults(check_tally *t)
{
    attn_shape s;
    attn_data_kind data = DATA_INF;
    char msg[300] = "";
    int rc = attn_shape_arg_parse("dk=96,nq=7,Hq=12", &s, &data, msg, sizeof msg);
    const attn_shape want = {1, 12, 12, 7, 7, 96, 96, 0, 0.0f};
    CHECK(t, rc == 0 && same_shape(&s, &want) && data == DATA_NORMAL,
          "Hq, nq and dk alone: B 1, Hkv Hq, nkv nq, dv dk, causal 0, scale 0, normal data (%s)",
          msg);
    rc = attn_shape_arg_parse("Hq=4,Hkv=2,nq=1,nkv=100,dk=8,dv=3,causal=1,B=5", &s, NULL, msg,
                              sizeof msg);
    const attn_shape given = {5, 4, 2, 1, 100, 8, 3, 1, 0.0f};
    CHECK(t, rc == 0 && same_shape(&s, &given), "every field given, data not taken (%s)", msg);
    rc = attn_shape_arg_parse("Hq=08,nq=4,dk=8,scale=0x1p-3,data=tied", &s, &data, msg, sizeof msg);
    const attn_shape odd = {1, 8, 8, 4, 4, 8, 8, 0, 0.125f};
    CHECK(t, rc == 0 && same_shape(&s, &odd) && data == DATA_TIED,
          "a leading 0 is decimal, a hex float scale exact (%s)", msg);
    rc = attn_shape_arg_parse("Hq=1,nq=1,dk=1,scale=-1e-40", &s, NULL, msg, sizeof msg);
    CHECK(t, rc == 0 && s.scale == -1e-40f && s.scale != 0.0f,
          "a subnormal scale stays itself, not 0 (%s)", msg);
}

/* A command's list: each shape once (the same cell spelled twice is
 * refused), at most `cap`; another scale is another cell (its case name
 * and row carry it), another input kind another verify case. */
static void check_add(check_tally *t)
{
    /* Steps on one list of cap 3, in order: the value, whether the list
     * keeps input kinds (verify), the code and the count after. */
    static const struct {
        const char *value;
        int with_data, rc, n;
        const char *what;
    } steps[] = {
        {"Hq=8,nq=64,dk=32", 0, 0, 1, "first shape taken"},
        {"Hkv=8,dk=32,nq=64,nkv=64,Hq=8,dv=32", 0, -1, 1, "the same cell spelled otherwise"},
        {"Hq=8,nq=64,dk=32,scale=0.5", 0, 0, 2, "bench/matrix: another scale is another cell"},
        {"dk=32,Hq=8,nq=64,scale=0.5", 0, -1, 2, "bench/matrix: the same scale again"},
        {"Hq=8,nq=64,dk=32,causal=1", 0, 0, 3, "a third"},
        {"Hq=8,nq=66,dk=32", 0, -1, 3, "one past cap"},
        {NULL, 1, 0, 0, "verify's list"},
        {"Hq=2,nq=5,dk=4", 1, 0, 1, "verify: taken"},
        {"Hq=2,nq=5,dk=4,scale=0.5", 1, 0, 2, "verify: another scale is another case"},
        {"Hq=2,nq=5,dk=4,data=tied", 1, 0, 3, "verify: another input kind is another case"},
        {NULL, 1, 0, 2, "drop the last"},
        {"dk=4,nq=5,Hq=2,scale=0.5", 1, -1, 2, "verify: the same case again"},
    };
    attn_shape shapes[3];
    attn_data_kind data[3];
    int n = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (!steps[i].value) { /* reset the count, keep the entries */
            n = steps[i].n;
            continue;
        }
        int rc = attn_shape_arg_add("test", steps[i].value, shapes,
                                    steps[i].with_data ? data : NULL, &n, 3);
        CHECK(t, rc == steps[i].rc && n == steps[i].n, "%s: '%s' gave %d with %d shapes",
              steps[i].what, steps[i].value, rc, n);
    }
    CHECK(t, data[2] == DATA_TIED && shapes[1].scale == 0.5f, "verify's entries kept as given");
}

/* text must be refused with a message containing `want`, *shape and *data
 * untouched. */
static void refused(check_tally *t, const char *text, int takes_data, const char *want)
{
    attn_shape s = {9, 9, 9, 9, 9, 9, 9, 0, 9.0f};
    const attn_shape before = s;
    attn_data_kind data = DATA_TIED;
    char msg[300] = "";
    int rc = attn_shape_arg_parse(text, &s, takes_data ? &data : NULL, msg, sizeof msg);
    CHECK(t, rc == -1 && strstr(msg, want) != NULL,
          "'%s': want a refusal saying \"%s\", got %d: %s", text, want, rc, msg);
    CHECK(t, same_shape(&s, &before) && data == DATA_TIED, "'%s': outputs untouched", text);
}

static void check_refusals(check_tally *t)
{
    /* The text, whether data= is taken, what the message must say. */
    static const struct {
        const char *text;
        int takes_data;
        const char *want;
    } bad[] = {
        {"Hq=8,Hkv=3,nq=4,dk=8", 1, "Hkv = 3 does not divide Hq = 8"},
        {"impl=avx2,Hq=8,nq=4,dk=8", 1, "'impl=avx2' names a variant: give it with --variant"},
        {"Hq=8,nq=4,dk=8,kv=bf16", 1, "'kv=bf16': element types come from --dtype"},
        {"Hq=8,nq=4,dk=8,p=bf16", 1, "'p=bf16': element types come from --dtype"},
        {"Hq=8,nq=4", 1, "has no dk (required: Hq, nq, dk)"},
        {"nq=4,dk=8", 1, "has no Hq"},
        {"Hq=8,dk=8", 1, "has no nq"},
        {"Hq=8,nq=4,dk=8,,causal=1", 1, "has an empty field"},
        {"Hq=8,nq=4,dk=8,", 1, "has an empty field"},
        {"", 1, "has an empty field"},
        {"Hq=8,nq=0,dk=8", 1, "nq = '0' must be a whole number from 1 to 2147483647"},
        {"Hq=8,nq=4,dk=8,nkv=2147483648", 1, "nkv = '2147483648' must be a whole number"},
        {"Hq=8,nq=4,dk=8,B=-1", 1, "B = '-1' must be a whole number"},
        {"Hq=8,nq=4,dk=8x", 1, "dk = '8x' must be a whole number"},
        {"Hq=8,nq=4,dk=", 1, "dk = '' must be a whole number"},
        {"Hq=8,nq=4,dk=8,causal=2", 1, "causal = '2' must be 0 or 1"},
        {"Hq=8,nq=4,dk=8,scale=inf", 1, "scale = 'inf' must be a finite number"},
        {"Hq=8,nq=4,dk=8,scale=1e39", 1, "scale = '1e39' is beyond a float's range"},
        {"Hq=8,nq=4,dk=8,scale=-3.4028236e38", 1,
         "scale = '-3.4028236e38' is beyond a float's range"},
        {"Hq=8,nq=4,dk=8,scale=nan", 1, "scale = 'nan' must be a finite number"},
        {"Hq=8,nq=4,dk=8,foo=1", 1, "'foo' is not a shape field (B, Hq, Hkv, nq, nkv"},
        {"Hq=8,nq=4,dk=8,hq=1", 1, "'hq' is not a shape field"},
        {"Hq=8,nq=4,dk=8,causal", 1, "'causal' is not key=value"},
        {"Hq=8,Hq=4,nq=4,dk=8", 1, "Hq is given twice (8, then 4)"},
        /* The digits alone, as every flag's number: no blank, no sign. */
        {"Hq= 8,nq=4,dk=8", 1, "Hq = ' 8' must be a whole number"},
        {"Hq=+8,nq=4,dk=8", 1, "Hq = '+8' must be a whole number"},
        {"Hq=8,nq=4,dk=8,causal=-0", 1, "causal = '-0' must be 0 or 1"},
        {"Hq=8,nq=4,dk=8,scale=+0.5", 1, "scale = '+0.5' must be a finite number"},
        {"Hq=8,nq=4,dk=8,scale= 0.5", 1, "scale = ' 0.5' must be a finite number"},
        {"Hq=8,nq=4,dk=8,scale=", 1, "scale = '' must be a finite number"},
        /* A scale that is not the one run, or that would silently become 0
         * (which means 1/sqrt(d_k)). */
        {"Hq=8,nq=4,dk=8,scale=0.05,data=huge_logits", 1,
         "scale = 0.05 with data = huge_logits: that input kind sets its own scale (20)"},
        {"Hq=8,nq=4,dk=8,data=rising,scale=2", 1, "sets its own scale (1)"},
        {"Hq=8,nq=4,dk=8,scale=1e-50", 1, "scale = '1e-50' rounds to 0 in a float"},
        {"Hq=8,nq=4,dk=8,scale=-1e-310", 1, "scale = '-1e-310' rounds to 0 in a float"},
        {"Hq=8,nq=4,dk=8,data=weird", 1, "data = 'weird' is not one of normal, huge_logits"},
        {"Hq=8,nq=4,dk=8,data=tied", 0, "'data=tied': only verify takes an input kind"},
        /* What attn_run refuses beyond the fields: the tensors' sizes. */
        {"B=2147483647,Hq=2147483647,nq=2147418112,dk=2147483647", 1, "overflows"},
        {"Hq=1,nq=1,nkv=2147418113,dk=1", 1,
         "n_kv = 2147418113 exceeds 2147418112, the most rows a head may have"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        refused(t, bad[i].text, bad[i].takes_data, bad[i].want);
    char longer[700];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    refused(t, longer, 1, "is longer than a shape's 511 characters");
}

int main(void)
{
    check_tally t = {0, 0};
    check_round_trip(&t);
    check_scale_spelling(&t);
    check_defaults(&t);
    check_refusals(&t);
    check_add(&t);
    return check_report("shape_arg", &t);
}
