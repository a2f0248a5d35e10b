/* The results CSV of docs/results-format.md: its columns, one row written
 * with a single write() (a kill loses no finished row and never leaves
 * half of one), and reading a file back for --resume. */
#ifndef ATTN_RESULTS_CSV_H
#define ATTN_RESULTS_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"

enum { ATTN_RESULTS_COLUMNS = 27 };

/* Numeric fields hold NaN (or -1 for the integer ones) when not measured:
 * they are written as empty fields. */
typedef struct attn_result_row {
    char case_name[256];
    char variant[32];
    attn_shape shape; /* batch .. causal; scale is not a column */
    int threads;
    double time_ns_median, time_ns_min, time_ns_max;
    int repetitions; /* -1: empty */
    double gflops, gbytes_per_s;
    char limit[16]; /* "fma" or "bandwidth" */
    double peak_gflops, peak_gbytes_per_s, pct_peak;
    int64_t workspace_bytes; /* -1: empty */
    double max_err_u, max_err_d_u, bound_u, nmse;
    char status[400];
} attn_result_row;

/* A row with every measurement empty. */
void attn_result_row_init(attn_result_row *r);

/* The header line, without newline. */
const char *attn_results_header(void);

/* Formats one row with its trailing newline; returns its length, or -1
 * when it does not fit. */
int attn_results_format(const attn_result_row *r, char *buf, size_t cap);

/* Parses one line (no newline). Returns 0, or -1 with `err` set. */
int attn_results_parse(const char *line, attn_result_row *r, char *err, size_t cap);

typedef struct attn_results_file {
    int fd;
    attn_result_row *rows; /* every row in the file: read on resume, then appended */
    int n_rows, cap_rows;
    int dropped_partial; /* 1 when resume cut off a truncated last line */
} attn_results_file;

/* How attn_results_open treats a file that is already there. */
typedef enum attn_results_mode {
    ATTN_RESULTS_NEW,       /* refuse a file that holds anything: rows are hours of work */
    ATTN_RESULTS_RESUME,    /* keep its rows and append the missing ones */
    ATTN_RESULTS_OVERWRITE, /* empty it and start again (asked for explicitly) */
} attn_results_mode;

/* Opens `path` for appending rows. NEW creates it (or takes an empty one),
 * OVERWRITE empties it; both write the header. RESUME reads an existing file:
 * its header must be exactly ours and every line must parse; a final line
 * without a newline (a run killed mid-write) is dropped and the file
 * truncated to the last whole row. A missing or empty file starts fresh.
 * Returns 0, or -1 with `err` naming the path and the problem. */
int attn_results_open(attn_results_file *f, const char *path, attn_results_mode mode, char *err,
                      size_t cap);

/* 1 when a row with this (case, threads) is already in the file. */
int attn_results_has(const attn_results_file *f, const char *case_name, int threads);

/* Writes one row with one write() and keeps it in f->rows. Returns 0, or
 * -1 with `err` set. */
int attn_results_append(attn_results_file *f, const attn_result_row *r, char *err, size_t cap);

void attn_results_close(attn_results_file *f);

#endif
