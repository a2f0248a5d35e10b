/* --shape's parser (harness/shape_arg.h): every shape field of a case name
 * reads back as the shape it names (a case name minus its impl= is a valid
 * --shape, whatever the fields' order), the defaults, and each refusal
 * naming the field and its value with the outputs untouched. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cases.h"
#include "check.h"
#include "shape_arg.h"

static int same_shape(const attn_shape *a, const attn_shape *b)
{
    return a->batch == b->batch && a->heads_q == b->heads_q && a->heads_kv == b->heads_kv &&
           a->n_q == b->n_q && a->n_kv == b->n_kv && a->d_k == b->d_k && a->d_v == b->d_v &&
           a->causal == b->causal && a->scale == b->scale;
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
 * refused), at most `cap`; shapes that differ only in scale share a
 * bench/matrix row but are two verify cases. */
static void check_add(check_tally *t)
{
    attn_shape shapes[3];
    attn_data_kind data[3];
    int n = 0;
    CHECK(t, attn_shape_arg_add("test", "Hq=8,nq=64,dk=32", shapes, NULL, &n, 3) == 0 && n == 1,
          "first shape taken");
    CHECK(t,
          attn_shape_arg_add("test", "Hkv=8,dk=32,nq=64,nkv=64,Hq=8,dv=32", shapes, NULL, &n, 3) ==
                  -1 &&
              n == 1,
          "the same cell spelled otherwise is refused");
    CHECK(t,
          attn_shape_arg_add("test", "Hq=8,nq=64,dk=32,scale=0.5", shapes, NULL, &n, 3) == -1 &&
              n == 1,
          "bench/matrix: a shape differing only in scale is refused");
    CHECK(t, attn_shape_arg_add("test", "Hq=8,nq=64,dk=32,causal=1", shapes, NULL, &n, 3) == 0,
          "another cell taken");
    CHECK(t, attn_shape_arg_add("test", "Hq=8,nq=65,dk=32", shapes, NULL, &n, 3) == 0 && n == 3,
          "a third");
    CHECK(t, attn_shape_arg_add("test", "Hq=8,nq=66,dk=32", shapes, NULL, &n, 3) == -1 && n == 3,
          "one past cap is refused");
    n = 0;
    CHECK(t, attn_shape_arg_add("test", "Hq=2,nq=5,dk=4", shapes, data, &n, 3) == 0,
          "verify: taken");
    CHECK(t, attn_shape_arg_add("test", "Hq=2,nq=5,dk=4,scale=0.5", shapes, data, &n, 3) == 0,
          "verify: another scale is another case");
    CHECK(t,
          attn_shape_arg_add("test", "Hq=2,nq=5,dk=4,data=tied", shapes, data, &n, 3) == 0 &&
              n == 3 && data[2] == DATA_TIED && shapes[1].scale == 0.5f,
          "verify: another input kind is another case");
    n = 2;
    CHECK(t, attn_shape_arg_add("test", "dk=4,nq=5,Hq=2,scale=0.5", shapes, data, &n, 3) == -1,
          "verify: the same case again is refused");
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
    refused(t, "Hq=8,Hkv=3,nq=4,dk=8", 1, "Hkv = 3 does not divide Hq = 8");
    refused(t, "impl=avx2,Hq=8,nq=4,dk=8", 1,
            "'impl=avx2' names a variant: give it with --variant");
    refused(t, "Hq=8,nq=4,dk=8,kv=bf16", 1, "'kv=bf16': element types come from --dtype");
    refused(t, "Hq=8,nq=4,dk=8,p=bf16", 1, "'p=bf16': element types come from --dtype");
    refused(t, "Hq=8,nq=4", 1, "has no dk (required: Hq, nq, dk)");
    refused(t, "nq=4,dk=8", 1, "has no Hq");
    refused(t, "Hq=8,dk=8", 1, "has no nq");
    refused(t, "Hq=8,nq=4,dk=8,,causal=1", 1, "has an empty field");
    refused(t, "Hq=8,nq=4,dk=8,", 1, "has an empty field");
    refused(t, "", 1, "has an empty field");
    refused(t, "Hq=8,nq=0,dk=8", 1, "nq = '0' must be a whole number from 1 to 2147483647");
    refused(t, "Hq=8,nq=4,dk=8,nkv=2147483648", 1, "nkv = '2147483648' must be a whole number");
    refused(t, "Hq=8,nq=4,dk=8,B=-1", 1, "B = '-1' must be a whole number");
    refused(t, "Hq=8,nq=4,dk=8x", 1, "dk = '8x' must be a whole number");
    refused(t, "Hq=8,nq=4,dk=", 1, "dk = '' must be a whole number");
    refused(t, "Hq=8,nq=4,dk=8,causal=2", 1, "causal = '2' must be 0 or 1");
    refused(t, "Hq=8,nq=4,dk=8,scale=inf", 1, "scale = 'inf' must be a finite number");
    refused(t, "Hq=8,nq=4,dk=8,scale=1e39", 1, "scale = '1e39' is beyond a float's range");
    refused(t, "Hq=8,nq=4,dk=8,scale=nan", 1, "scale = 'nan' must be a finite number");
    refused(t, "Hq=8,nq=4,dk=8,foo=1", 1, "'foo' is not a shape field (B, Hq, Hkv, nq, nkv");
    refused(t, "Hq=8,nq=4,dk=8,hq=1", 1, "'hq' is not a shape field");
    refused(t, "Hq=8,nq=4,dk=8,causal", 1, "'causal' is not key=value");
    refused(t, "Hq=8,Hq=4,nq=4,dk=8", 1, "Hq is given twice (8, then 4)");
    /* The digits alone, as every flag's number: no blank, no sign. */
    refused(t, "Hq= 8,nq=4,dk=8", 1, "Hq = ' 8' must be a whole number");
    refused(t, "Hq=+8,nq=4,dk=8", 1, "Hq = '+8' must be a whole number");
    refused(t, "Hq=8,nq=4,dk=8,causal=-0", 1, "causal = '-0' must be 0 or 1");
    refused(t, "Hq=8,nq=4,dk=8,scale=+0.5", 1, "scale = '+0.5' must be a finite number");
    refused(t, "Hq=8,nq=4,dk=8,scale= 0.5", 1, "scale = ' 0.5' must be a finite number");
    refused(t, "Hq=8,nq=4,dk=8,scale=", 1, "scale = '' must be a finite number");
    /* A scale that is not the one run, or that would silently become 0
     * (which means 1/sqrt(d_k)). */
    refused(t, "Hq=8,nq=4,dk=8,scale=0.05,data=huge_logits", 1,
            "scale = 0.05 with data = huge_logits: that input kind sets its own scale (20)");
    refused(t, "Hq=8,nq=4,dk=8,data=rising,scale=2", 1, "sets its own scale (1)");
    refused(t, "Hq=8,nq=4,dk=8,scale=1e-50", 1, "scale = '1e-50' rounds to 0 in a float");
    refused(t, "Hq=8,nq=4,dk=8,scale=-1e-310", 1, "scale = '-1e-310' rounds to 0 in a float");
    refused(t, "Hq=8,nq=4,dk=8,data=weird", 1, "data = 'weird' is not one of normal, huge_logits");
    refused(t, "Hq=8,nq=4,dk=8,data=tied", 0, "'data=tied': only verify takes an input kind");
    /* What attn_run refuses beyond the fields: the tensors' sizes. */
    refused(t, "B=2147483647,Hq=2147483647,nq=2147418112,dk=2147483647", 1, "overflows");
    refused(t, "Hq=1,nq=1,nkv=2147418113,dk=1", 1,
            "n_kv = 2147418113 exceeds 2147418112, the most rows a head may have");
    char longer[700];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    refused(t, longer, 1, "is longer than a shape's 511 characters");
}

int main(void)
{
    check_tally t = {0, 0};
    check_round_trip(&t);
    check_defaults(&t);
    check_refusals(&t);
    check_add(&t);
    return check_report("shape_arg", &t);
}
