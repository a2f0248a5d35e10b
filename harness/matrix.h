/* attnbench matrix, in three files: matrix_args.c (the command line),
 * matrix_cell.c (one cell measured, checked and printed) and cmd_matrix.c
 * (the run: cells, peaks, resume, the CSV and the sidecar). */
#ifndef ATTN_MATRIX_H
#define ATTN_MATRIX_H

#include <regex.h>
#include <stddef.h>

#include "cases.h"
#include "matrix_plan.h"
#include "peak.h"
#include "perf_cases.h"
#include "results_csv.h"
#include "roof_probe.h"
#include "variant.h"

enum {
    MATRIX_MAX_VARIANTS = 32,
    MATRIX_MAX_THREAD_ARGS = 16,
    MATRIX_MAX_SHAPES = 64,
    MATRIX_MAX_REPS = 1000,
    /* --out's length: its .plan and .meta.json names fit 400 bytes. */
    MATRIX_MAX_OUT_PATH = 384
};

enum { MATRIX_MAX_PEERS = 3 };

/* --peers: which frameworks run beside the variants (matrix_peers.h). */
typedef struct matrix_peers {
    const char *names[MATRIX_MAX_PEERS]; /* torch, onnxruntime, openvino */
    int n;
    const char *python; /* the peers' interpreter (.venv-peers/bin/python3) */
    const char *worker; /* scripts/peers/worker.py */
    int rounds;         /* alternating rounds per cell */
} matrix_peers;

typedef struct matrix_opts {
    int preset;
    const attn_variant *variants[MATRIX_MAX_VARIANTS];
    int n_variants;
    int threads[MATRIX_MAX_THREAD_ARGS];
    int n_threads;
    attn_types dtypes[ATTN_DTYPE_AXIS_MAX]; /* --dtype; n_dtypes = 0: the preset's */
    int n_dtypes;
    /* --shape: shapes of the user's own in place of the preset's (which
     * still gives the variants and the repetition policy). */
    attn_shape shapes[MATRIX_MAX_SHAPES];
    int n_shapes;
    const char *out;
    char default_out[300];
    int resume;
    int overwrite;
    long repetitions;
    double min_time, max_time;
    const char *peak_file;
    size_t bw_bytes;
    regex_t filter;
    int has_filter;
    long llc_bytes;     /* memory-bound cells rotate inputs past it */
    attn_pages pages;   /* --pages: under the inputs, workspaces and the roof's arrays */
    matrix_peers peers; /* peers.n = 0: none */
    double budget_s;    /* --budget (full: 30 min unless given); 0: none */
    /* --roof: 1 (paired, the default) judges each row against its roof
     * measured in rounds alternating with its calls (roof_probe.h); 0
     * (run) against the run's peak (measured at the start, --peak FILE). */
    int roof_paired;
} matrix_opts;

/* The preset's cases (or the --shape ones) with --threads and --dtype
 * applied: writes up to cap into out, returns how many there are (cap = 0
 * counts). */
int matrix_case_list(const matrix_opts *o, int all, attn_perf_case *out, int cap);
/* What the run is called (default --out, the sidecar's "preset"): the
 * preset's name, or "shapes" for --shape. */
const char *matrix_run_name(const matrix_opts *o);

/* The roof probes of a run (below). */
typedef struct matrix_roofs matrix_roofs;

/* One cell to run: a variant on a case. */
typedef struct matrix_cell {
    const attn_variant *variant;
    attn_perf_case pc;
    char name[256];
    double weight; /* estimated seconds, for the ETA */
    /* --budget: this cell's repetitions and max time, or its skip; NULL
     * without a budget (the preset's policy). Points into the plan. */
    const matrix_plan_choice *plan;
} matrix_cell;

/* Parses argv into `o`; 1 after printing --help or --print-columns, -1
 * after printing a usage error, 0 to run. */
int matrix_parse_args(int argc, char **argv, matrix_opts *o);

/* One cell: the skip reason, or the checked run plus the timings, judged
 * against its roof measured beside it (`roofs`; NULL: --roof run) or else
 * `pk`'s for its thread count; `all` is the machine's thread count (the
 * reference check uses every core). */
void matrix_measure_cell(const matrix_opts *o, const matrix_cell *mc, const attn_peak *pk, int all,
                         matrix_roofs *roofs, attn_result_row *row);

/* The row's line on stdout, and (when it beat its roof) the warning on
 * stderr naming the row, the roof and the ratio. */
void matrix_print_row(const attn_result_row *r);
void matrix_warn_roof(const attn_result_row *r);

/* The untimed checked run of a set-up cell and its accuracy (the row's
 * error columns and status). 0 when the run worked, -1 when there is
 * nothing to time. */
struct attn_perf_cell;
int matrix_check_cell(struct attn_perf_cell *c, int all, attn_result_row *row);

/* Output `o` (of c's O type) of a call on `c`'s inputs against the double
 * reference on sampled rows, judged with `judge`'s exp error and rescale
 * block and the rules of c's types: the row's error columns, and status
 * failed with the first rule it broke. */
void matrix_check_output(const attn_variant *judge, const struct attn_perf_cell *c, const void *o,
                         int threads, int all, attn_result_row *row);

/* The roofs timed beside a row (--roof paired): `limit`, the roof of the
 * side the run's peaks chose for the row's limit, and `other`, the other
 * side's, for a decode row (n_q <= 16) only: its side is then chosen
 * again from the two measured in its rounds (matrix_judge_paired), since
 * a roof read at the run's start can put a row near the ridge on the
 * wrong side (a Zen 4 VM's run began at 67.8 GB/s, where passes beside an
 * f16-cache decode read 37.5: that row's bytes, not its flops, bound it).
 * NULL: none. */
typedef struct matrix_row_probes {
    const attn_roof_probe *limit, *other;
} matrix_row_probes;

/* The roofs of `p` (NULL: none) in the order they are timed: the limit's,
 * then the other side's, which only ever comes with a limit. */
static inline void matrix_probe_list(const matrix_row_probes *p, const attn_roof_probe *roof[2])
{
    roof[0] = p ? p->limit : NULL;
    roof[1] = p && p->limit ? p->other : NULL;
}

/* One pass of each of `roof` (NULL entries skipped) into slot n of its
 * rates[j], each after pause() when pause is not NULL; 1 when the row has
 * a roof (a slot used), else 0. Every paired timing's rounds end so. */
int matrix_roof_passes(const attn_roof_probe *const roof[2], double *const rates[2], int n,
                       void (*pause)(void));

/* Times `cell` in rounds (matrix_pair.c), each of k calls of cell, k of
 * `twin` (NULL: none) and one pass of each of `probes` (NULL, or none
 * set: no roof): the row's time_ns_* and repetitions from cell's calls,
 * paired_time_ns_median from twin's in the same rounds, and each probe's
 * roof column from its passes, the warm-up's included
 * (matrix_set_paired_roof). At
 * least `reps` rounds and about `min_time` seconds per cell side, fewer
 * rounds past `max_time`. 0, or -1 with the row failed. */
int matrix_time_rounds(struct attn_perf_cell *cell, struct attn_perf_cell *twin,
                       const matrix_row_probes *probes, long reps, double min_time, double max_time,
                       attn_result_row *row);

/* The roof of `n` passes (GB/s or GFLOP/s): the best finite positive
 * one, NaN when none is. */
double matrix_roof_of_passes(const double *passes, int n);

/* The row's roof measured beside it, from the `n` passes of `roof` timed
 * in its rounds (`passes` has room for MATRIX_PLAN_MIN_ROOF_PASSES more):
 * passes added until there are that many, then the best of them
 * (matrix_roof_of_passes, GB/s or GFLOP/s) into the roof column of the
 * probe's kind, roof_source "paired". Every paired row, a variant's or a
 * peer's, is judged so. */
void matrix_set_paired_roof(attn_result_row *row, const attn_roof_probe *roof, double *passes,
                            int n);

/* A judged row above its paired roof (matrix_judge_roof) gets up to this
 * many more passes of `roof`, until one reaches the row's rate: every pass
 * beside it may have been slowed by a neighbour (nothing speeds a pass
 * up), and a roof a row beats is wrong. The best pass becomes the row's
 * roof and the row is judged again; above all of them it stays flagged.
 * Returns the passes taken (0 for a row within its roof). */
enum { MATRIX_ROOF_RECHECK_PASSES = 8 };
int matrix_recheck_roof(attn_result_row *row, const attn_roof_probe *roof);

/* A decode row's side of the roofline from its two roof columns (both
 * measured beside it): `limit` by attn_perf_roofline_bandwidth_bound. */
void matrix_settle_side(attn_result_row *row);

/* Judges a timed row (gflops and gbytes_per_s set) against its roofs: a
 * decode row with a roof timed beside it has its side settled from its
 * two columns first (matrix_settle_side); then matrix_judge_roof, and a
 * row above its roof matrix_recheck_roof with that side's probe, settled
 * again after it, and the other side's recheck when that moved it there
 * above that roof. `probes` NULL or empty: the run's roofs, the side kept. */
void matrix_judge_paired(attn_result_row *row, const matrix_row_probes *probes);

/* --roof paired: the probes of one run, made when a row first needs one
 * (per roof and thread count) and kept to its end, so every row of a
 * thread count is judged by the same kernel the run's peak chose; the
 * read roof's arrays (--bw-mib each, as peak's) are allocated and touched
 * with the first read probe. */
enum { MATRIX_ROOF_SLOTS = 24 };
typedef struct matrix_roof_slot {
    int bandwidth, threads;
    attn_roof roof;
    int ok; /* 0: this CPU cannot measure it (why) */
    attn_roof_probe probe;
    char why[160];
} matrix_roof_slot;
typedef struct matrix_roofs {
    const attn_peak *pk;
    size_t bw_bytes;
    attn_pages pages;
    int max_threads;
    int arrays_state; /* 0: not allocated yet, 1: ready, -1: allocation failed */
    attn_peak_stream arrays;
    int n;
    matrix_roof_slot slot[MATRIX_ROOF_SLOTS];
} matrix_roofs;

void matrix_roofs_init(matrix_roofs *r, const attn_peak *pk, size_t bw_bytes, attn_pages pages,
                       int max_threads);
/* The probe of a row's roof: the read roof when `bandwidth`, else `roof`,
 * at `threads`. NULL (with *why, when why is not NULL) when it cannot be
 * measured here: the row then keeps the run's roof. */
const attn_roof_probe *matrix_roofs_get(matrix_roofs *r, int bandwidth, attn_roof roof, int threads,
                                        const char **why);
/* The probes of a row of `shape` whose run's peaks put it on the read
 * roof when `bandwidth`, else on `roof`, at `threads`: the limit's and,
 * for a decode row (n_q <= 16), the other side's (matrix_row_probes). A
 * probe that cannot be made is NULL, with its reason in *why_limit or
 * *why_other (the other's only asked for with a limit): the row keeps
 * the run's figure in that column, and the caller says so. */
matrix_row_probes matrix_roofs_for_row(matrix_roofs *r, int bandwidth, attn_roof roof, int threads,
                                       const attn_shape *shape, const char **why_limit,
                                       const char **why_other);
/* The note for a row of case `name` whose roofs are not all timed beside
 * it, from matrix_roofs_for_row's reasons, into buf: 1, or 0 (nothing
 * written) when both are NULL. */
int matrix_unpaired_note(char *buf, size_t cap, const char *name, int threads, int bandwidth,
                         const char *why_limit, const char *why_other);
void matrix_roofs_free(matrix_roofs *r);
/* Seconds of one pass of a row's roof, for the budget's model: a compute
 * pass's fixed length, or the read arrays over the run's read roof. */
double matrix_roof_pass_seconds(const matrix_opts *o, const attn_peak *pk, int bandwidth,
                                int threads);

/* The roof test for a row with timings: pct_peak and roof_exceeded. */
void matrix_judge_roof(attn_result_row *row);

#endif
