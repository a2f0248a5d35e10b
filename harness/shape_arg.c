/* --shape's parser (shape_arg.h). */
#include "shape_arg.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perf_cases.h"
#include "problem.h"

/* The fields, in the case name's order. */
enum { F_B, F_HQ, F_HKV, F_NQ, F_NKV, F_DK, F_DV, F_CAUSAL, F_SCALE, F_DATA, F_COUNT };
static const char *const field_names[F_COUNT] = {"B",  "Hq", "Hkv",    "nq",    "nkv",
                                                 "dk", "dv", "causal", "scale", "data"};

static int fail(char *msg, size_t cap, const char *fmt, ...)
{
    if (msg && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A field's number in [lo, hi] (lo >= 0: no sign), as a flag's value. */
static int parse_int(const char *text, long lo, long hi, int32_t *out)
{
    long x;
    if (text[0] == '-' || cli_whole_number(text, lo, hi, &x) != 0)
        return -1;
    *out = (int32_t)x;
    return 0;
}

static int field_index(const char *key, size_t len)
{
    for (int f = 0; f < F_COUNT; f++)
        if (strlen(field_names[f]) == len && strncmp(key, field_names[f], len) == 0)
            return f;
    return -1;
}

/* What a key that is not a shape field means, for the message. */
static int other_key(const char *token, size_t key_len, int takes_data, char *msg, size_t cap)
{
    if (key_len == 4 && strncmp(token, "data", 4) == 0 && !takes_data)
        return fail(msg, cap, "'%s': only verify takes an input kind", token);
    if (key_len == 4 && strncmp(token, "impl", 4) == 0)
        return fail(msg, cap, "'%s' names a variant: give it with --variant", token);
    if ((key_len == 1 && (token[0] == 'q' || token[0] == 'o' || token[0] == 'p')) ||
        (key_len == 2 && strncmp(token, "kv", 2) == 0))
        return fail(msg, cap, "'%s': element types come from --dtype, not the shape", token);
    return fail(msg, cap,
                "'%.*s' is not a shape field (B, Hq, Hkv, nq, nkv, dk, dv, causal, scale%s)",
                (int)key_len, token, takes_data ? ", data" : "");
}

int attn_scale_parse(const char *value, float *scale, char *msg, size_t cap)
{
    char *end;
    double x = strtod(value, &end);
    if (value[0] == '\0' || isspace((unsigned char)value[0]) || value[0] == '+' || *end != '\0' ||
        !isfinite(x))
        return fail(msg, cap, "scale = '%s' must be a finite number (0: 1/sqrt(dk))", value);
    /* Beyond FLT_MAX by less than half its step rounds to FLT_MAX, which a
     * case name spells 3.4028235e+38 (above FLT_MAX). */
    if (fabs(x) >= 0x1.ffffffp127)
        return fail(msg, cap, "scale = '%s' is beyond a float's range (+-3.4e38)", value);
    /* A float 0 means 1/sqrt(d_k): a tiny scale must not turn into it. */
    if (x != 0.0 && (float)x == 0.0f)
        return fail(msg, cap, "scale = '%s' rounds to 0 in a float, which means 1/sqrt(dk)", value);
    /* Through a double, as the case names' spelling is checked (cases.c):
     * strtof rounds some 7-digit spellings to the neighbouring float. */
    *scale = (float)x;
    return 0;
}

/* One key=value token into the fields seen so far. */
static int take_field(const char *token, int takes_data, int32_t *ints, float *scale,
                      attn_data_kind *data, const char **given, char *msg, size_t cap)
{
    const char *eq = strchr(token, '=');
    if (!eq)
        return fail(msg, cap, "'%s' is not key=value", token);
    const size_t key_len = (size_t)(eq - token);
    const char *value = eq + 1;
    const int f = field_index(token, key_len);
    if (f < 0 || (f == F_DATA && !takes_data))
        return other_key(token, key_len, takes_data, msg, cap);
    if (given[f])
        return fail(msg, cap, "%s is given twice (%s, then %s)", field_names[f], given[f], value);
    given[f] = value;
    if (f == F_SCALE)
        return attn_scale_parse(value, scale, msg, cap);
    if (f == F_DATA) {
        for (int k = 0; k < DATA_KIND_COUNT; k++)
            if (strcmp(value, attn_data_name((attn_data_kind)k)) == 0) {
                *data = (attn_data_kind)k;
                return 0;
            }
        char kinds[400] = "";
        for (int k = 0, at = 0; k < DATA_KIND_COUNT && at >= 0 && (size_t)at < sizeof kinds; k++)
            at += snprintf(kinds + at, sizeof kinds - (size_t)at, "%s%s", k ? ", " : "",
                           attn_data_name((attn_data_kind)k));
        return fail(msg, cap, "data = '%s' is not one of %s", value, kinds);
    }
    if (f == F_CAUSAL) {
        if (parse_int(value, 0, 1, &ints[f]) != 0)
            return fail(msg, cap, "causal = '%s' must be 0 or 1", value);
        return 0;
    }
    if (parse_int(value, 1, INT32_MAX, &ints[f]) != 0)
        return fail(msg, cap, "%s = '%s' must be a whole number from 1 to %ld", field_names[f],
                    value, (long)INT32_MAX);
    return 0;
}

int attn_shape_arg_parse(const char *text, attn_shape *shape, attn_data_kind *data, char *msg,
                         size_t cap)
{
    if (!text || !shape)
        return fail(msg, cap, "no shape");
    char buf[512];
    if (strlen(text) >= sizeof buf)
        return fail(msg, cap, "'%.40s...' is longer than a shape's %d characters", text,
                    (int)sizeof buf - 1);
    strcpy(buf, text);
    int32_t ints[F_COUNT] = {0};
    const char *given[F_COUNT] = {NULL}; /* each field's value, once given */
    float scale = 0.0f;
    attn_data_kind kind = DATA_NORMAL;
    char *save = NULL;
    /* strtok_r would skip empty fields ("Hq=8,,nq=4"): walk the commas. */
    for (char *token = buf;; token = save + 1) {
        save = strchr(token, ',');
        if (save)
            *save = '\0';
        if (*token == '\0')
            return fail(msg, cap, "'%s' has an empty field", text);
        if (take_field(token, data != NULL, ints, &scale, &kind, given, msg, cap) != 0)
            return -1;
        if (!save)
            break;
    }
    static const int required[] = {F_HQ, F_NQ, F_DK};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!given[required[i]])
            return fail(msg, cap, "'%s' has no %s (required: Hq, nq, dk)", text,
                        field_names[required[i]]);
    attn_shape s = {
        .batch = given[F_B] ? ints[F_B] : 1,
        .heads_q = ints[F_HQ],
        .heads_kv = given[F_HKV] ? ints[F_HKV] : ints[F_HQ],
        .n_q = ints[F_NQ],
        .n_kv = given[F_NKV] ? ints[F_NKV] : ints[F_NQ],
        .d_k = ints[F_DK],
        .d_v = given[F_DV] ? ints[F_DV] : ints[F_DK],
        .causal = ints[F_CAUSAL],
        .scale = scale,
    };
    if (s.heads_q % s.heads_kv != 0)
        return fail(msg, cap, "Hkv = %d does not divide Hq = %d", (int)s.heads_kv, (int)s.heads_q);
    /* Those kinds' data are built for their own scale (cases.c), which
     * attn_case_fill sets: a given one would be named but not run. */
    if (s.scale != 0.0f && attn_data_own_scale(kind) != 0.0f)
        return fail(msg, cap, "scale = %s with data = %s: that input kind sets its own scale (%g)",
                    given[F_SCALE], attn_data_name(kind), (double)attn_data_own_scale(kind));
    /* What else attn_run would refuse, in its words: tensors whose bytes
     * overflow the address space. */
    char why[200];
    if (attn_check_shape(&s, why, sizeof why) != ATTN_OK)
        return fail(msg, cap, "%s", why);
    *shape = s;
    if (data)
        *data = kind;
    return 0;
}

int attn_shape_arg_add(const char *cmd, const char *value, attn_shape *shapes, attn_data_kind *data,
                       int *n, int cap)
{
    char why[300];
    if (*n >= cap) {
        fprintf(stderr, "%s: --shape: '%s' is one more than the %d shapes a run takes\n", cmd,
                value, cap);
        return -1;
    }
    attn_shape s;
    attn_data_kind kind = DATA_NORMAL;
    if (attn_shape_arg_parse(value, &s, data ? &kind : NULL, why, sizeof why) != 0) {
        fprintf(stderr, "%s: --shape: %s\n", cmd, why);
        return -1;
    }
    /* Shapes differ by scale too (case names and cells carry it); verify
     * tells them apart by input kind as well. */
    for (int i = 0; i < *n; i++) {
        if (attn_perf_same_cell(&s, &shapes[i]) && (!data || kind == data[i])) {
            fprintf(stderr, "%s: --shape: '%s' is shape %d again\n", cmd, value, i + 1);
            return -1;
        }
    }
    shapes[*n] = s;
    if (data)
        data[*n] = kind;
    (*n)++;
    return 0;
}

void attn_shape_arg_help(int indent, int takes_data)
{
    static const char *const lines[] = {
        "the shape fields of a case name, in any order, e.g.",
        "Hq=28,Hkv=4,nq=2048,dk=128,causal=1; Hq, nq and dk are required,",
        "the rest default to B=1, Hkv=Hq, nkv=nq, dv=dk, causal=0, scale=0",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        printf("%*s%s\n", indent, "", lines[i]);
    if (takes_data)
        printf("%*s(1/sqrt(dk)), data=normal (or an adversarial input kind:\n"
               "%*shuge_logits, nan_v, masked_nonfinite, ...)\n",
               indent, "", indent, "");
    else
        printf("%*s(1/sqrt(dk))\n", indent, "");
}
