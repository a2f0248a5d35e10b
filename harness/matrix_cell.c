/* attnbench matrix: one cell measured (the untimed checked run, then the
 * timed repetitions), judged against its roof, and printed. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "matrix.h"
#include "perf_cell.h"
#include "timer.h"

/* The reference check runs on every row_stride-th query row, the stride
 * chosen so the double-precision reference does about this many flops:
 * well under a second on two cores. */
static const double check_budget_flops = 2e8;

/* Odd, so the sampled rows walk through different i in successive heads
 * rather than hitting the same ones (n_q is usually a power of two). */
static int64_t check_row_stride(const attn_shape *s)
{
    double cost = attn_perf_flops(s);
    int64_t stride = (int64_t)ceil(cost / check_budget_flops);
    if (stride <= 1)
        return 1;
    return stride | 1;
}

/* The untimed checked run through the public dispatcher (guards around the
 * workspace), then its output against the reference on sampled rows.
 * Returns 0 when the run itself worked (the row may still have failed a
 * rule), -1 when there is nothing to time. */
int matrix_check_cell(attn_perf_cell *c, int all, attn_result_row *row)
{
    attn_run_report report;
    char msg[300];
    const attn_run_options opt = {c->types, attn_variant_default_p_round(c->variant)};
    omp_set_num_threads(c->threads);
    int rc = attn_run_variant_typed(c->variant, &c->shape, &opt, c->q, c->k, c->v, c->o, &report,
                                    msg, sizeof msg);
    if (rc != ATTN_OK) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "attn_run returned %d: %s", rc, msg);
        return -1;
    }
    if (!report.workspace_guard_ok) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "guard bytes around the workspace overwritten");
        return -1;
    }
    matrix_check_output(c->variant, c, c->o, c->threads, all, row);
    return 0;
}

void matrix_check_output(const attn_variant *judge, const attn_perf_cell *c, const void *o,
                         int threads, int all, attn_result_row *row)
{
    /* The class of the run: its types, the judge's default class ("P in
     * f32", or the rounded one a variant built around it computes). */
    attn_problem p = attn_problem_make_typed(
        &c->shape, &c->types, attn_variant_default_p_round(judge), c->q, c->k, c->v, NULL);
    p.threads = threads;      /* rule A's r counts the run's threads */
    omp_set_num_threads(all); /* the reference itself may use every core */
    attn_err_stats st;
    if (attn_check_output(judge, &p, o, check_row_stride(&c->shape), &st) != ATTN_OK) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "out of memory for the reference");
        return;
    }
    row->max_err_u = st.e_m;
    row->max_err_d_u = st.e_d;
    row->bound_u = st.bound_u;
    row->nmse = attn_err_nmse(&st);
    if (st.failures)
        attn_result_row_set(row, ATTN_ROW_FAILED, "%s", st.first_failure);
}

/* A ratio cell's twin (perf_cases.h, attn_perf_pair) set up beside it:
 * 1 when `twin` is ready to time, 0 when the cell is timed alone (no twin,
 * or one this CPU or variant cannot run: its own row says why). The row
 * names the twin. */
static int setup_twin(const matrix_opts *o, const matrix_cell *mc, attn_perf_cell *twin,
                      attn_result_row *row)
{
    attn_perf_case tc;
    size_t ws = 0;
    char why[400];
    if (!attn_perf_twin(&mc->pc, &tc) ||
        attn_perf_skip_reason(mc->variant, &tc, &ws, why, sizeof why))
        return 0;
    if (attn_perf_cell_setup(twin, mc->variant, &tc, o->llc_bytes, o->pages, why, sizeof why) != 0)
        return 0;
    attn_perf_case_name(mc->variant->name, &tc.shape, &tc.types, row->paired_case,
                        sizeof row->paired_case);
    snprintf(row->paired_variant, sizeof row->paired_variant, "%s", mc->variant->name);
    row->paired_threads = tc.threads;
    return 1;
}

/* Times the cell: in rounds with its twin and its roof when it has
 * either (matrix_pair.c), else calls back to back. */
static void time_cell(attn_perf_cell *c, const matrix_opts *o, const matrix_cell *mc,
                      const matrix_row_probes *probes, attn_result_row *row)
{
    /* --budget: the plan's policy for this cell, else the preset's. */
    const matrix_plan_choice *plan = mc->plan;
    const long reps = plan ? plan->repetitions : o->repetitions;
    const double min_time = plan ? plan->min_time_s : o->min_time;
    const double max_time = plan ? plan->max_time_s : o->max_time;
    attn_perf_cell twin;
    const int has_twin = setup_twin(o, mc, &twin, row);
    if (has_twin || probes->limit) {
        matrix_time_rounds(c, has_twin ? &twin : NULL, probes, reps, min_time, max_time, row);
        if (has_twin)
            attn_perf_cell_free(&twin);
        return;
    }
    static const int max_reps = MATRIX_MAX_REPS;
    double *t = malloc(sizeof *t * (size_t)max_reps);
    if (!t) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "out of memory for the timings");
        return;
    }
    int n = 0;
    double total = 0, lo = INFINITY, hi = 0;
    while (n < max_reps && (n < reps || total < min_time) && !(n >= 1 && total >= max_time)) {
        int64_t t0 = attn_now_ns();
        int rc = attn_perf_cell_run(c);
        double ns = (double)(attn_now_ns() - t0);
        if (rc != ATTN_OK) {
            attn_result_row_set(row, ATTN_ROW_FAILED, "run() returned %d in timing", rc);
            free(t);
            return;
        }
        t[n++] = ns;
        total += ns * 1e-9;
        lo = ns < lo ? ns : lo;
        hi = ns > hi ? ns : hi;
    }
    row->time_ns_median = attn_median(t, n);
    row->time_ns_min = lo;
    row->time_ns_max = hi;
    row->repetitions = n;
    free(t);
}

/* The planner's reason is the row's whole status text ("skipped: over
 * budget (est. 4.1 min)", what the plan file and the printed plan show);
 * the row keeps the status as such and the rest as its reason. */
static const char *plan_reason(const matrix_plan_choice *plan)
{
    static const char word[] = "skipped: ";
    return strncmp(plan->reason, word, sizeof word - 1) == 0 ? plan->reason + sizeof word - 1
                                                             : plan->reason;
}

/* The row's % of its roof, and whether it beat the roof (then the roof is
 * what is wrong: the peak under-measures this CPU). */
void matrix_judge_roof(attn_result_row *row)
{
    const int bw_bound = strcmp(row->limit, "bandwidth") == 0;
    row->pct_peak = bw_bound ? 100.0 * row->gbytes_per_s / row->peak_gbytes_per_s
                             : 100.0 * row->gflops / row->peak_gflops;
    row->roof_exceeded = isfinite(row->pct_peak) && row->pct_peak > 100.0;
}

/* Fills a row for one cell: skip reason, or checked run plus timings. */
void matrix_measure_cell(const matrix_opts *o, const matrix_cell *mc, const attn_peak *pk, int all,
                         matrix_roofs *roofs, attn_result_row *row)
{
    const attn_variant *v = mc->variant;
    const attn_shape *s = &mc->pc.shape;
    const int threads = mc->pc.threads;
    attn_result_row_init(row);
    snprintf(row->case_name, sizeof row->case_name, "%s", mc->name);
    snprintf(row->variant, sizeof row->variant, "%s", v->name);
    row->shape = *s;
    row->types = mc->pc.types;
    row->threads = threads;
    row->peak_gflops = attn_peak_roof_for(pk, v->roof, threads);
    row->peak_gbytes_per_s = attn_peak_read_for(pk, threads);
    const int bw_bound = attn_perf_roofline_bandwidth_bound(s, &mc->pc.types, row->peak_gflops,
                                                            row->peak_gbytes_per_s);
    snprintf(row->limit, sizeof row->limit, "%s", bw_bound ? "bandwidth" : "fma");
    snprintf(row->roof_source, sizeof row->roof_source, "run");
    size_t ws = 0;
    char why[400];
    int skip = attn_perf_skip_reason(v, &mc->pc, &ws, why, sizeof why);
    row->workspace_bytes = (int64_t)ws;
    if (skip) {
        attn_result_row_set(row, ATTN_ROW_SKIPPED, "%s", why);
        return;
    }
    if (mc->plan && mc->plan->skipped) {
        attn_result_row_set(row, ATTN_ROW_SKIPPED, "%s", plan_reason(mc->plan));
        return;
    }
    attn_perf_cell cell;
    if (attn_perf_cell_setup(&cell, v, &mc->pc, o->llc_bytes, o->pages, why, sizeof why) != 0) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "%s", why);
        return;
    }
    matrix_row_probes probes = {0};
    if (roofs) {
        const char *no_limit, *no_other;
        probes = matrix_roofs_for_row(roofs, bw_bound, v->roof, threads, s, &no_limit, &no_other);
        char note[512];
        if (matrix_unpaired_note(note, sizeof note, mc->name, threads, bw_bound, no_limit,
                                 no_other))
            fprintf(stderr, "%s\n", note);
    }
    if (matrix_check_cell(&cell, all, row) == 0)
        time_cell(&cell, o, mc, &probes, row);
    attn_perf_cell_free(&cell);
    if (isfinite(row->time_ns_median)) {
        row->gflops = attn_perf_flops(s) / row->time_ns_median;
        row->gbytes_per_s = attn_perf_bytes(s, &mc->pc.types) / row->time_ns_median;
        matrix_judge_paired(row, &probes);
    }
}

/* Which twin a paired variant row was timed with (perf_cases.h). */
static const char *twin_words(const attn_result_row *r)
{
    if (r->paired_threads != r->threads)
        return "its 1-thread twin's speed";
    if (r->shape.causal && strstr(r->paired_case, "causal=0"))
        return "its non-causal twin's speed";
    if (r->shape.scale != 0.0f && !strstr(r->paired_case, "scale="))
        return "its usual-scale twin's speed";
    return "its f32 twin's speed";
}

void matrix_print_row(const attn_result_row *r)
{
    char time[32] = "-", rate[48] = "";
    if (isfinite(r->time_ns_median)) {
        double ns = r->time_ns_median;
        snprintf(time, sizeof time,
                 ns >= 1e9   ? "%.2f s"
                 : ns >= 1e6 ? "%.2f ms"
                             : "%.1f us",
                 ns >= 1e9   ? ns * 1e-9
                 : ns >= 1e6 ? ns * 1e-6
                             : ns * 1e-3);
        snprintf(rate, sizeof rate, "%.1f GFLOP/s %.1f GB/s %.1f%% %s", r->gflops, r->gbytes_per_s,
                 r->pct_peak, r->limit);
    }
    printf("%-6s %s threads=%d %s %s",
           r->status == ATTN_ROW_OK        ? "ok"
           : r->status == ATTN_ROW_SKIPPED ? "SKIP"
                                           : "FAIL",
           r->case_name, r->threads, time, rate);
    if (isfinite(r->max_err_u))
        printf(" E_M=%.2fu", r->max_err_u);
    /* A variant row timed with its twin: the ratio of the same rounds. */
    if (r->kind == ATTN_ROW_VARIANT && isfinite(r->paired_time_ns_median) &&
        r->status == ATTN_ROW_OK)
        printf("  %.2fx %s (alternating rounds)", r->paired_time_ns_median / r->time_ns_median,
               twin_words(r));
    if (r->status != ATTN_ROW_OK)
        printf("  %s: %s", attn_row_status_name(r->status), r->reason);
    if (r->roof_exceeded)
        printf("  ROOF EXCEEDED");
    printf("\n");
    fflush(stdout);
}

/* A row above its roof: the roof is wrong, and the user must hear it. */
void matrix_warn_roof(const attn_result_row *r)
{
    int bw = strcmp(r->limit, "bandwidth") == 0;
    fprintf(stderr,
            "matrix: warning: %s threads=%d runs at %.1f%% of its roof (%s %.1f %s at %d "
            "threads): the roof under-measures this CPU\n",
            r->case_name, r->threads, r->pct_peak, bw ? "read bandwidth" : "FMA peak",
            bw ? r->peak_gbytes_per_s : r->peak_gflops, bw ? "GB/s" : "GFLOP/s", r->threads);
}
