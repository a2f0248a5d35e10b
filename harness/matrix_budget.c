/* matrix --budget (matrix_budget.h). The calibration probes are one small
 * prefill (n = 512, 8 heads, d = 128) and one small decode (1 x 8192,
 * Hq 32 / Hkv 8) per variant and thread count: seconds in all, and rates
 * that are low for the big cells of fast variants, which the refits make
 * up for as the real times come in. */
#include "matrix_budget.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_cell.h"
#include "timer.h"

void matrix_budget_free(matrix_budget *b)
{
    matrix_plan_free(&b->plan);
    free(b->cells);
    free(b->cell_of);
    free(b->rates);
    free(b->plan_of);
    free(b->done);
    memset(b, 0, sizeof *b);
}

/* Seconds of one call of a variant on a shape: one untimed checked run,
 * then calls until 0.05 s or 3 calls; the median. Also the seconds of the
 * set-up and of the accuracy check, for the per-cell overhead. */
static int calibrate_one(const matrix_opts *o, const attn_variant *v, attn_shape s, int threads,
                         int all, double *call_s, double *setup_s, double *check_s)
{
    char why[300];
    size_t ws;
    const attn_perf_case pc = {s, threads, {ATTN_F32, ATTN_F32, ATTN_F32}, NULL, ATTN_PAIR_NONE};
    if (attn_perf_skip_reason(v, &pc, &ws, why, sizeof why))
        return -1;
    attn_perf_cell cell;
    int64_t t0 = attn_now_ns();
    if (attn_perf_cell_setup(&cell, v, &pc, o->llc_bytes, o->pages, why, sizeof why) != 0)
        return -1;
    int64_t t1 = attn_now_ns();
    attn_result_row row;
    attn_result_row_init(&row);
    if (matrix_check_cell(&cell, all, &row) != 0) {
        attn_perf_cell_free(&cell);
        return -1;
    }
    int64_t t2 = attn_now_ns();
    double t[3];
    int n = 0;
    double total = 0;
    while (n < 3 && (n < 1 || total < 0.05)) {
        int64_t a = attn_now_ns();
        attn_perf_cell_run(&cell);
        t[n] = (double)(attn_now_ns() - a) * 1e-9;
        total += t[n++];
    }
    attn_perf_cell_free(&cell);
    *call_s = attn_median(t, n);
    *setup_s = (double)(t1 - t0) * 1e-9;
    *check_s = (double)(t2 - t1) * 1e-9;
    return 0;
}

static int alloc_storage(matrix_budget *b, const matrix_opts *o, int n)
{
    b->cells = calloc((size_t)n + 1, sizeof *b->cells);
    b->cell_of = calloc((size_t)n + 1, sizeof *b->cell_of);
    b->rates =
        calloc((size_t)(o->n_variants * 2 * MATRIX_MAX_THREAD_ARGS * 4) + 1, sizeof *b->rates);
    b->plan_of = malloc(sizeof *b->plan_of * ((size_t)n + 1));
    b->done = calloc((size_t)n + 1, 1);
    if (!b->cells || !b->cell_of || !b->rates || !b->plan_of || !b->done)
        return -1;
    for (int i = 0; i < n; i++)
        b->plan_of[i] = -1;
    return 0;
}

/* Rates per (variant, threads, compute/bandwidth), the per-cell overhead
 * (check minus call: the checked call is in the model already) and the
 * set-up seconds per input byte. */
static void calibrate(matrix_budget *b, const matrix_opts *o, const int *threads, int n_threads,
                      int all, double *overhead_s, double *setup_per_byte)
{
    const attn_shape probe[2] = {{1, 8, 8, 512, 512, 128, 128, 0, 0.0f},
                                 {1, 32, 8, 1, 8192, 128, 128, 0, 0.0f}};
    fprintf(stderr, "matrix: calibrating %d variants at %d thread counts for --budget\n",
            o->n_variants, n_threads);
    for (int v = 0; v < o->n_variants; v++)
        for (int k = 0; k < n_threads; k++)
            for (int bw = 0; bw < 2; bw++) {
                /* naive runs on one thread: one calibration serves all. */
                if (b->variants[v].cost_class == MATRIX_COST_SERIAL_REFERENCE && k > 0)
                    continue;
                double call_s, setup_s, check_s;
                if (calibrate_one(o, o->variants[v], probe[bw], threads[k], all, &call_s, &setup_s,
                                  &check_s) != 0 ||
                    call_s <= 0)
                    continue;
                double work = bw ? attn_perf_bytes(&probe[bw], NULL) : attn_perf_flops(&probe[bw]);
                b->rates[b->n_rates++] =
                    (matrix_plan_rate){v, threads[k], bw, work / call_s * 1e-9};
                double bytes = attn_perf_bytes(&probe[bw], NULL) *
                               attn_perf_copies(&probe[bw], NULL, o->llc_bytes);
                *setup_per_byte = fmax(*setup_per_byte, setup_s / bytes);
                *overhead_s = fmax(*overhead_s, check_s - call_s);
            }
}

/* --resume: the model and records FILE.plan saved, by variant name (a
 * variant not in this run is left out, one new to it gets priors). */
static void load_state(matrix_budget *b, const matrix_opts *o, const matrix_plan_saved *s)
{
    for (int i = 0; i < s->n_rates; i++)
        for (int v = 0; v < o->n_variants; v++)
            if (strcmp(s->rates[i].variant, o->variants[v]->name) == 0)
                b->rates[b->n_rates++] = (matrix_plan_rate){
                    v, s->rates[i].threads, s->rates[i].bandwidth_bound, s->rates[i].rate};
    for (int i = 0; i < s->n_records; i++)
        for (int v = 0; v < o->n_variants; v++)
            if (strcmp(s->records[i].variant, o->variants[v]->name) == 0) {
                b->actual_s[v] = s->records[i].actual_s;
                b->model_s[v] = s->records[i].model_s;
            }
    b->setup_per_byte = s->setup_per_byte;
    b->elapsed_before_s = s->elapsed_s;
}

/* The cells the planner sees: those not skipped by rule (a missing CPU
 * feature, a workspace over the limit cost nothing). */
static int plan_cells(matrix_budget *b, const matrix_opts *o, matrix_cell *cells, int n,
                      const attn_peak *pk, double setup_per_byte)
{
    int np = 0;
    for (int i = 0; i < n; i++) {
        const attn_perf_case *pc = &cells[i].pc;
        char w[300];
        size_t ws;
        if (attn_perf_skip_reason(cells[i].variant, pc, &ws, w, sizeof w))
            continue;
        int v = 0;
        while (o->variants[v] != cells[i].variant)
            v++;
        const int bw = attn_perf_bandwidth_bound(&pc->shape);
        /* A call moves its tensors at their types' sizes (a bf16 KV cache
         * half an f32 one's bytes: half the time at the same GB/s), while
         * set-up makes the data in f32 before rounding it: its cost is
         * the f32 bytes of the copy generated plus the other copies' bytes
         * (for an f32 cell, the bytes of every copy, as calibrated). */
        const double bytes = attn_perf_bytes(&pc->shape, &pc->types);
        const double f32_bytes = attn_perf_bytes(&pc->shape, NULL);
        const int copies = attn_perf_copies(&pc->shape, &pc->types, o->llc_bytes);
        b->cell_of[np] = i;
        b->plan_of[i] = np;
        b->cells[np++] = (matrix_plan_cell){
            .case_name = cells[i].name,
            .threads = pc->threads,
            .variant = v,
            .flops = attn_perf_flops(&pc->shape),
            .bytes = bytes,
            .bandwidth_bound = bw,
            .peak = bw ? attn_peak_read_for(pk, pc->threads) : attn_peak_fma_for(pk, pc->threads),
            .peak_one_thread = bw ? attn_peak_read_for(pk, 1) : attn_peak_fma_for(pk, 1),
            .setup_s = setup_per_byte * (f32_bytes + bytes * (copies - 1)),
            /* A 1-thread twin takes about `threads` times as long; an f32
             * twin of a memory-bound cell its bytes' ratio, of a compute-
             * bound one about as long; a non-causal twin twice the work, a
             * usual-scale twin the same. */
            .twin_cost = pc->pair == ATTN_PAIR_ONE_THREAD    ? (double)pc->threads
                         : pc->pair == ATTN_PAIR_F32         ? (bw ? f32_bytes / bytes : 1.0)
                         : pc->pair == ATTN_PAIR_NON_CAUSAL  ? 2.0
                         : pc->pair == ATTN_PAIR_USUAL_SCALE ? 1.0
                                                             : 0.0,
            /* A decode row times both roofs' passes (matrix_row_probes). */
            .roof_pass_s = o->roof_paired
                               ? matrix_roof_pass_seconds(o, pk, bw, pc->threads) +
                                     (bw ? matrix_roof_pass_seconds(o, pk, 0, pc->threads) : 0)
                               : 0,
        };
    }
    return np;
}

/* The planner's class from the table's description of a variant: one
 * thread and n x n scores; plain C (no ISA features, no library); or
 * vector kernels (SIMD intrinsics, libxsmm, OpenBLAS). */
static matrix_cost_class plan_class(const attn_variant *v)
{
    if (v->cost == ATTN_COST_QUADRATIC_ONE_THREAD)
        return MATRIX_COST_SERIAL_REFERENCE;
    if (v->cost == ATTN_COST_BASELINE || v->required_features || v->library)
        return MATRIX_COST_VECTOR;
    return MATRIX_COST_PORTABLE;
}

static void refit(matrix_budget *b);

/* The variants' share of a budget when `peers` peers run after them
 * (matrix --peers): an equal share per runner; 1 with no peers. A peer's
 * cell also times the variant it is paired with, but the frameworks'
 * cells are few beside the variants' sweep, and a budget all spent on the
 * variants would leave every peer row skipped. */
static double variant_share(int n_variants, int peers)
{
    if (peers <= 0 || n_variants <= 0)
        return 1.0;
    return (double)n_variants / (double)(n_variants + peers);
}

int matrix_budget_plan(matrix_budget *b, const matrix_opts *o, matrix_cell *cells, int n,
                       const attn_peak *pk, int all, int64_t t_start_ns)
{
    char why[600];
    memset(b, 0, sizeof *b);
    if (alloc_storage(b, o, n) != 0) {
        fprintf(stderr, "matrix: out of memory for the plan\n");
        return -1;
    }
    b->t_start_ns = t_start_ns;
    for (int v = 0; v < o->n_variants; v++) {
        b->variants[v].name = o->variants[v]->name;
        b->variants[v].cost_class = plan_class(o->variants[v]);
        b->factor[v] = 1.0;
    }
    int threads[64], n_threads = 0;
    for (int i = 0; i < n; i++) {
        int t = cells[i].pc.threads, seen = 0;
        for (int k = 0; k < n_threads; k++)
            seen |= threads[k] == t;
        if (!seen && n_threads < 64)
            threads[n_threads++] = t;
    }
    matrix_plan_path(o->out, b->path, sizeof b->path);
    matrix_plan_saved saved;
    const int plan_rc = o->resume ? matrix_plan_read(b->path, &saved, why, sizeof why) : -1;
    const int have_saved = plan_rc == MATRIX_PLAN_OK;
    /* A plan that is there but does not read back costs its timings and
     * the earlier runs' time: say so rather than calibrate silently. */
    if (o->resume && !have_saved && plan_rc != MATRIX_PLAN_EIO)
        fprintf(stderr, "matrix: %s; calibrating again (the earlier runs' time is not counted)\n",
                why);
    const int carry_on = have_saved && saved.has_state;
    double overhead_s = 0;
    if (carry_on) {
        load_state(b, o, &saved);
        overhead_s = saved.overhead_s;
    } else if (!have_saved) {
        calibrate(b, o, threads, n_threads, all, &overhead_s, &b->setup_per_byte);
    }
    /* 3 % kept back for what the model misses (the process exit, the
     * sidecar); the earlier runs' time (--resume: the variants' cells) is
     * spent; the peers' share comes after the variants'. */
    const double whole_s = 0.97 * o->budget_s;
    const double peers_s = (1.0 - variant_share(o->n_variants, o->peers.n)) * whole_s;
    const double usable_s = whole_s - peers_s - b->elapsed_before_s;
    b->deadline_ns = t_start_ns + (int64_t)(usable_s * 1e9);
    b->peers_deadline_ns = t_start_ns + (int64_t)((whole_s - b->elapsed_before_s) * 1e9);
    if (o->peers.n > 0)
        printf("matrix: plan: the %d peer(s) after the variants share %.0f s of the budget, "
               "and what the variants leave of theirs\n",
               o->peers.n, peers_s);
    int np = plan_cells(b, o, cells, n, pk, b->setup_per_byte);
    double spent = (double)(attn_now_ns() - t_start_ns) * 1e-9;
    b->in = (matrix_plan_input){
        b->variants,
        o->n_variants,
        b->cells,
        np,
        b->rates,
        b->n_rates,
        {(int)o->repetitions, o->min_time, o->max_time, overhead_s, MATRIX_MAX_REPS},
        usable_s - spent,
        NULL};
    if (b->in.budget_s < 1)
        b->in.budget_s = 1;
    if (matrix_plan_make(&b->in, &b->plan, why, sizeof why) != MATRIX_PLAN_OK) {
        fprintf(stderr, "matrix: plan: %s\n", why);
        return -1;
    }
    b->refit_step_s = 0.1 * b->plan.planned_s;
    if (have_saved) {
        int missing = 0;
        matrix_plan_apply_saved(&b->in, &b->plan, &saved, &missing);
        b->resumed = !carry_on;
        matrix_plan_saved_free(&saved);
        fprintf(stderr, "matrix: resuming the plan of %s (%d cells not in it planned afresh)\n",
                b->path, missing);
        if (carry_on) {
            /* A tenth of what was left when it stopped: about as often as
             * the first run would have checked. */
            b->refit_step_s = 0.1 * b->plan.planned_s;
            fprintf(stderr,
                    "matrix: the runs before spent %.0f s of the %.0f s budget; re-planning the "
                    "%d cells left to the rest\n",
                    b->elapsed_before_s, o->budget_s, np);
            refit(b);
        }
    } else {
        matrix_budget_save(b);
    }
    for (int k = 0; k < np; k++)
        cells[b->cell_of[k]].plan = &b->plan.choices[k];
    b->next_refit_s = b->refit_step_s;
    b->last_done_ns = attn_now_ns();
    printf("matrix: calibration and peaks took %.1f s; per cell %.2f s of set-up and check\n",
           spent, overhead_s);
    matrix_plan_print(stdout, "matrix: ", &b->in, &b->plan);
    fflush(stdout);
    return 0;
}

void matrix_budget_save(matrix_budget *b)
{
    char why[400];
    const matrix_plan_state st = {
        b->elapsed_before_s + (double)(attn_now_ns() - b->t_start_ns) * 1e-9,
        b->in.policy.cell_overhead_s,
        b->setup_per_byte,
        b->actual_s,
        b->model_s,
    };
    if (matrix_plan_write_state(b->path, &b->in, &b->plan, &st, why, sizeof why) != MATRIX_PLAN_OK)
        fprintf(stderr, "matrix: %s\n", why);
}

/* The run so far against the plan: each variant's record so far corrects
 * its cells' estimates; what is left is re-planned to the time left and
 * FILE.plan kept in step for --resume. */
static void refit(matrix_budget *b)
{
    char why[400];
    const int nv = b->in.n_variants;
    /* A variant's own record outweighs the run's once it has ~2 % of the
     * first plan's seconds behind it. */
    matrix_plan_factors(nv, b->actual_s, b->model_s, fmax(1.0, 0.2 * b->refit_step_s), b->factor);
    b->in.time_factor = b->factor;
    double actual = 0, model = 0;
    for (int v = 0; v < nv; v++) {
        actual += b->actual_s[v];
        model += b->model_s[v];
    }
    double left_s = (double)(b->deadline_ns - attn_now_ns()) * 1e-9;
    if (matrix_plan_refit(&b->in, &b->plan, b->done, left_s > 0 ? left_s : 0, 1.0, why,
                          sizeof why) != MATRIX_PLAN_OK) {
        fprintf(stderr, "matrix: plan: %s\n", why);
        return;
    }
    char per[400] = "";
    size_t used = 0;
    for (int v = 0; v < nv && used < sizeof per; v++)
        if (b->model_s[v] > 0)
            used += (size_t)snprintf(per + used, sizeof per - used, "%s%s %.2fx",
                                     used ? ", " : " (", b->variants[v].name, b->factor[v]);
    if (used && used < sizeof per - 1)
        snprintf(per + used, sizeof per - used, ")");
    fprintf(stderr, "matrix: plan: running at %.2fx the estimates%s; %.0f s left, re-planned\n",
            model > 0 ? actual / model : 1.0, per, left_s);
    matrix_budget_save(b);
}

void matrix_budget_cell_done(matrix_budget *b, int i)
{
    const int64_t now = attn_now_ns();
    const double cell_s = (double)(now - b->last_done_ns) * 1e-9;
    b->last_done_ns = now;
    if (b->resumed || b->plan_of[i] < 0)
        return;
    const int k = b->plan_of[i];
    b->done[k] = 1;
    if (!b->plan.choices[k].skipped) {
        /* The record compares wall time with the uncorrected model. */
        matrix_plan_input raw = b->in;
        raw.time_factor = NULL;
        double model;
        if (matrix_plan_cell_seconds(&raw, k, &b->plan.choices[k], &model) == MATRIX_PLAN_OK) {
            b->actual_s[b->in.cells[k].variant] += cell_s;
            b->model_s[b->in.cells[k].variant] += model;
        }
    }
    double left;
    matrix_plan_remaining_s(&b->plan, b->done, &left);
    /* Every tenth of the first plan: re-plan the rest to the time left.
     * (A tenth of the current plan would refit, and rewrite FILE.plan,
     * after every cell once a late run has shrunk it.) */
    if (b->plan.planned_s - left >= b->next_refit_s) {
        b->next_refit_s = b->plan.planned_s - left + b->refit_step_s;
        refit(b);
    }
}
