/* The results CSV of docs/results-format.md: its columns, declared once in
 * a table (name, type, where in attn_result_row) that the header, the
 * writer and the reader all walk; one row written with a single write() (a
 * kill loses no finished row and never leaves half of one), and reading a
 * file back for --resume. */
#ifndef ATTN_RESULTS_CSV_H
#define ATTN_RESULTS_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attn.h"

/* What a row is: ok (timed and checked), skipped (not run, `reason` says
 * why), failed (run, but wrong or refused: `reason` says what). */
typedef enum attn_row_status { ATTN_ROW_OK, ATTN_ROW_SKIPPED, ATTN_ROW_FAILED } attn_row_status;
/* One of attnbench's variants, or a framework timed beside them. */
typedef enum attn_row_kind { ATTN_ROW_VARIANT, ATTN_ROW_PEER } attn_row_kind;

/* Numeric fields hold NaN (or -1 for the integer ones) when not measured:
 * they are written as empty fields. */
typedef struct attn_result_row {
    char case_name[256];
    char variant[32];
    attn_row_kind kind;
    attn_shape shape; /* batch .. causal; scale is not a column */
    attn_types types; /* q_dtype, kv_dtype, o_dtype (all ATTN_F32 after init) */
    int threads;
    double time_ns_median, time_ns_min, time_ns_max;
    int repetitions; /* -1: empty */
    double gflops, gbytes_per_s;
    char limit[16]; /* "fma" or "bandwidth" */
    double peak_gflops, peak_gbytes_per_s, pct_peak;
    int roof_exceeded; /* 1: pct_peak > 100, the roof under-measures this CPU */
    /* Where the roof of the row's limit comes from: "paired" (measured in
     * rounds alternating with the row's calls), "run" (the run's peak, the
     * sidecar's), "" (no roof: not measured). */
    char roof_source[8];
    int64_t workspace_bytes; /* -1: empty */
    double max_err_u, max_err_d_u, bound_u, nmse;
    /* Peer rows: what the peer called and the harness's empty-call time. */
    char peer_op[160];
    double overhead_ns;
    /* The cell timed in alternating rounds with this one, and its median
     * over the same rounds: for a peer row the fastest attnbench variant of
     * the cell; for a variant row its twin (the same variant at 1 thread,
     * or in f32), so the ratio of the two is one run's, not two runs'. */
    char paired_variant[32];
    double paired_time_ns_median;
    char paired_case[256];
    int paired_threads; /* -1: empty */
    attn_row_status status;
    char reason[400]; /* "" when ok */
} attn_result_row;

/* A row with every measurement empty, status ok, kind variant. */
void attn_result_row_init(attn_result_row *r);

/* Sets status and reason (printf-style). */
void attn_result_row_set(attn_result_row *r, attn_row_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "ok", "skipped", "failed" / "variant", "peer". */
const char *attn_row_status_name(attn_row_status s);
const char *attn_row_kind_name(attn_row_kind k);

/* Writes the header line (no newline) into buf; returns its length, or -1
 * when cap is too small (ATTN_RESULTS_HEADER_CAP always suffices). */
enum { ATTN_RESULTS_HEADER_CAP = 1024 };
int attn_results_header(char *buf, size_t cap);

/* Column names and types ("string", "int", "float"), one "name type" line
 * each, in order: what `attnbench matrix --print-columns` prints and the
 * schema test compares with docs/results-format.md and the Python reader. */
void attn_results_print_columns(FILE *f);

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

/* 1 when a row with this (case, threads) is already in the file. The case
 * name carries the element types (",q=bf16,kv=bf16,o=bf16"; nothing for
 * f32), so an f32 row never stands for a bf16 cell on --resume. */
int attn_results_has(const attn_results_file *f, const char *case_name, int threads);

/* Writes one row with one write() and keeps it in f->rows as it reads back
 * from the file (its figures to their printed digits). Returns 0, or -1
 * with `err` set (a row that would not read back is not written). */
int attn_results_append(attn_results_file *f, const attn_result_row *r, char *err, size_t cap);

void attn_results_close(attn_results_file *f);

#endif
