/* The `peak` object of docs/results-format.md, written and read back:
 *   {"fma_gflops": {"scalar": {"1": 9.8, "2": 19.5}, ...},
 *    "exp_gelem_per_s": {"expf": {"1": 0.4}, ...},
 *    "read_gbytes_per_s": {"1": 20.1, "2": 30.2},
 *    "triad_gbytes_per_s": {"1": 15.0, "2": 22.0},
 *    "sgemm_gflops": {"1": 160.0}, "sgemm_library": "OpenBLAS 0.3.21 SkylakeX",
 *    "pages": "huge"}
 * The reader is a small recursive-descent JSON parser (attn_json_walk, also
 * used by the peer client) that hands every scalar to a visitor with its
 * path of keys; it accepts the peak object at the top level or as the
 * "peak" member of a sidecar .meta.json. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "peak.h"
#include "peak_kernels.h"

static void write_thread_map(FILE *f, const attn_peak *pk, const double *x)
{
    fprintf(f, "{");
    int first = 1;
    for (int ti = 0; ti < pk->n_threads; ti++) {
        if (!isfinite(x[ti]))
            continue;
        fprintf(f, "%s\"%d\": %.6g", first ? "" : ", ", pk->threads[ti], x[ti]);
        first = 0;
    }
    fprintf(f, "}");
}

void attn_peak_write_json(FILE *f, const attn_peak *pk, int indent)
{
    const int in = indent + 2;
    fprintf(f, "{\n%*s\"fma_gflops\": {", in, "");
    int first = 1;
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        if (!attn_peak_any_finite(pk, pk->fma_gflops[i]))
            continue;
        fprintf(f, "%s\"%s\": ", first ? "" : ", ", attn_isa_name((attn_isa)i));
        write_thread_map(f, pk, pk->fma_gflops[i]);
        first = 0;
    }
    fprintf(f, "},\n%*s\"exp_gelem_per_s\": {", in, "");
    first = 1;
    for (int e = 0; e < ATTN_EXP_COUNT; e++) {
        if (!attn_peak_any_finite(pk, pk->exp_gelem_per_s[e]))
            continue;
        fprintf(f, "%s\"%s\": ", first ? "" : ", ", attn_exp_name((attn_exp_kind)e));
        write_thread_map(f, pk, pk->exp_gelem_per_s[e]);
        first = 0;
    }
    fprintf(f, "},\n%*s\"bf16_gflops\": {", in, "");
    first = 1;
    for (int b = 0; b < ATTN_BF16_COUNT; b++) {
        if (!attn_peak_any_finite(pk, pk->bf16_gflops[b]))
            continue;
        fprintf(f, "%s\"%s\": ", first ? "" : ", ", attn_bf16_name((attn_bf16_kind)b));
        write_thread_map(f, pk, pk->bf16_gflops[b]);
        first = 0;
    }
    fprintf(f, "},\n%*s\"fma_chains\": {", in, "");
    first = 1;
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        double chains[ATTN_PEAK_MAX_THREAD_COUNTS];
        for (int ti = 0; ti < pk->n_threads; ti++)
            chains[ti] = pk->fma_chains[i][ti] > 0 ? pk->fma_chains[i][ti] : NAN;
        if (!attn_peak_any_finite(pk, chains))
            continue;
        fprintf(f, "%s\"%s\": ", first ? "" : ", ", attn_isa_name((attn_isa)i));
        write_thread_map(f, pk, chains);
        first = 0;
    }
    fprintf(f, "},\n%*s\"read_gbytes_per_s\": ", in, "");
    write_thread_map(f, pk, pk->read_gbytes_per_s);
    fprintf(f, ",\n%*s\"read_kernel\": {", in, "");
    first = 1;
    for (int ti = 0; ti < pk->n_threads; ti++) {
        if (!pk->read_kernel[ti][0])
            continue;
        fprintf(f, "%s\"%d\": ", first ? "" : ", ", pk->threads[ti]);
        attn_json_put_string(f, pk->read_kernel[ti]);
        first = 0;
    }
    fprintf(f, "}");
    fprintf(f, ",\n%*s\"triad_gbytes_per_s\": ", in, "");
    write_thread_map(f, pk, pk->triad_gbytes_per_s);
    if (attn_peak_any_finite(pk, pk->sgemm_gflops)) {
        fprintf(f, ",\n%*s\"sgemm_gflops\": ", in, "");
        write_thread_map(f, pk, pk->sgemm_gflops);
        fprintf(f, ",\n%*s\"sgemm_library\": ", in, "");
        attn_json_put_string(f, pk->sgemm_library);
    }
    if (pk->pages[0]) {
        fprintf(f, ",\n%*s\"pages\": ", in, "");
        attn_json_put_string(f, pk->pages);
    }
    fprintf(f, "\n%*s}", indent, "");
}

/* One character as JSON text: itself, or its escape. */
static int quote_char(unsigned char c, char out[8])
{
    if (c == '"' || c == '\\')
        return snprintf(out, 8, "\\%c", c);
    if (c < 0x20)
        return snprintf(out, 8, "\\u%04x", c);
    out[0] = (char)c;
    out[1] = '\0';
    return 1;
}

void attn_json_put_string(FILE *f, const char *s)
{
    char piece[8];
    fputc('"', f);
    for (; *s; s++) {
        quote_char((unsigned char)*s, piece);
        fputs(piece, f);
    }
    fputc('"', f);
}

/* Appends `piece` to out[0..n) while every piece so far fitted (*kept
 * tracks what did), so a cut string ends before a piece, never inside an
 * escape; returns the length the whole needs. */
static size_t add_piece(char *out, size_t cap, const char *piece, size_t n, size_t *kept)
{
    const size_t len = strlen(piece);
    if (*kept == n && n + len < cap) {
        memcpy(out + n, piece, len);
        *kept += len;
    }
    return n + len;
}

int attn_json_quote(const char *s, char *out, size_t cap)
{
    char piece[8];
    size_t kept = 0, n = add_piece(out, cap, "\"", 0, &kept);
    for (; *s; s++) {
        quote_char((unsigned char)*s, piece);
        n = add_piece(out, cap, piece, n, &kept);
    }
    n = add_piece(out, cap, "\"", n, &kept);
    if (cap)
        out[kept] = '\0';
    return (int)n;
}

/* ---- reading ---- */

/* The generic walker (peak.h): every scalar goes to the visitor with its
 * path of keys. */
typedef struct json_parser {
    const char *start, *p, *end;
    char path[ATTN_JSON_MAX_DEPTH][ATTN_JSON_MAX_KEY];
    int depth;
    attn_json_visitor visit;
    void *ctx;
    char text[ATTN_JSON_MAX_TEXT]; /* the string value being handed over */
    char *err;
    size_t cap;
    int failed;
} json_parser;

static void fail(json_parser *j, const char *what)
{
    if (!j->failed && j->err)
        snprintf(j->err, j->cap, "%s at byte %ld", what, (long)(j->p - j->start));
    j->failed = 1;
}

static void skip_ws(json_parser *j)
{
    while (j->p < j->end && isspace((unsigned char)*j->p))
        j->p++;
}

/* The character of the escape after a backslash at j->p (which moves past
 * it), or -1 for one JSON does not have. */
static int escaped_char(json_parser *j)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char c = *j->p++;
    const char *at = c ? strchr(from, c) : NULL;
    if (at)
        return (unsigned char)to[at - from];
    if (c != 'u' || j->end - j->p < 4)
        return -1;
    int code = 0;
    for (int i = 0; i < 4; i++, j->p++) {
        const char h = *j->p;
        if (!isxdigit((unsigned char)h))
            return -1;
        code = 16 * code +
               (isdigit((unsigned char)h) ? h - '0' : tolower((unsigned char)h) - 'a' + 10);
    }
    /* The texts read here are ASCII names and messages: beyond it, a mark. */
    return code > 0 && code < 0x80 ? code : '?';
}

static int parse_string(json_parser *j, char *out, size_t cap)
{
    if (j->p >= j->end || *j->p != '"') {
        fail(j, "expected a string");
        return -1;
    }
    j->p++;
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        int c = (unsigned char)*j->p++;
        if (c == '\\' && j->p < j->end && (c = escaped_char(j)) < 0) {
            fail(j, "a bad escape in a string");
            return -1;
        }
        if (n + 1 < cap)
            out[n++] = (char)c;
    }
    if (j->p >= j->end) {
        fail(j, "unterminated string");
        return -1;
    }
    j->p++;
    if (cap)
        out[n] = '\0';
    return 0;
}

static void visit(json_parser *j, attn_json_kind kind, double number, const char *text)
{
    if (j->visit) {
        attn_json_value v = {kind, number, text};
        j->visit(j->ctx, (const char(*)[ATTN_JSON_MAX_KEY])j->path, j->depth, &v);
    }
}

static void parse_value(json_parser *j);

/* One member of an object or array: its value parsed under path `name`,
 * then the separator. Returns 1 when a ',' says another member follows, 0
 * when `close` ended the container or parsing failed. */
static int parse_member(json_parser *j, const char *name, char close)
{
    if (j->depth >= ATTN_JSON_MAX_DEPTH) {
        fail(j, "nested too deeply");
        return 0;
    }
    snprintf(j->path[j->depth++], ATTN_JSON_MAX_KEY, "%s", name);
    parse_value(j);
    j->depth--;
    skip_ws(j);
    if (j->p < j->end && *j->p == ',') {
        j->p++;
        return 1;
    }
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    return 0;
}

static void parse_object(json_parser *j)
{
    j->p++; /* '{' */
    skip_ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return;
    }
    while (!j->failed) {
        skip_ws(j);
        char key[ATTN_JSON_MAX_KEY];
        if (parse_string(j, key, sizeof key) != 0)
            return;
        skip_ws(j);
        if (j->p >= j->end || *j->p != ':') {
            fail(j, "expected ':'");
            return;
        }
        j->p++;
        if (!parse_member(j, key, '}'))
            return;
    }
}

static void parse_array(json_parser *j)
{
    j->p++; /* '[' */
    skip_ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return;
    }
    while (!j->failed && parse_member(j, "[]", ']'))
        ;
}

static void parse_value(json_parser *j)
{
    skip_ws(j);
    if (j->p >= j->end) {
        fail(j, "unexpected end of file");
        return;
    }
    char c = *j->p;
    if (c == '{') {
        parse_object(j);
    } else if (c == '[') {
        parse_array(j);
    } else if (c == '"') {
        if (parse_string(j, j->text, sizeof j->text) == 0)
            visit(j, ATTN_JSON_STRING, 0, j->text);
    } else if (strncmp(j->p, "true", 4) == 0) {
        j->p += 4;
        visit(j, ATTN_JSON_TRUE, 0, NULL);
    } else if (strncmp(j->p, "null", 4) == 0) {
        j->p += 4;
        visit(j, ATTN_JSON_NULL, 0, NULL);
    } else if (strncmp(j->p, "false", 5) == 0) {
        j->p += 5;
        visit(j, ATTN_JSON_FALSE, 0, NULL);
    } else {
        char *end;
        double x = strtod(j->p, &end);
        if (end == j->p) {
            fail(j, "unexpected character");
            return;
        }
        j->p = end;
        visit(j, ATTN_JSON_NUMBER, x, NULL);
    }
}

int attn_json_walk(const char *text, size_t len, attn_json_visitor visitor, void *ctx, char *err,
                   size_t cap)
{
    json_parser j = {.start = text,
                     .p = text,
                     .end = text + len,
                     .visit = visitor,
                     .ctx = ctx,
                     .err = err,
                     .cap = cap};
    parse_value(&j);
    skip_ws(&j);
    if (!j.failed && j.p != j.end)
        fail(&j, "trailing characters");
    return j.failed ? -1 : 0;
}

/* The peak visitor: a number whose path names a peak figure is kept. */
typedef struct peak_reader {
    attn_peak *pk;
    const char *prefix; /* "" or "peak": where the peak object sits */
    int found;          /* numbers taken */
} peak_reader;

static int thread_key(const char *s)
{
    char *end;
    long t = strtol(s, &end, 10);
    return *s && !*end && t >= 1 && t <= 1 << 20 ? (int)t : -1;
}

static void take_number(void *ctx, const char (*path)[ATTN_JSON_MAX_KEY], int depth,
                        const attn_json_value *v)
{
    peak_reader *r = ctx;
    int base = r->prefix[0] ? 1 : 0;
    if (base && (depth < 1 || strcmp(path[0], r->prefix) != 0))
        return;
    int n = depth - base;
    if (v->kind == ATTN_JSON_STRING && n == 1 && strcmp(path[base], "pages") == 0) {
        attn_pages pages;
        if (attn_pages_parse(v->text, &pages) == 0) /* else unknown, as when absent */
            snprintf(r->pk->pages, sizeof r->pk->pages, "%s", attn_pages_name(pages));
        return;
    }
    if (v->kind == ATTN_JSON_STRING && n == 1 && strcmp(path[base], "sgemm_library") == 0) {
        snprintf(r->pk->sgemm_library, sizeof r->pk->sgemm_library, "%s", v->text);
        return;
    }
    /* The read kernel each thread count's roof came from: a paired read
     * roof after --resume or --peak races only that one again. A name this
     * build does not know is left out (all of them race). */
    if (v->kind == ATTN_JSON_STRING && n == 2 && strcmp(path[base], "read_kernel") == 0) {
        const int threads = thread_key(path[base + 1]);
        const int ti = threads > 0 && attn_peak_read_kernel_find(v->text) >= 0
                           ? attn_peak_add_threads(r->pk, threads)
                           : -1;
        if (ti >= 0)
            snprintf(r->pk->read_kernel[ti], sizeof r->pk->read_kernel[ti], "%s", v->text);
        return;
    }
    if (v->kind != ATTN_JSON_NUMBER)
        return;
    const double x = v->number;
    const char *k[ATTN_JSON_MAX_DEPTH] = {0};
    for (int i = 0; i < n; i++)
        k[i] = path[base + i];
    int threads = n >= 2 ? thread_key(k[n - 1]) : -1;
    if (threads < 0)
        return;
    if (n == 3 && strcmp(k[0], "fma_gflops") == 0) {
        for (int i = 0; i < ATTN_ISA_COUNT; i++)
            if (strcmp(k[1], attn_isa_name((attn_isa)i)) == 0) {
                int ti = attn_peak_add_threads(r->pk, threads);
                if (ti >= 0)
                    r->pk->fma_gflops[i][ti] = x, r->found++;
            }
    } else if (n == 3 && strcmp(k[0], "bf16_gflops") == 0) {
        for (int b = 0; b < ATTN_BF16_COUNT; b++)
            if (strcmp(k[1], attn_bf16_name((attn_bf16_kind)b)) == 0) {
                int ti = attn_peak_add_threads(r->pk, threads);
                if (ti >= 0)
                    r->pk->bf16_gflops[b][ti] = x;
            }
    } else if (n == 3 && strcmp(k[0], "fma_chains") == 0) {
        for (int i = 0; i < ATTN_ISA_COUNT; i++)
            if (strcmp(k[1], attn_isa_name((attn_isa)i)) == 0) {
                int ti = attn_peak_add_threads(r->pk, threads);
                if (ti >= 0 && x >= 1 && x <= 64)
                    r->pk->fma_chains[i][ti] = (int)x;
            }
    } else if (n == 3 && strcmp(k[0], "exp_gelem_per_s") == 0) {
        for (int e = 0; e < ATTN_EXP_COUNT; e++)
            if (strcmp(k[1], attn_exp_name((attn_exp_kind)e)) == 0) {
                int ti = attn_peak_add_threads(r->pk, threads);
                if (ti >= 0)
                    r->pk->exp_gelem_per_s[e][ti] = x, r->found++;
            }
    } else if (n == 2 && strcmp(k[0], "sgemm_gflops") == 0) {
        int ti = attn_peak_add_threads(r->pk, threads);
        if (ti >= 0)
            r->pk->sgemm_gflops[ti] = x;
    } else if (n == 2 && (strcmp(k[0], "read_gbytes_per_s") == 0 ||
                          strcmp(k[0], "triad_gbytes_per_s") == 0)) {
        int ti = attn_peak_add_threads(r->pk, threads);
        if (ti >= 0) {
            if (k[0][0] == 'r')
                r->pk->read_gbytes_per_s[ti] = x;
            else
                r->pk->triad_gbytes_per_s[ti] = x;
            r->found++;
        }
    }
}

char *attn_read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

int attn_peak_pages_check(const attn_peak *pk, attn_pages pages, const char *source, char *msg,
                          size_t cap)
{
    const char *want = attn_pages_name(pages);
    if (cap)
        msg[0] = '\0';
    if (!pk->pages[0]) {
        snprintf(msg, cap,
                 "%s does not say which pages its read roof was measured on (written before "
                 "runs chose them; then: the system's default); this run's inputs are on %s "
                 "pages",
                 source, want);
        return 1;
    }
    if (strcmp(pk->pages, want) != 0) {
        snprintf(msg, cap,
                 "%s: its read roof was measured on %s pages, this run's inputs would be on %s "
                 "pages (--pages %s measures like it)",
                 source, pk->pages, want, pk->pages);
        return -1;
    }
    return 0;
}

int attn_peak_read_json(const char *path, attn_peak *pk, char *err, size_t cap)
{
    size_t len = 0;
    char *text = attn_read_text(path, &len);
    if (cap)
        err[0] = '\0';
    if (!text) {
        snprintf(err, cap, "cannot read '%s'", path);
        return -1;
    }
    attn_peak_init(pk);
    /* A sidecar has the figures under "peak"; a `peak --out` file at the top. */
    const char *prefixes[] = {"peak", ""};
    int rc = -1;
    for (int i = 0; i < 2 && rc != 0; i++) {
        peak_reader r = {.pk = pk, .prefix = prefixes[i]};
        attn_peak_init(pk);
        if (attn_json_walk(text, len, take_number, &r, err, cap) != 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", err);
            snprintf(err, cap, "'%s' is not valid JSON: %s", path, msg);
            break;
        }
        if (r.found > 0)
            rc = 0;
    }
    if (rc != 0 && err[0] == '\0')
        snprintf(err, cap, "'%s' has no peak figures (fma_gflops, read_gbytes_per_s, ...)", path);
    free(text);
    return rc;
}
