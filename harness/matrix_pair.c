/* A cell timed in rounds that alternate its calls with its twin's and a
 * pass of its roof, or of both roofs for a decode row (matrix.h,
 * matrix_time_rounds). Why: a ratio between
 * two cells timed minutes apart on a shared machine is as much the
 * neighbours' as the code's (the same cell moved 20-40 % between runs
 * here), and so is a ratio to a roof measured at the run's start
 * (roof_probe.h); the peers are timed so already (matrix_peers.c), the
 * ratio targets of the variants against themselves (2 threads vs 1, a
 * narrow type vs f32) and every row against its roof the same way here.
 * Every side runs in this process, one after the other, each cell with
 * its own inputs and workspace; attn_perf_cell_run sets each cell's
 * thread count, the probe its own. */
#include "matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_cases.h"
#include "perf_cell.h"
#include "timer.h"

/* Rounds of (cell x k, twin x k, a pass of each roof): at least `reps` rounds
 * and, per cell side, about `min_time` seconds in all, stopping once a
 * side passes max_time. */
enum { MIN_ROUNDS = MATRIX_PLAN_MIN_ROUNDS, MIN_ROOF_PASSES = MATRIX_PLAN_MIN_ROOF_PASSES };

static int run_timed(attn_perf_cell *c, double *out)
{
    int64_t t0 = attn_now_ns();
    int rc = attn_perf_cell_run(c);
    *out = (double)(attn_now_ns() - t0);
    return rc;
}

/* The buffers of one timing: the cell's and the twin's call times and
 * each roof's pass rates. */
typedef struct round_times {
    double *a, *b, *roof[2];
} round_times;

static void free_times(round_times *t)
{
    free(t->a);
    free(t->b);
    free(t->roof[0]);
    free(t->roof[1]);
}

int matrix_roof_passes(const attn_roof_probe *const roof[2], double *const rates[2], int n,
                       void (*pause)(void))
{
    for (int j = 0; j < 2; j++)
        if (roof[j]) {
            if (pause)
                pause();
            rates[j][n] = attn_roof_probe_pass(roof[j]);
        }
    return roof[0] != NULL;
}

int matrix_time_rounds(attn_perf_cell *cell, attn_perf_cell *twin, const matrix_row_probes *probes,
                       long reps, double min_time, double max_time, attn_result_row *row)
{
    const attn_roof_probe *roof[2];
    matrix_probe_list(probes, roof);
    double first_cell, first_twin = 0;
    /* One call of each first: the twin's warm-up, and the size of a round. */
    if (run_timed(cell, &first_cell) != ATTN_OK ||
        (twin && run_timed(twin, &first_twin) != ATTN_OK)) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "run() failed in the timing rounds");
        return -1;
    }
    const double slower = fmax(first_cell, first_twin) * 1e-9;
    long rounds = reps > MIN_ROUNDS ? reps : MIN_ROUNDS;
    long k = (long)ceil(min_time / (rounds * fmax(slower, 1e-9)));
    k = k < 1 ? 1 : k;
    if ((double)rounds * (double)k > MATRIX_MAX_REPS)
        k = MATRIX_MAX_REPS / rounds > 0 ? MATRIX_MAX_REPS / rounds : 1;
    const size_t roof_room = sizeof(double) * (size_t)(rounds + MIN_ROOF_PASSES);
    round_times t = {malloc(sizeof *t.a * (size_t)(rounds * k)),
                     malloc(sizeof *t.b * (size_t)(rounds * k)),
                     {malloc(roof_room), malloc(roof_room)}};
    if (!t.a || !t.b || !t.roof[0] || !t.roof[1]) {
        free_times(&t);
        attn_result_row_set(row, ATTN_ROW_FAILED, "out of memory for the timings");
        return -1;
    }
    int n = 0, n_roof = 0, rc = ATTN_OK;
    double total = 0, lo = INFINITY, hi = 0;
    n_roof += matrix_roof_passes(roof, t.roof, n_roof, NULL); /* the warm-up's counts too */
    for (long r = 0; r < rounds && rc == ATTN_OK && !(r > 0 && total >= max_time); r++) {
        for (long i = 0; i < k && rc == ATTN_OK; i++)
            rc = run_timed(cell, &t.a[n + i]);
        for (long i = 0; twin && i < k && rc == ATTN_OK; i++)
            rc = run_timed(twin, &t.b[n + i]);
        if (rc == ATTN_OK)
            n_roof += matrix_roof_passes(roof, t.roof, n_roof, NULL);
        for (long i = 0; i < k && rc == ATTN_OK; i++) {
            total += fmax(t.a[n + i], twin ? t.b[n + i] : 0) * 1e-9;
            lo = t.a[n + i] < lo ? t.a[n + i] : lo;
            hi = t.a[n + i] > hi ? t.a[n + i] : hi;
        }
        n += (int)k;
    }
    if (rc != ATTN_OK) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "run() returned %d in the timing rounds", rc);
    } else {
        row->time_ns_median = attn_median(t.a, n);
        row->time_ns_min = lo;
        row->time_ns_max = hi;
        row->repetitions = n;
        if (twin)
            row->paired_time_ns_median = attn_median(t.b, n);
        for (int j = 0; j < 2; j++)
            if (roof[j])
                matrix_set_paired_roof(row, roof[j], t.roof[j], n_roof);
    }
    free_times(&t);
    return rc == ATTN_OK ? 0 : -1;
}

/* The best pass, as STREAM reports the best of its trials: a pass does
 * a fixed amount of work (FMA chains, or arrays far past the last-level
 * cache), so no pass can run faster than the machine, while a neighbour
 * that takes the core or the memory for part of a pass makes it slower.
 * Their median could not tell the two: on a 2-core Zen 4 VM the full
 * preset judged 8 rows against passes at a half or a third of the
 * machine (a 2-thread FMA pass of 82 GFLOP/s where the roof reads
 * 200-220), rows the neighbour had hardly slowed, at 109-180 %. */
double matrix_roof_of_passes(const double *passes, int n)
{
    double best = NAN;
    for (int i = 0; i < n; i++)
        if (isfinite(passes[i]) && passes[i] > 0 && !(passes[i] <= best))
            best = passes[i];
    return best;
}

void matrix_set_paired_roof(attn_result_row *row, const attn_roof_probe *roof, double *passes,
                            int n)
{
    while (n < MIN_ROOF_PASSES)
        passes[n++] = attn_roof_probe_pass(roof);
    const double rate = matrix_roof_of_passes(passes, n);
    if (roof->bandwidth)
        row->peak_gbytes_per_s = rate;
    else
        row->peak_gflops = rate;
    snprintf(row->roof_source, sizeof row->roof_source, "paired");
}

int matrix_recheck_roof(attn_result_row *row, const attn_roof_probe *roof)
{
    double *rate = roof->bandwidth ? &row->peak_gbytes_per_s : &row->peak_gflops;
    int n = 0;
    while (row->roof_exceeded && n < MATRIX_ROOF_RECHECK_PASSES) {
        const double pass = attn_roof_probe_pass(roof);
        n++;
        if (isfinite(pass) && pass > *rate) {
            *rate = pass;
            matrix_judge_roof(row);
        }
    }
    return n;
}

void matrix_settle_side(attn_result_row *row)
{
    const int bw = attn_perf_roofline_bandwidth_bound(&row->shape, &row->types, row->peak_gflops,
                                                      row->peak_gbytes_per_s);
    snprintf(row->limit, sizeof row->limit, "%s", bw ? "bandwidth" : "fma");
}

/* The probe of the side the row is judged on now, NULL: none timed. */
static const attn_roof_probe *probe_of_side(const attn_result_row *row,
                                            const attn_roof_probe *const roof[2])
{
    const int bw = strcmp(row->limit, "bandwidth") == 0;
    for (int j = 0; j < 2; j++)
        if (roof[j] && roof[j]->bandwidth == bw)
            return roof[j];
    return NULL;
}

void matrix_judge_paired(attn_result_row *row, const matrix_row_probes *probes)
{
    const attn_roof_probe *roof[2];
    matrix_probe_list(probes, roof);
    /* A decode row with a roof timed beside it takes its side from its two
     * columns (with one probe only, one of them is the run's), so that
     * the file's `limit` always follows its own columns. */
    const int settle = roof[0] && attn_perf_bandwidth_bound(&row->shape);
    if (settle)
        matrix_settle_side(row);
    matrix_judge_roof(row);
    /* A row above its roof gets that roof's recheck; a roof it raised
     * moves the ridge, and a row that then lands on the other side above
     * that roof gets its recheck too (twice at most: each side once). */
    for (int sides = 0; sides < 2 && row->roof_exceeded; sides++) {
        const attn_roof_probe *judged = probe_of_side(row, roof);
        if (!judged || matrix_recheck_roof(row, judged) == 0 || !settle)
            return;
        const char before = row->limit[0];
        matrix_settle_side(row);
        matrix_judge_roof(row);
        if (row->limit[0] == before)
            return;
    }
}
