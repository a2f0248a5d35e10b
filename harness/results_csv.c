/* One job, read best whole (over the ~400 lines a file here usually has):
 * the results CSV format, the column table and the writer and reader that
 * walk it, and the append-only file --resume reopens. */
#include "results_csv.h"
#include "shape_arg.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How a column is stored in attn_result_row and written. */
typedef enum col_type {
    COL_TEXT,   /* char[size], RFC 4180 quoting */
    COL_I32,    /* int32_t (the shape), always written */
    COL_INT,    /* int, -1 written empty */
    COL_I64,    /* int64_t, -1 written empty */
    COL_FLOAT,  /* double, NaN written empty; `fmt` */
    COL_FLAG,   /* int 0/1, always written */
    COL_KIND,   /* attn_row_kind by name */
    COL_STATUS, /* attn_row_status by name */
    COL_DTYPE,  /* int32_t attn_dtype by name: f32, f16, bf16 */
} col_type;

/* The formats a results file has had, oldest first: a column belongs to
 * every format from the one that brought it. */
typedef enum col_era {
    ERA_FIRST,  /* the first matrix */
    ERA_DTYPES, /* q_dtype, kv_dtype, o_dtype */
    ERA_PAIRED, /* paired_case, paired_threads */
    ERA_ROOF,   /* roof_source */
    ERA_NOW = ERA_ROOF
} col_era;

typedef struct column {
    const char *name;
    col_type type;
    size_t offset, size;
    const char *fmt; /* COL_FLOAT */
    col_era era;
} column;

#define FIELD(member) offsetof(attn_result_row, member), sizeof(((attn_result_row *)0)->member)

/* The one list of columns, in file order (docs/results-format.md says what
 * each means; ctest results_schema checks that the three agree). */
static const column columns[] = {
    {"case", COL_TEXT, FIELD(case_name), NULL, ERA_FIRST},
    {"variant", COL_TEXT, FIELD(variant), NULL, ERA_FIRST},
    {"kind", COL_KIND, FIELD(kind), NULL, ERA_FIRST},
    {"batch", COL_I32, FIELD(shape.batch), NULL, ERA_FIRST},
    {"heads_q", COL_I32, FIELD(shape.heads_q), NULL, ERA_FIRST},
    {"heads_kv", COL_I32, FIELD(shape.heads_kv), NULL, ERA_FIRST},
    {"n_q", COL_I32, FIELD(shape.n_q), NULL, ERA_FIRST},
    {"n_kv", COL_I32, FIELD(shape.n_kv), NULL, ERA_FIRST},
    {"d_k", COL_I32, FIELD(shape.d_k), NULL, ERA_FIRST},
    {"d_v", COL_I32, FIELD(shape.d_v), NULL, ERA_FIRST},
    {"causal", COL_I32, FIELD(shape.causal), NULL, ERA_FIRST},
    {"q_dtype", COL_DTYPE, FIELD(types.q), NULL, ERA_DTYPES},
    {"kv_dtype", COL_DTYPE, FIELD(types.kv), NULL, ERA_DTYPES},
    {"o_dtype", COL_DTYPE, FIELD(types.o), NULL, ERA_DTYPES},
    {"threads", COL_INT, FIELD(threads), NULL, ERA_FIRST},
    {"time_ns_median", COL_FLOAT, FIELD(time_ns_median), "%.0f", ERA_FIRST},
    {"time_ns_min", COL_FLOAT, FIELD(time_ns_min), "%.0f", ERA_FIRST},
    {"time_ns_max", COL_FLOAT, FIELD(time_ns_max), "%.0f", ERA_FIRST},
    {"repetitions", COL_INT, FIELD(repetitions), NULL, ERA_FIRST},
    {"gflops", COL_FLOAT, FIELD(gflops), "%.6g", ERA_FIRST},
    {"gbytes_per_s", COL_FLOAT, FIELD(gbytes_per_s), "%.6g", ERA_FIRST},
    {"limit", COL_TEXT, FIELD(limit), NULL, ERA_FIRST},
    {"peak_gflops", COL_FLOAT, FIELD(peak_gflops), "%.6g", ERA_FIRST},
    {"peak_gbytes_per_s", COL_FLOAT, FIELD(peak_gbytes_per_s), "%.6g", ERA_FIRST},
    {"pct_peak", COL_FLOAT, FIELD(pct_peak), "%.4g", ERA_FIRST},
    {"roof_exceeded", COL_FLAG, FIELD(roof_exceeded), NULL, ERA_FIRST},
    {"roof_source", COL_TEXT, FIELD(roof_source), NULL, ERA_ROOF},
    {"workspace_bytes", COL_I64, FIELD(workspace_bytes), NULL, ERA_FIRST},
    {"max_err_u", COL_FLOAT, FIELD(max_err_u), "%.6g", ERA_FIRST},
    {"max_err_d_u", COL_FLOAT, FIELD(max_err_d_u), "%.6g", ERA_FIRST},
    {"bound_u", COL_FLOAT, FIELD(bound_u), "%.6g", ERA_FIRST},
    {"nmse", COL_FLOAT, FIELD(nmse), "%.4g", ERA_FIRST},
    {"peer_op", COL_TEXT, FIELD(peer_op), NULL, ERA_FIRST},
    {"overhead_ns", COL_FLOAT, FIELD(overhead_ns), "%.0f", ERA_FIRST},
    {"paired_variant", COL_TEXT, FIELD(paired_variant), NULL, ERA_FIRST},
    {"paired_time_ns_median", COL_FLOAT, FIELD(paired_time_ns_median), "%.0f", ERA_FIRST},
    {"paired_case", COL_TEXT, FIELD(paired_case), NULL, ERA_PAIRED},
    {"paired_threads", COL_INT, FIELD(paired_threads), NULL, ERA_PAIRED},
    {"status", COL_STATUS, FIELD(status), NULL, ERA_FIRST},
    {"reason", COL_TEXT, FIELD(reason), NULL, ERA_FIRST},
};
enum { N_COLUMNS = sizeof columns / sizeof columns[0] };

static const char *const status_names[] = {"ok", "skipped", "failed"};
static const char *const kind_names[] = {"variant", "peer"};
/* In attn_dtype order (ATTN_F32 = 0, ATTN_F16, ATTN_BF16). */
static const char *const dtype_names[] = {"f32", "f16", "bf16"};

const char *attn_row_status_name(attn_row_status s)
{
    return s >= ATTN_ROW_OK && s <= ATTN_ROW_FAILED ? status_names[s] : "?";
}

const char *attn_row_kind_name(attn_row_kind k)
{
    return k >= ATTN_ROW_VARIANT && k <= ATTN_ROW_PEER ? kind_names[k] : "?";
}

/* ---- writing ---- */

typedef struct out_buf {
    char *p;
    size_t len, cap;
    int overflow;
} out_buf;

static void put(out_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *b, const char *fmt, ...)
{
    if (b->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->cap - b->len)
        b->overflow = 1;
    else
        b->len += (size_t)n;
}

/* The header of format `era` (ERA_NOW: today's), to tell an older file
 * from a foreign one. */
static int header_line(char *buf, size_t cap, col_era era)
{
    out_buf b = {buf, 0, cap, 0};
    for (int i = 0, n = 0; i < N_COLUMNS; i++)
        if (columns[i].era <= era)
            put(&b, "%s%s", n++ ? "," : "", columns[i].name);
    return b.overflow ? -1 : (int)b.len;
}

int attn_results_header(char *buf, size_t cap)
{
    return header_line(buf, cap, ERA_NOW);
}

static const char *type_name(col_type t)
{
    return t == COL_TEXT || t == COL_KIND || t == COL_STATUS || t == COL_DTYPE ? "string"
           : t == COL_FLOAT                                                    ? "float"
                                                                               : "int";
}

void attn_results_print_columns(FILE *f)
{
    for (int i = 0; i < N_COLUMNS; i++)
        fprintf(f, "%s %s\n", columns[i].name, type_name(columns[i].type));
}

void attn_result_row_init(attn_result_row *r)
{
    memset(r, 0, sizeof *r);
    r->time_ns_median = r->time_ns_min = r->time_ns_max = NAN;
    r->repetitions = -1;
    r->gflops = r->gbytes_per_s = NAN;
    r->peak_gflops = r->peak_gbytes_per_s = r->pct_peak = NAN;
    r->workspace_bytes = -1;
    r->max_err_u = r->max_err_d_u = r->bound_u = r->nmse = NAN;
    r->overhead_ns = r->paired_time_ns_median = NAN;
    r->paired_threads = -1;
    r->status = ATTN_ROW_OK;
    r->kind = ATTN_ROW_VARIANT;
}

void attn_result_row_set(attn_result_row *r, attn_row_status status, const char *fmt, ...)
{
    r->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

/* RFC 4180: quote a field holding a comma, quote or line break. */
static void put_text(out_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        put(b, "%s", s);
        return;
    }
    put(b, "\"");
    for (const char *c = s; *c; c++) {
        if (*c == '"')
            put(b, "\"\"");
        else
            put(b, "%c", *c);
    }
    put(b, "\"");
}

static void put_field(out_buf *b, const column *c, const attn_result_row *r)
{
    const char *at = (const char *)r + c->offset;
    int i;
    int32_t i32;
    int64_t i64;
    double x;
    switch (c->type) {
    case COL_TEXT:
        put_text(b, at);
        break;
    case COL_I32:
        memcpy(&i32, at, sizeof i32);
        put(b, "%d", (int)i32);
        break;
    case COL_INT:
    case COL_FLAG:
        memcpy(&i, at, sizeof i);
        if (i >= 0 || c->type == COL_FLAG)
            put(b, "%d", i);
        break;
    case COL_I64:
        memcpy(&i64, at, sizeof i64);
        if (i64 >= 0)
            put(b, "%lld", (long long)i64);
        break;
    case COL_FLOAT:
        memcpy(&x, at, sizeof x);
        if (isfinite(x))
            put(b, c->fmt, x);
        break;
    case COL_KIND:
        put(b, "%s", attn_row_kind_name(r->kind));
        break;
    case COL_STATUS:
        put(b, "%s", attn_row_status_name(r->status));
        break;
    case COL_DTYPE:
        memcpy(&i32, at, sizeof i32);
        put(b, "%s", i32 >= 0 && i32 <= ATTN_BF16 ? dtype_names[i32] : "?");
        break;
    }
}

int attn_results_format(const attn_result_row *r, char *buf, size_t cap)
{
    out_buf b = {buf, 0, cap, 0};
    for (int i = 0; i < N_COLUMNS; i++) {
        put_field(&b, &columns[i], r);
        put(&b, i + 1 < N_COLUMNS ? "," : "\n");
    }
    return b.overflow ? -1 : (int)b.len;
}

/* ---- reading ---- */

/* Splits a CSV line into at most `max` fields, unquoting, into `work`.
 * Returns the field count, max + 1 when there are more, -1 on malformed
 * quoting, -2 when the fields do not fit in `cap` bytes (a foreign file). */
static int split_fields(const char *line, char *work, size_t cap, char **fields, int max)
{
    int n = 0;
    size_t w = 0;
    const char *c = line;
    for (;;) {
        if (n >= max)
            return max + 1;
        fields[n++] = work + w;
        if (*c == '"') {
            c++;
            for (;;) {
                if (!*c)
                    return -1;
                if (*c == '"' && c[1] == '"') {
                    c += 2;
                    if (w + 1 >= cap)
                        return -2;
                    work[w++] = '"';
                } else if (*c == '"') {
                    c++;
                    break;
                } else {
                    if (w + 1 >= cap)
                        return -2;
                    work[w++] = *c++;
                }
            }
            if (*c && *c != ',')
                return -1;
        } else {
            while (*c && *c != ',') {
                if (w + 1 >= cap)
                    return -2;
                work[w++] = *c++;
            }
        }
        if (w >= cap)
            return -2;
        work[w++] = '\0';
        if (!*c)
            return n;
        c++; /* ',' */
    }
}

/* The longest float field the writer spells: a nanosecond count below
 * 1e20 (3 years), a %.6g figure with its exponent. */
enum { FLOAT_FIELD_MAX = 20 };

static int parse_double_field(const char *s, double *out)
{
    if (!*s) {
        *out = NAN;
        return 0;
    }
    char *end;
    *out = strtod(s, &end);
    return *end ? -1 : 0;
}

/* A whole number >= 0, or empty (-1) where `empty_ok`. */
static int parse_int_field(const char *s, int empty_ok, long long max, long long *out)
{
    char *end;
    if (!*s) {
        *out = -1;
        return empty_ok ? 0 : -1;
    }
    errno = 0;
    *out = strtoll(s, &end, 10);
    return *end || errno || *out < 0 || *out > max ? -1 : 0;
}

static int parse_name(const char *s, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

static int parse_field(const column *c, const char *text, attn_result_row *r)
{
    char *at = (char *)r + c->offset;
    long long v;
    int e;
    switch (c->type) {
    case COL_TEXT:
        if (strlen(text) >= c->size)
            return -1;
        memcpy(at, text, strlen(text) + 1);
        return 0;
    case COL_I32:
        if (parse_int_field(text, 0, INT32_MAX, &v) != 0)
            return -1;
        int32_t i32 = (int32_t)v;
        memcpy(at, &i32, sizeof i32);
        return 0;
    case COL_INT:
    case COL_FLAG:
        if (parse_int_field(text, c->type == COL_INT, c->type == COL_FLAG ? 1 : INT32_MAX, &v))
            return -1;
        int i = (int)v;
        memcpy(at, &i, sizeof i);
        return 0;
    case COL_I64:
        if (parse_int_field(text, 1, INT64_MAX, &v) != 0)
            return -1;
        int64_t i64 = v;
        memcpy(at, &i64, sizeof i64);
        return 0;
    case COL_FLOAT: {
        double x;
        if (parse_double_field(text, &x) != 0)
            return -1;
        /* What the writer would spell longer than any figure it writes
         * (%.0f of 1e308 is 309 digits) would not fit a line it reads. */
        if (isfinite(x) && snprintf(NULL, 0, c->fmt, x) > FLOAT_FIELD_MAX)
            return -1;
        memcpy(at, &x, sizeof x);
        return 0;
    }
    case COL_KIND:
        if (parse_name(text, kind_names, 2, &e) != 0)
            return -1;
        r->kind = (attn_row_kind)e;
        return 0;
    case COL_STATUS:
        if (parse_name(text, status_names, 3, &e) != 0)
            return -1;
        r->status = (attn_row_status)e;
        return 0;
    case COL_DTYPE: {
        if (parse_name(text, dtype_names, 3, &e) != 0)
            return -1;
        int32_t t = e;
        memcpy(at, &t, sizeof t);
        return 0;
    }
    }
    return -1;
}

int attn_results_parse(const char *line, attn_result_row *r, char *err, size_t cap)
{
    char work[2048];
    char *f[N_COLUMNS + 1];
    int n = split_fields(line, work, sizeof work, f, N_COLUMNS);
    if (n != N_COLUMNS) {
        snprintf(err, cap, "%s (%d fields, want %d)",
                 n == -2 ? "line too long"
                 : n < 0 ? "malformed quoting"
                         : "wrong number of fields",
                 n, (int)N_COLUMNS);
        return -1;
    }
    attn_result_row_init(r);
    for (int i = 0; i < N_COLUMNS; i++)
        if (parse_field(&columns[i], f[i], r) != 0) {
            snprintf(err, cap, "column %s: '%.40s' does not parse as %s", columns[i].name, f[i],
                     type_name(columns[i].type));
            return -1;
        }
    if (!r->case_name[0]) {
        snprintf(err, cap, "empty case");
        return -1;
    }
    /* The scale has no column: a cell with its own (perf-targets' peaked
     * one) carries it in its case name, ",scale=<shortest exact>", and is another cell
     * than the same shape at the default scale (attn_perf_same_cell). */
    const char *scale = strstr(r->case_name, ",scale=");
    if (scale) {
        char value[64], why[160];
        const size_t len = strcspn(scale + 7, ",");
        if (len >= sizeof value) {
            snprintf(err, cap, "case: '%.60s' has a scale that does not parse", r->case_name);
            return -1;
        }
        memcpy(value, scale + 7, len);
        value[len] = '\0';
        if (attn_scale_parse(value, &r->shape.scale, why, sizeof why) != 0) {
            snprintf(err, cap, "case: '%.60s' has a scale that does not parse: %s", r->case_name,
                     why);
            return -1;
        }
    }
    return 0;
}

static int keep_row(attn_results_file *f, const attn_result_row *r)
{
    if (f->n_rows == f->cap_rows) {
        int cap = f->cap_rows ? 2 * f->cap_rows : 64;
        attn_result_row *rows = realloc(f->rows, sizeof *rows * (size_t)cap);
        if (!rows)
            return -1;
        f->rows = rows;
        f->cap_rows = cap;
    }
    f->rows[f->n_rows++] = *r;
    return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads an existing file for resume: validates, keeps its rows, and cuts
 * a partial last line. */
static int read_existing(attn_results_file *f, const char *path, char *err, size_t cap)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0 || st.st_size == 0)
        return 0;
    size_t size = (size_t)st.st_size;
    char *text = malloc(size + 1);
    if (!text) {
        snprintf(err, cap, "cannot read '%s': out of memory", path);
        return -1;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = pread(f->fd, text + got, size - got, (off_t)got);
        if (n <= 0) {
            snprintf(err, cap, "cannot read '%s': %s", path, strerror(errno));
            free(text);
            return -1;
        }
        got += (size_t)n;
    }
    text[size] = '\0';
    size_t whole = size;
    while (whole > 0 && text[whole - 1] != '\n')
        whole--;
    int rc = 0;
    char header[ATTN_RESULTS_HEADER_CAP];
    attn_results_header(header, sizeof header);
    size_t hlen = strlen(header);
    /* A file of an older format: the scripts read it as it is, but rows of
     * today's format cannot be appended to it. */
    static const char *const older[ERA_NOW] = {
        [ERA_FIRST] = "before the q_dtype, kv_dtype and o_dtype columns (its rows are all f32, "
                      "and the scripts read it so)",
        [ERA_DTYPES] = "before the paired_case and paired_threads columns (the scripts read "
                       "it so)",
        [ERA_PAIRED] = "before the roof_source column (its roofs are the run's peak, and the "
                       "scripts read it so)",
    };
    for (int era = ERA_FIRST; era < ERA_NOW; era++) {
        char old[ATTN_RESULTS_HEADER_CAP];
        header_line(old, sizeof old, (col_era)era);
        const size_t olen = strlen(old);
        if (whole > olen && strncmp(text, old, olen) == 0 && text[olen] == '\n') {
            snprintf(err, cap,
                     "'%s' was written %s, so rows of today's format cannot be appended to "
                     "it; refusing to resume into it (--out a new file)",
                     path, older[era]);
            free(text);
            return -1;
        }
    }
    if (whole == 0 || strncmp(text, header, hlen) != 0 || text[hlen] != '\n') {
        snprintf(err, cap,
                 "'%s' is not an attnbench results CSV (its header differs from "
                 "docs/results-format.md's); refusing to resume into it",
                 path);
        free(text);
        return -1;
    }
    long line_no = 1;
    for (char *line = text + hlen + 1; line < text + whole && rc == 0;) {
        char *nl = memchr(line, '\n', (size_t)(text + whole - line));
        *nl = '\0';
        line_no++;
        attn_result_row r;
        char why[160];
        if (attn_results_parse(line, &r, why, sizeof why) != 0) {
            snprintf(err, cap, "'%s' line %ld: %s; refusing to resume into it", path, line_no, why);
            rc = -1;
        } else if (keep_row(f, &r) != 0) {
            snprintf(err, cap, "cannot read '%s': out of memory", path);
            rc = -1;
        }
        line = nl + 1;
    }
    if (rc == 0 && whole < size) {
        if (ftruncate(f->fd, (off_t)whole) != 0) {
            snprintf(err, cap, "cannot truncate the partial last line of '%s': %s", path,
                     strerror(errno));
            rc = -1;
        }
        f->dropped_partial = 1;
    }
    free(text);
    return rc;
}

int attn_results_open(attn_results_file *f, const char *path, attn_results_mode mode, char *err,
                      size_t cap)
{
    const int resume = mode == ATTN_RESULTS_RESUME;
    memset(f, 0, sizeof *f);
    f->fd = open(path, O_RDWR | O_CREAT | O_APPEND | (mode == ATTN_RESULTS_OVERWRITE ? O_TRUNC : 0),
                 0644);
    if (f->fd < 0) {
        snprintf(err, cap, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (mode == ATTN_RESULTS_NEW && fstat(f->fd, &st) == 0 && st.st_size > 0) {
        snprintf(err, cap,
                 "'%s' already holds results: --resume to continue it, --overwrite to start "
                 "again",
                 path);
        close(f->fd);
        f->fd = -1;
        return -1;
    }
    if (resume && read_existing(f, path, err, cap) != 0) {
        attn_results_close(f);
        return -1;
    }
    if (fstat(f->fd, &st) == 0 && st.st_size == 0) {
        char line[ATTN_RESULTS_HEADER_CAP + 1];
        int n = attn_results_header(line, sizeof line - 1);
        line[n] = '\n';
        line[n + 1] = '\0';
        if (write_all(f->fd, line, strlen(line)) != 0) {
            snprintf(err, cap, "cannot write '%s': %s", path, strerror(errno));
            attn_results_close(f);
            return -1;
        }
    }
    return 0;
}

int attn_results_has(const attn_results_file *f, const char *case_name, int threads)
{
    for (int i = 0; i < f->n_rows; i++)
        if (f->rows[i].threads == threads && strcmp(f->rows[i].case_name, case_name) == 0)
            return 1;
    return 0;
}

int attn_results_append(attn_results_file *f, const attn_result_row *r, char *err, size_t cap)
{
    char line[2048];
    int len = attn_results_format(r, line, sizeof line);
    if (len < 0) {
        snprintf(err, cap, "row for %s does not fit in %zu bytes", r->case_name, sizeof line);
        return -1;
    }
    /* Kept as the file holds it (figures to their printed digits), so a
     * report of this run and one of the file, or after --resume, judge the
     * same numbers; a row that would not read back is not written. */
    attn_result_row back;
    char why[160];
    line[len - 1] = '\0'; /* the parser takes a line without its newline */
    const int parsed = attn_results_parse(line, &back, why, sizeof why);
    line[len - 1] = '\n';
    if (parsed != 0) {
        snprintf(err, cap, "row for %s does not read back: %s", r->case_name, why);
        return -1;
    }
    /* One write() of the whole line on an O_APPEND descriptor. */
    if (write_all(f->fd, line, (size_t)len) != 0) {
        snprintf(err, cap, "cannot append a row: %s", strerror(errno));
        return -1;
    }
    if (keep_row(f, &back) != 0) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    return 0;
}

void attn_results_close(attn_results_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    free(f->rows);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}
