/* A cell timed in alternating rounds with its twin (matrix.h,
 * matrix_time_paired). Why: a ratio between two cells timed minutes apart
 * on a shared machine is as much the neighbours' as the code's (the same
 * cell moved 20-40 % between runs here); the peers are timed so already
 * (matrix_peers.c), the ratio targets of the variants against themselves
 * (2 threads vs 1, a narrow type vs f32) the same way here. Both sides run
 * in this process, one after the other, each with its own inputs and
 * workspace; attn_perf_cell_run sets each side's thread count. */
#include "matrix.h"

#include <math.h>
#include <stdlib.h>

#include "perf_cell.h"
#include "timer.h"

/* Rounds of (cell x k, twin x k): at least `reps` rounds and, per side,
 * about `min_time` seconds in all, stopping once a side passes max_time. */
enum { MIN_ROUNDS = 3 };

static int run_timed(attn_perf_cell *c, double *out)
{
    int64_t t0 = attn_now_ns();
    int rc = attn_perf_cell_run(c);
    *out = (double)(attn_now_ns() - t0);
    return rc;
}

int matrix_time_paired(attn_perf_cell *cell, attn_perf_cell *twin, long reps, double min_time,
                       double max_time, attn_result_row *row)
{
    double first_cell, first_twin;
    /* One call of each first: the twin's warm-up, and the size of a round. */
    if (run_timed(cell, &first_cell) != ATTN_OK || run_timed(twin, &first_twin) != ATTN_OK) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "run() failed in the paired timing");
        return -1;
    }
    const double slower = fmax(first_cell, first_twin) * 1e-9;
    long rounds = reps > MIN_ROUNDS ? reps : MIN_ROUNDS;
    long k = (long)ceil(min_time / (rounds * fmax(slower, 1e-9)));
    k = k < 1 ? 1 : k;
    if ((double)rounds * (double)k > MATRIX_MAX_REPS)
        k = MATRIX_MAX_REPS / rounds > 0 ? MATRIX_MAX_REPS / rounds : 1;
    double *a = malloc(sizeof *a * (size_t)(rounds * k)),
           *b = malloc(sizeof *b * (size_t)(rounds * k));
    if (!a || !b) {
        free(a);
        free(b);
        attn_result_row_set(row, ATTN_ROW_FAILED, "out of memory for the timings");
        return -1;
    }
    int n = 0, rc = ATTN_OK;
    double total = 0, lo = INFINITY, hi = 0;
    for (long r = 0; r < rounds && rc == ATTN_OK && !(r > 0 && total >= max_time); r++) {
        for (long i = 0; i < k && rc == ATTN_OK; i++)
            rc = run_timed(cell, &a[n + i]);
        for (long i = 0; i < k && rc == ATTN_OK; i++)
            rc = run_timed(twin, &b[n + i]);
        for (long i = 0; i < k && rc == ATTN_OK; i++) {
            total += fmax(a[n + i], b[n + i]) * 1e-9;
            lo = a[n + i] < lo ? a[n + i] : lo;
            hi = a[n + i] > hi ? a[n + i] : hi;
        }
        n += (int)k;
    }
    if (rc != ATTN_OK) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "run() returned %d in the paired timing", rc);
    } else {
        row->time_ns_median = attn_median(a, n);
        row->time_ns_min = lo;
        row->time_ns_max = hi;
        row->repetitions = n;
        row->paired_time_ns_median = attn_median(b, n);
    }
    free(a);
    free(b);
    return rc == ATTN_OK ? 0 : -1;
}
