/* The matrix's time budget: a deterministic planner that, given
 * the cells of a run, a cost model and a budget in seconds, chooses each
 * cell's repetitions and max time, or skips it with a visible reason, so the
 * whole run fits the budget and uses most of it.
 *
 * Pure computation: no timing, no globals, no I/O except the plan file and
 * the printed summary, so a test can check it on a fake cost table.
 *
 * The model of one cell (what cmd_matrix's measure_cell does):
 *   est = overhead + setup + t (the untimed checked run) + n * t (timed runs)
 * where t = work / rate is one call (work: flops, or bytes for a
 * bandwidth-bound cell) and n is what the timing loop of cmd_matrix stops
 * at: at least `repetitions` and `min_time`, stopping once the timed runs
 * reach `max_time` (after at least one), never more than max_repetitions.
 *
 * The policy, in order:
 *  1. Everything at the preset's repetition policy, if that fits.
 *  2. Else shrink the policy toward the floor (1 timed repetition, no
 *     minimum time: one checked + one timed call per cell) by one factor
 *     `scale` in [0, 1] for every cell, the largest that fits; then cells
 *     one step above that level are added back one by one while they fit
 *     (the steps of a whole number of repetitions would otherwise leave up
 *     to a fifth of the budget unused).
 *  3. If even the floor does not fit, skip cells, the most expensive (at
 *     the floor) first, until the floor fits: first the cells of the slower
 *     classes, then `vector` cells, and last each slower variant's
 *     cheapest cells that fit in its part of MATRIX_PLAN_SLOW_SHARE of the
 *     budget (so a budgeted run still has naive's and the plain-C
 *     variants' small shapes: the speed-ups' baseline). A `vector` cell is
 *     never skipped while a slower cell outside that share is planned.
 *     Then step 2 on the cells left, so the time the skips freed goes to
 *     repetitions.
 * The planned total is always <= the budget. */
#ifndef ATTN_MATRIX_PLAN_H
#define ATTN_MATRIX_PLAN_H

#include <stdio.h>

/* The part of the budget the slower classes' cheapest cells keep when
 * the floor does not fit (split evenly among those variants). */
#define MATRIX_PLAN_SLOW_SHARE 0.10

/* The fewest rounds a cell timed in rounds runs (matrix_pair.c). */
#define MATRIX_PLAN_MIN_ROUNDS 3

/* The fewest passes of its roof a row is judged against, the warm-up
 * pass included (matrix_pair.c, matrix_roof_of_passes). */
#define MATRIX_PLAN_MIN_ROOF_PASSES 3

/* Return codes of every function here. */
enum {
    MATRIX_PLAN_OK = 0,
    MATRIX_PLAN_EINVAL = -1,    /* bad argument or input (the message says which) */
    MATRIX_PLAN_ENOMEM = -2,    /* out of memory */
    MATRIX_PLAN_EIO = -3,       /* the plan file cannot be opened, read or written */
    MATRIX_PLAN_EFORMAT = -4,   /* the plan file is not one this code writes */
    MATRIX_PLAN_ENOTFOUND = -5, /* no such cell in a saved plan */
};

/* How a variant's time scales, which sets its prior throughput and its
 * place in the skip order. Ordered slowest first: a cell is never skipped
 * for the budget while a cell of a slower class than `vector` is planned. */
typedef enum matrix_cost_class {
    MATRIX_COST_SERIAL_REFERENCE, /* naive: one thread whatever the count, n x n scores */
    MATRIX_COST_PORTABLE,         /* plain C, threaded (blocked, stream) */
    MATRIX_COST_VECTOR, /* SIMD intrinsics or library kernels (avx2, avx512, xsmm, blas) */
    MATRIX_COST_CLASS_COUNT
} matrix_cost_class;

/* "serial_reference", "portable", "vector" (or "?"), into *out. */
int matrix_cost_class_name(matrix_cost_class c, const char **out);

typedef struct matrix_plan_variant {
    const char *name;
    matrix_cost_class cost_class;
} matrix_plan_variant;

/* One cell the run would time (cells skipped by rule - a missing CPU
 * feature, a workspace over the limit - are not given to the planner). */
typedef struct matrix_plan_cell {
    const char *case_name; /* the CSV's case column; with threads, the cell's key */
    int threads;
    int variant; /* index into matrix_plan_input.variants */
    double flops, bytes;
    int bandwidth_bound; /* 1: t = bytes / GB/s; 0: t = flops / GFLOP/s */
    /* The roof that applies, GFLOP/s (compute-bound) or GB/s (bandwidth-
     * bound), at `threads` and at 1 thread; <= 0 or not finite: unknown.
     * Only used for the prior when calibration gave no rate. */
    double peak, peak_one_thread;
    double setup_s; /* this cell's own fixed seconds (input set-up), beyond the policy's */
    /* 0: timed alone; > 0: timed in alternating rounds with its twin
     * (matrix_pair.c), whose call takes twin_cost times this cell's and
     * whose set-up is this cell's again. */
    double twin_cost;
    /* 0: judged against the run's roof; > 0: its roofs are measured beside
     * it (matrix --roof paired), passes of this many seconds in all per
     * round (a decode row's: one of each roof). */
    double roof_pass_s;
} matrix_plan_cell;

/* A calibrated throughput of one variant at one thread count: GFLOP/s for
 * compute-bound cells, GB/s for bandwidth-bound ones. A (variant, threads,
 * kind) without an entry gets a prior: a fraction of the cell's roof set by
 * the cost class (a serial_reference variant first takes its rate at any
 * thread count: it runs on one). */
typedef struct matrix_plan_rate {
    int variant;
    int threads;
    int bandwidth_bound;
    double rate;
} matrix_plan_rate;

/* The preset's repetition policy (what --repetitions, --min-time and
 * --max-time say) and the fixed seconds every cell costs beyond its calls
 * (set-up, the accuracy reference). */
typedef struct matrix_plan_policy {
    int repetitions;
    double min_time_s, max_time_s;
    double cell_overhead_s;
    int max_repetitions; /* the timing loop's hard cap (cmd_matrix: 1000) */
} matrix_plan_policy;

typedef struct matrix_plan_input {
    const matrix_plan_variant *variants;
    int n_variants;
    const matrix_plan_cell *cells;
    int n_cells;
    const matrix_plan_rate *rates; /* may be NULL when n_rates = 0 */
    int n_rates;
    matrix_plan_policy policy;
    double budget_s;
    /* Per variant (n_variants entries), what the run has shown so far of
     * the model's error: each cell's estimate is multiplied by its
     * variant's factor (matrix_plan_factors). NULL: 1 for every variant. */
    const double *time_factor;
} matrix_plan_input;

enum { MATRIX_PLAN_REASON_CAP = 80 };

/* What the plan says for one cell. */
typedef struct matrix_plan_choice {
    int skipped;     /* 1: not run; `reason` is its status */
    int repetitions; /* >= 1 */
    double min_time_s, max_time_s;
    /* Estimated seconds of the whole cell; for a skipped cell, what it
     * would have taken at the floor (the least it could cost). */
    double est_s;
    char reason[MATRIX_PLAN_REASON_CAP]; /* "skipped: over budget (est. 4.1 min)", or "" */
} matrix_plan_choice;

typedef struct matrix_plan_variant_total {
    int planned, skipped;
    double est_s;         /* of the planned cells */
    double skipped_est_s; /* what the skipped ones would have taken at the floor */
} matrix_plan_variant_total;

typedef struct matrix_plan {
    int n_cells;
    matrix_plan_choice *choices; /* one per input cell, in the input's order */
    int n_variants;
    matrix_plan_variant_total *per_variant;
    double budget_s;
    double planned_s; /* sum of the planned cells' est_s: <= budget_s */
    double full_s;    /* what every cell would take at the preset's policy */
    /* Where the policy sits between the floor (0) and the preset's (1);
     * cells added back in step 2 are one step above it. */
    double scale;
    int n_planned, n_skipped;
} matrix_plan;

/* Plans `in` into *out (free with matrix_plan_free). MATRIX_PLAN_EINVAL with
 * `why` set for a bad input (a budget <= 0, a variant index out of range, a
 * negative work, ...). */
int matrix_plan_make(const matrix_plan_input *in, matrix_plan *out, char *why, size_t cap);
int matrix_plan_free(matrix_plan *p);

/* The estimated seconds of cell i under `choice` (what est_s holds), for
 * callers that change a choice and want the same model. */
int matrix_plan_cell_seconds(const matrix_plan_input *in, int i, const matrix_plan_choice *choice,
                             double *seconds);

/* Recomputes planned_s, the per-variant totals and the counts from the
 * choices (after matrix_plan_apply_saved or a caller's change). */
int matrix_plan_update_totals(const matrix_plan_input *in, matrix_plan *p);

/* A few readable lines: the budget, the planned total and its share of the
 * budget, how the policy was scaled, and per variant the cells planned,
 * their estimated time and the cells skipped. Each line starts with
 * `prefix` ("matrix: "). */
int matrix_plan_print(FILE *f, const char *prefix, const matrix_plan_input *in,
                      const matrix_plan *p);

/* ETA: the estimated seconds of the planned cells not yet done. `done` has
 * one flag per cell (nonzero: finished), or is NULL (none finished). */
int matrix_plan_remaining_s(const matrix_plan *p, const unsigned char *done, double *seconds);
/* The same corrected by how the run is going: remaining estimate x
 * (elapsed_s / the estimate of the cells done), once the cells done were
 * estimated at >= 1 % of the plan (before that, the plain estimate). What
 * the progress line should show; *ratio (may be NULL) gets the factor,
 * 1 when uncorrected, so a caller can warn when the plan runs > 10 % late. */
int matrix_plan_eta_s(const matrix_plan *p, const unsigned char *done, double elapsed_s,
                      double *seconds, double *ratio);

/* Mid-run correction: re-plans the cells not yet done (done[i] == 0) to fit
 * `seconds_left` of wall time, the model scaled by `ratio` (what
 * matrix_plan_eta_s reports: elapsed / estimate so far; <= 0 or not
 * finite: 1). Done cells keep their choices; a cell not done may get more
 * or fewer repetitions, be skipped, or come back from a skip. The totals
 * are recomputed (planned_s and budget_s are then in the model's seconds:
 * done cells' estimates plus the remaining ones). Write the plan file
 * again afterwards so --resume keeps the new choices. */
int matrix_plan_refit(const matrix_plan_input *in, matrix_plan *p, const unsigned char *done,
                      double seconds_left, double ratio, char *why, size_t cap);

/* The per-variant correction a run feeds back into the model: for each
 * variant v, actual_s[v] seconds of wall time were spent on cells the
 * uncorrected model (time_factor NULL) put at model_s[v]. The factor is
 * the variant's own ratio shrunk toward the run's overall one,
 *   factor[v] = (actual_s[v] + w * g) / (model_s[v] + w),
 *   g = sum(actual_s) / sum(model_s)   (1 while nothing is done),
 * w = prior_weight_s: a variant with little done yet follows the run, one
 * with much done its own record. Cells run variant by variant, and the
 * model errs by variant (naive's cells slower per flop than calibrated,
 * a vector kernel's big cells faster), so one ratio for all would correct
 * avx2's cells with naive's error. */
int matrix_plan_factors(int n_variants, const double *actual_s, const double *model_s,
                        double prior_weight_s, double *factor);

/* "30m", "90s", "1.5h", "2h30m", "1h0m30s" -> seconds. Units h, m, s, each
 * at most once and in that order; a bare number is refused (30 what?). On
 * failure `why` names the value: "--budget '30' needs a unit: ...". `what`
 * names the flag in the message ("--budget"). */
int matrix_plan_parse_budget(const char *what, const char *text, double *seconds, char *why,
                             size_t cap);

/* The plan file, FILE.plan beside FILE.csv (see matrix_plan_path): one line
 * per cell, so --resume keeps the choices of the cells still to run.
 *   # attnbench matrix plan 1
 *   # budget_s=1800 planned_s=1712.5 cells=2352 planned=2101 skipped=251
 *   impl=avx512,B=1,...,causal=0 threads=2 reps=3 min_time=0.3 max_time=18 est_s=0.61
 *   impl=naive,B=1,...,causal=0 threads=1 skip est_s=246 reason=skipped: over budget (est. 4.1 min)
 * Numbers are written so they read back exactly. */
int matrix_plan_path(const char *csv_path, char *buf, size_t cap);
int matrix_plan_write(const char *path, const matrix_plan_input *in, const matrix_plan *p,
                      char *err, size_t cap);

/* What --resume needs beyond the choices to carry on the same plan: the
 * wall time already spent, the model (calibrated rates, per-cell overhead,
 * set-up seconds per byte) and each variant's record (matrix_plan_factors'
 * actual_s and model_s), so the resumed run re-plans what is left to the
 * budget left with the model the first run had, not a new calibration.
 * In the file, after the header line:
 *   # state elapsed_s=567.2 overhead_s=0.12 setup_per_byte=1.1e-09
 *   # rate variant=avx2 threads=2 bandwidth=0 rate=61.5
 *   # record variant=avx2 actual_s=84.1 model_s=90.3 */
typedef struct matrix_plan_state {
    double elapsed_s;
    double overhead_s, setup_per_byte;
    const double *actual_s, *model_s; /* per in->variants; NULL: none recorded */
} matrix_plan_state;
int matrix_plan_write_state(const char *path, const matrix_plan_input *in, const matrix_plan *p,
                            const matrix_plan_state *state, char *err, size_t cap);

enum { MATRIX_PLAN_NAME_CAP = 32 };
typedef struct matrix_plan_saved_rate {
    char variant[MATRIX_PLAN_NAME_CAP];
    int threads, bandwidth_bound;
    double rate;
} matrix_plan_saved_rate;
typedef struct matrix_plan_saved_record {
    char variant[MATRIX_PLAN_NAME_CAP];
    double actual_s, model_s;
} matrix_plan_saved_record;

typedef struct matrix_plan_saved_entry {
    char *case_name;
    int threads;
    matrix_plan_choice choice;
} matrix_plan_saved_entry;

typedef struct matrix_plan_saved {
    double budget_s; /* from the header; NAN when absent */
    int n_entries;
    matrix_plan_saved_entry *entries; /* sorted by (case_name, threads) */
    /* The state line and what follows it; has_state 0 for a plan written
     * without one (matrix_plan_write): then only the choices are known. */
    int has_state;
    double elapsed_s, overhead_s, setup_per_byte;
    int n_rates, n_records;
    matrix_plan_saved_rate *rates;
    matrix_plan_saved_record *records;
} matrix_plan_saved;

/* Reads a plan file. MATRIX_PLAN_EIO when it cannot be read,
 * MATRIX_PLAN_EFORMAT with "FILE line N: ..." for anything it did not
 * write (a duplicate cell included). Free with matrix_plan_saved_free. */
int matrix_plan_read(const char *path, matrix_plan_saved *out, char *err, size_t cap);
int matrix_plan_saved_free(matrix_plan_saved *s);
/* MATRIX_PLAN_OK with *out pointing into s, or MATRIX_PLAN_ENOTFOUND. */
int matrix_plan_saved_find(const matrix_plan_saved *s, const char *case_name, int threads,
                           const matrix_plan_choice **out);
/* --resume: every cell of `p` that the saved plan has gets the saved
 * choice; the others keep theirs (*n_not_found counts them; may be NULL).
 * The totals are recomputed. */
int matrix_plan_apply_saved(const matrix_plan_input *in, matrix_plan *p, const matrix_plan_saved *s,
                            int *n_not_found);

#endif
