/* libFuzzer target: the CLI's value parsers and the name formatters on
 * arbitrary text. The input is split at NUL bytes into an argv (so flags,
 * "--flag=value" forms and missing values all occur), then every string
 * goes through cli_parse_long, cli_parse_double, cli_add_variant,
 * attn_case_set_parse, attn_cpu_parse_mask and attn_shape_arg_parse
 * (--shape), and the formatters write into
 * buffers of exactly the size they are told (so AddressSanitizer sees a
 * one-byte overrun). Each parser's answer is
 * checked against what its contract promises, not only "no crash". */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "cli.h"
#include "cpu_features.h"
#include "perf_cases.h"
#include "problem.h"
#include "shape_arg.h"

enum { MAX_ARGS = 24 };

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_cli_values: %s:%d: violated: %s\n", __FILE__, __LINE__, #cond);  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A string strtol(…, 10) may accept in full: optional blanks, a sign, digits. */
static int looks_like_long(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    if (*text == '+' || *text == '-')
        text++;
    if (!isdigit((unsigned char)*text))
        return 0;
    while (isdigit((unsigned char)*text))
        text++;
    return *text == '\0';
}

static void check_parse_long(const char *text, uint8_t range)
{
    static const long bounds[][2] = {
        {1, 1000}, {0, 0}, {LONG_MIN, LONG_MAX}, {-5, 5}, {1, INT_MAX}, {0, LONG_MAX},
    };
    const long *b = bounds[range % (sizeof bounds / sizeof bounds[0])];
    long out = 12345;
    int rc = cli_parse_long("fuzz", "--n", text, b[0], b[1], &out);
    REQUIRE(rc == 0 || rc == -1);
    if (rc == 0) {
        REQUIRE(out >= b[0] && out <= b[1]);
        REQUIRE(looks_like_long(text));
        REQUIRE(out == strtol(text, NULL, 10));
    } else {
        REQUIRE(out == 12345); /* untouched on refusal */
    }
}

static void check_parse_double(const char *text, uint8_t range)
{
    static const double bounds[][2] = {{0.0, 10.0}, {1e-6, 1e6}, {-1.0, 1.0}, {0.001, 3600.0}};
    const double *b = bounds[range % (sizeof bounds / sizeof bounds[0])];
    double out = 12345.0;
    int rc = cli_parse_double("fuzz", "--seconds", text, b[0], b[1], &out);
    REQUIRE(rc == 0 || rc == -1);
    if (rc == 0)
        REQUIRE(out >= b[0] && out <= b[1] && out == strtod(text, NULL) && text[0] != '+' &&
                !isspace((unsigned char)text[0])); /* never NaN */
    else
        REQUIRE(out == 12345.0);
}

/* --variant NAME, repeated, into a list of exactly `cap` entries. */
static void check_add_variant(char **names, int n_names, int cap)
{
    const struct attn_variant **list = malloc(sizeof *list * (size_t)(cap ? cap : 1));
    int n = 0;
    for (int i = 0; i < n_names; i++) {
        int before = n;
        int rc = cli_add_variant("fuzz", names[i], list, &n, cap);
        REQUIRE(rc == 0 || rc == -1);
        REQUIRE(n >= before && n <= before + 1 && n <= cap);
        if (rc == -1)
            REQUIRE(n == before);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            REQUIRE(list[i] != list[j]); /* each variant once */
    free(list);
}

static void check_case_set(const char *text)
{
    static const char *const names[] = {"quick", "full", "adversarial", "growth"};
    int set = attn_case_set_parse(text);
    REQUIRE(set >= -1 && set < 4);
    if (set >= 0)
        REQUIRE(strcmp(text, names[set]) == 0);
    else
        for (int i = 0; i < 4; i++)
            REQUIRE(strcmp(text, names[i]) != 0);
}

/* The mask parser writes its message into exactly `cap` bytes. */
static void check_cpu_mask(const char *spec, size_t cap)
{
    const uint32_t all = (1u << ATTN_CPU_FEATURE_COUNT) - 1;
    char *msg = cap ? malloc(cap) : NULL;
    uint32_t hide = 0xDEADBEEFu;
    int rc = attn_cpu_parse_mask(spec, &hide, msg, cap);
    REQUIRE(rc == 0 || rc == -1);
    if (rc == 0) {
        REQUIRE((hide & ~all) == 0);
        /* Closed under "hiding X hides what builds on X". */
        if (hide & ATTN_CPU_AVX)
            REQUIRE(hide & ATTN_CPU_AVX2);
        if (hide & ATTN_CPU_AVX2)
            REQUIRE(hide & ATTN_CPU_AVX512F);
        if (hide & ATTN_CPU_AVX512F)
            REQUIRE((hide & ATTN_CPU_AVX512BW) && (hide & ATTN_CPU_AVX512VL));
        if (hide & ATTN_CPU_AMX_TILE)
            REQUIRE(hide & ATTN_CPU_AMX_BF16);
        if (spec[0] != '\0')
            REQUIRE(spec[0] == '-' && hide != 0);
    } else {
        REQUIRE(spec[0] != '\0');
        if (msg) {
            REQUIRE(memchr(msg, '\0', cap) != NULL);
            REQUIRE(cap < 16 || strncmp(msg, "ATTN_CPU_MASK", 13) == 0);
        }
    }
    free(msg);
    /* And the formatter, into exactly `cap` bytes, of whatever set this is. */
    char *names = cap ? malloc(cap) : NULL;
    if (names) {
        attn_cpu_format(hide, names, cap);
        REQUIRE(memchr(names, '\0', cap) != NULL);
    }
    free(names);
}

/* --shape: a shape it takes is one attn_run takes, and its case name (less
 * impl=) reads back as the same shape and data; a refusal leaves the
 * outputs alone and its message fits the buffer. */
static void check_shape_arg(const char *text, size_t cap)
{
    attn_shape s, before;
    memset(&s, 0x5a, sizeof s);
    before = s;
    attn_data_kind data = DATA_KIND_COUNT;
    char *msg = cap ? malloc(cap) : NULL;
    int rc = attn_shape_arg_parse(text, &s, cap % 2 ? &data : NULL, msg, cap);
    REQUIRE(rc == 0 || rc == -1);
    if (rc == -1) {
        REQUIRE(memcmp(&s, &before, sizeof s) == 0 && data == DATA_KIND_COUNT);
        if (msg)
            REQUIRE(memchr(msg, '\0', cap) != NULL);
        free(msg);
        return;
    }
    free(msg);
    REQUIRE(attn_check_shape(&s, NULL, 0) == ATTN_OK);
    /* A nonzero scale= never becomes 0, which would mean 1/sqrt(d_k). */
    const char *sc = strstr(text, "scale=");
    if (sc && (sc == text || sc[-1] == ',') && strtod(sc + 6, NULL) != 0.0)
        REQUIRE(s.scale != 0.0f);
    REQUIRE(cap % 2 == 0 || (data >= 0 && data < DATA_KIND_COUNT));
    const attn_case c = {.shape = s, .data = cap % 2 ? data : DATA_NORMAL};
    char name[400];
    attn_case_name(NULL, &c, name, sizeof name);
    attn_shape back;
    attn_data_kind back_data = DATA_NORMAL;
    REQUIRE(attn_shape_arg_parse(name, &back, &back_data, NULL, 0) == 0);
    REQUIRE(attn_perf_same_cell(&back, &s) && back_data == c.data);
}

/* The canonical case name, into exactly `cap` bytes, of a shape built from
 * the input (any int32 values: the formatter must not care). */
static void check_case_name(const uint8_t *data, size_t size, const char *variant, size_t cap)
{
    attn_case c;
    memset(&c, 0, sizeof c);
    memcpy(&c.shape, data, size < sizeof c.shape ? size : sizeof c.shape);
    c.data = (attn_data_kind)(size ? data[size - 1] % (DATA_KIND_COUNT + 2) : 0);
    char *buf = cap ? malloc(cap) : NULL;
    if (buf) {
        attn_case_name(variant, &c, buf, cap);
        REQUIRE(memchr(buf, '\0', cap) != NULL);
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t knobs = data[0];
    /* A private NUL-terminated copy, cut into argv at every NUL. */
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = "fuzz";
    for (char *p = text; argc < MAX_ARGS && p < text + size - 1; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;

    /* The subcommands' loop: flags with values, switches, the rest unknown. */
    static const char *const flags[] = {"--variant", "--cases", "--seeds", "--filter", "--threads"};
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        int start = i, r = 0;
        for (size_t f = 0; f < sizeof flags / sizeof flags[0] && r == 0; f++) {
            r = cli_flag_value(argc, argv, &i, flags[f], &value);
            REQUIRE(r >= -1 && r <= 1);
            if (r == 1) {
                size_t len = strlen(flags[f]);
                REQUIRE(i == start || i == start + 1);
                REQUIRE(i < argc);
                if (i == start) /* "--flag=value" */
                    REQUIRE(value == argv[start] + len + 1 && argv[start][len] == '=');
                else
                    REQUIRE(value == argv[i] && strcmp(argv[start], flags[f]) == 0);
                check_parse_long(value, knobs);
                check_case_set(value);
            } else if (r == -1) {
                REQUIRE(i == start && i == argc - 1);
            } else {
                REQUIRE(i == start);
            }
        }
        if (r == 0)
            (void)cli_switch(argv, i, "--verbose");
    }
    /* Every string on its own through every value parser and formatter. */
    check_add_variant(argv + 1, argc - 1, knobs % 4);
    for (int i = 1; i < argc; i++) {
        check_parse_long(argv[i], (uint8_t)(knobs + i));
        check_parse_double(argv[i], (uint8_t)(knobs + i));
        check_case_set(argv[i]);
        check_cpu_mask(argv[i], (size_t)((knobs * 7 + i) % 200));
        check_shape_arg(argv[i], (size_t)((knobs * 5 + i) % 300));
    }
    check_case_name(data, size, argc > 1 ? argv[1] : NULL, (size_t)(knobs % 160));
    free(text);
    return 0;
}
