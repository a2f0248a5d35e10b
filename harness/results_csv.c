#include "results_csv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char header[] =
    "case,variant,batch,heads_q,heads_kv,n_q,n_kv,d_k,d_v,causal,threads,"
    "time_ns_median,time_ns_min,time_ns_max,repetitions,gflops,gbytes_per_s,limit,"
    "peak_gflops,peak_gbytes_per_s,pct_peak,workspace_bytes,max_err_u,max_err_d_u,bound_u,"
    "nmse,status";

const char *attn_results_header(void)
{
    return header;
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

/* RFC 4180: quote a field holding a comma, quote or line break. */
static void put_text(out_buf *b, const char *s, int last)
{
    if (strpbrk(s, ",\"\r\n")) {
        put(b, "\"");
        for (const char *c = s; *c; c++) {
            if (*c == '"')
                put(b, "\"\"");
            else
                put(b, "%c", *c);
        }
        put(b, "\"");
    } else {
        put(b, "%s", s);
    }
    put(b, last ? "\n" : ",");
}

static void put_num(out_buf *b, double x, const char *fmt)
{
    if (isfinite(x))
        put(b, fmt, x);
    put(b, ",");
}

static void put_int(out_buf *b, int64_t x)
{
    if (x >= 0)
        put(b, "%lld", (long long)x);
    put(b, ",");
}

int attn_results_format(const attn_result_row *r, char *buf, size_t cap)
{
    out_buf b = {buf, 0, cap, 0};
    const attn_shape *s = &r->shape;
    put_text(&b, r->case_name, 0);
    put_text(&b, r->variant, 0);
    put(&b, "%d,%d,%d,%d,%d,%d,%d,%d,%d,", (int)s->batch, (int)s->heads_q, (int)s->heads_kv,
        (int)s->n_q, (int)s->n_kv, (int)s->d_k, (int)s->d_v, (int)s->causal, r->threads);
    put_num(&b, r->time_ns_median, "%.0f");
    put_num(&b, r->time_ns_min, "%.0f");
    put_num(&b, r->time_ns_max, "%.0f");
    put_int(&b, r->repetitions);
    put_num(&b, r->gflops, "%.6g");
    put_num(&b, r->gbytes_per_s, "%.6g");
    put_text(&b, r->limit, 0);
    put_num(&b, r->peak_gflops, "%.6g");
    put_num(&b, r->peak_gbytes_per_s, "%.6g");
    put_num(&b, r->pct_peak, "%.4g");
    put_int(&b, r->workspace_bytes);
    put_num(&b, r->max_err_u, "%.6g");
    put_num(&b, r->max_err_d_u, "%.6g");
    put_num(&b, r->bound_u, "%.6g");
    put_num(&b, r->nmse, "%.4g");
    put_text(&b, r->status, 1);
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

static int parse_int_field(const char *s, long long min, long long *out)
{
    char *end;
    if (!*s) {
        *out = -1;
        return min < 0 ? 0 : -1;
    }
    *out = strtoll(s, &end, 10);
    return *end || *out < (min < 0 ? 0 : min) ? -1 : 0;
}

int attn_results_parse(const char *line, attn_result_row *r, char *err, size_t cap)
{
    char work[2048];
    char *f[ATTN_RESULTS_COLUMNS + 1];
    int n = split_fields(line, work, sizeof work, f, ATTN_RESULTS_COLUMNS);
    if (n != ATTN_RESULTS_COLUMNS) {
        snprintf(err, cap, "%s (%d fields, want %d)",
                 n == -2 ? "line too long"
                 : n < 0 ? "malformed quoting"
                         : "wrong number of fields",
                 n, ATTN_RESULTS_COLUMNS);
        return -1;
    }
    attn_result_row_init(r);
    snprintf(r->case_name, sizeof r->case_name, "%s", f[0]);
    snprintf(r->variant, sizeof r->variant, "%s", f[1]);
    long long shape[10];
    for (int i = 0; i < 9; i++)
        if (parse_int_field(f[2 + i], 0, &shape[i]) != 0 || shape[i] > INT32_MAX) {
            snprintf(err, cap, "field %d ('%s') is not a whole number", 3 + i, f[2 + i]);
            return -1;
        }
    r->shape = (attn_shape){(int32_t)shape[0], (int32_t)shape[1], (int32_t)shape[2],
                            (int32_t)shape[3], (int32_t)shape[4], (int32_t)shape[5],
                            (int32_t)shape[6], (int32_t)shape[7], 0.0f};
    r->threads = (int)shape[8];
    double *nums[] = {&r->time_ns_median, &r->time_ns_min, &r->time_ns_max};
    for (int i = 0; i < 3; i++)
        if (parse_double_field(f[11 + i], nums[i]) != 0)
            goto bad_number;
    long long reps, ws;
    if (parse_int_field(f[14], -1, &reps) != 0)
        goto bad_number;
    r->repetitions = (int)reps;
    if (parse_double_field(f[15], &r->gflops) || parse_double_field(f[16], &r->gbytes_per_s))
        goto bad_number;
    snprintf(r->limit, sizeof r->limit, "%s", f[17]);
    if (parse_double_field(f[18], &r->peak_gflops) ||
        parse_double_field(f[19], &r->peak_gbytes_per_s) ||
        parse_double_field(f[20], &r->pct_peak) || parse_int_field(f[21], -1, &ws) ||
        parse_double_field(f[22], &r->max_err_u) || parse_double_field(f[23], &r->max_err_d_u) ||
        parse_double_field(f[24], &r->bound_u) || parse_double_field(f[25], &r->nmse))
        goto bad_number;
    r->workspace_bytes = ws;
    snprintf(r->status, sizeof r->status, "%s", f[26]);
    if (!r->case_name[0] || !r->status[0]) {
        snprintf(err, cap, "empty case or status");
        return -1;
    }
    return 0;
bad_number:
    snprintf(err, cap, "a numeric field does not parse");
    return -1;
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
    size_t hlen = strlen(header);
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
        char line[sizeof header + 1];
        snprintf(line, sizeof line, "%s\n", header);
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
    /* One write() of the whole line on an O_APPEND descriptor. */
    if (write_all(f->fd, line, (size_t)len) != 0) {
        snprintf(err, cap, "cannot append a row: %s", strerror(errno));
        return -1;
    }
    if (keep_row(f, r) != 0) {
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
