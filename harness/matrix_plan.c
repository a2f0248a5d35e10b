/* One job, read best whole (over the ~400 lines a file here usually has):
 * the planning policy and its model, its three steps sharing every helper
 * above them. The text around it (budget strings, FILE.plan) is
 * matrix_plan_file.c. */
#include "matrix_plan.h"
#include "matrix_plan_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prior throughput when calibration gave none, as a fraction of the roof
 * that applies ([class][bandwidth_bound]). From the committed 2-core runs
 * (results/intel-xeon-2c): naive 2-4 % of FMA peak (of its one thread),
 * blocked/stream 5-12 %, the vector kernels 15-75 %; decode 10-100 % of
 * read bandwidth. Each is near the low end, so an uncalibrated plan errs
 * towards finishing early rather than late. */
static const double prior_fraction[MATRIX_COST_CLASS_COUNT][2] = {
    [MATRIX_COST_SERIAL_REFERENCE] = {0.03, 0.15},
    [MATRIX_COST_PORTABLE] = {0.05, 0.10},
    [MATRIX_COST_VECTOR] = {0.25, 0.45},
};
/* Roofs per thread when the cell's are unknown: the figures cmd_matrix's
 * old ETA guessed (GFLOP/s, GB/s). */
static const double default_roof_per_thread[2] = {50.0, 10.0};

/* Bisection steps on the policy scale: 2^-50 of the [0, 1] range. */
enum { SCALE_STEPS = 50, LINE_CAP = 2048 };

int matrix_cost_class_name(matrix_cost_class c, const char **out)
{
    static const char *const names[MATRIX_COST_CLASS_COUNT] = {
        [MATRIX_COST_SERIAL_REFERENCE] = "serial_reference",
        [MATRIX_COST_PORTABLE] = "portable",
        [MATRIX_COST_VECTOR] = "vector",
    };
    if (!out)
        return MATRIX_PLAN_EINVAL;
    if ((int)c < 0 || c >= MATRIX_COST_CLASS_COUNT) {
        *out = "?";
        return MATRIX_PLAN_EINVAL;
    }
    *out = names[c];
    return MATRIX_PLAN_OK;
}

/* The cost model ---------------------------------------------------------- */

static int finite_positive(double x)
{
    return isfinite(x) && x > 0;
}

/* GFLOP/s or GB/s of a cell: its calibrated rate, else (serial_reference)
 * the variant's rate at another thread count, else the class prior. */
static double cell_rate(const matrix_plan_input *in, const matrix_plan_cell *c)
{
    const matrix_cost_class cls = in->variants[c->variant].cost_class;
    const int bw = c->bandwidth_bound ? 1 : 0;
    for (int i = 0; i < in->n_rates; i++) {
        const matrix_plan_rate *r = &in->rates[i];
        if (r->variant == c->variant && (r->bandwidth_bound ? 1 : 0) == bw &&
            r->threads == c->threads && finite_positive(r->rate))
            return r->rate;
    }
    if (cls == MATRIX_COST_SERIAL_REFERENCE)
        for (int i = 0; i < in->n_rates; i++) {
            const matrix_plan_rate *r = &in->rates[i];
            if (r->variant == c->variant && (r->bandwidth_bound ? 1 : 0) == bw &&
                finite_positive(r->rate))
                return r->rate;
        }
    /* naive runs on one thread whatever the count: its roof is one core's. */
    const int one = cls == MATRIX_COST_SERIAL_REFERENCE;
    double roof = one ? c->peak_one_thread : c->peak;
    if (!finite_positive(roof))
        roof = default_roof_per_thread[bw] * (one ? 1 : c->threads);
    return prior_fraction[cls][bw] * roof;
}

/* Seconds of one call of the cell. */
static double call_seconds(const matrix_plan_input *in, const matrix_plan_cell *c)
{
    double work = c->bandwidth_bound ? c->bytes : c->flops;
    if (work <= 0)
        return 0;
    return work / (cell_rate(in, c) * 1e9);
}

/* How many timed runs cmd_matrix's loop makes with calls of t seconds:
 *   while (n < cap && (n < reps || total < min_time) && !(n >= 1 && total >= max_time))
 * i.e. min(cap, max(reps, ceil(min_time / t)), max(1, ceil(max_time / t))). */
static double timed_runs(const matrix_plan_policy *pol, const matrix_plan_choice *ch, double t)
{
    const double cap = pol->max_repetitions;
    double need, stop;
    if (t <= 0) {
        need = ch->min_time_s > 0 ? cap : ch->repetitions;
        stop = ch->max_time_s > 0 ? cap : 1;
    } else {
        need = fmax(ch->repetitions, ch->min_time_s > 0 ? ceil(ch->min_time_s / t) : 0);
        stop = fmax(1, ceil(ch->max_time_s / t));
    }
    return fmin(cap, fmin(need, stop));
}

static double seconds_of(const matrix_plan_input *in, int i, const matrix_plan_choice *ch)
{
    const matrix_plan_cell *c = &in->cells[i];
    const double t = call_seconds(in, c);
    /* The untimed checked run, then the timed ones; with a twin, its set-up
     * and warm-up call, and as many calls of it as the slower side needs. */
    const double w = c->twin_cost > 0 ? c->twin_cost : 0;
    const double runs = timed_runs(&in->policy, ch, t * (w > 1 ? w : 1));
    /* With its roof measured beside it (matrix_pair.c): a warm-up pass and
     * one per round, at least MATRIX_PLAN_MIN_ROUNDS rounds (or the
     * repetitions), never more rounds than timed runs; at least
     * MATRIX_PLAN_MIN_ROOF_PASSES passes in all. */
    const double rounds = fmin(fmax(ch->repetitions, MATRIX_PLAN_MIN_ROUNDS), runs);
    const double passes = fmax(1 + rounds, MATRIX_PLAN_MIN_ROOF_PASSES);
    const double roof = c->roof_pass_s > 0 ? passes * c->roof_pass_s : 0;
    const double model = in->policy.cell_overhead_s + c->setup_s * (w > 0 ? 2 : 1) + t * (1 + w) +
                         runs * t * (1 + w) + roof;
    const double factor = in->time_factor ? in->time_factor[c->variant] : 1.0;
    return finite_positive(factor) ? model * factor : model;
}

int matrix_plan_factors(int n_variants, const double *actual_s, const double *model_s,
                        double prior_weight_s, double *factor)
{
    if (n_variants < 0 || !actual_s || !model_s || !factor || !(prior_weight_s > 0) ||
        !isfinite(prior_weight_s))
        return MATRIX_PLAN_EINVAL;
    double actual = 0, model = 0;
    for (int v = 0; v < n_variants; v++) {
        if (!(actual_s[v] >= 0) || !(model_s[v] >= 0) || !isfinite(actual_s[v]) ||
            !isfinite(model_s[v]))
            return MATRIX_PLAN_EINVAL;
        actual += actual_s[v];
        model += model_s[v];
    }
    const double g = model > 0 && actual > 0 ? actual / model : 1.0;
    for (int v = 0; v < n_variants; v++)
        factor[v] = (actual_s[v] + prior_weight_s * g) / (model_s[v] + prior_weight_s);
    return MATRIX_PLAN_OK;
}

int matrix_plan_cell_seconds(const matrix_plan_input *in, int i, const matrix_plan_choice *choice,
                             double *seconds)
{
    if (!in || !choice || !seconds || i < 0 || i >= in->n_cells)
        return MATRIX_PLAN_EINVAL;
    *seconds = seconds_of(in, i, choice);
    return MATRIX_PLAN_OK;
}

/* The policy at `scale` in [0, 1]: 0 is the floor (one timed run, no
 * minimum time: max_time 0 stops after the first), 1 the preset's. */
static matrix_plan_choice choice_at(const matrix_plan_policy *pol, double scale)
{
    matrix_plan_choice ch = {0};
    ch.repetitions = (int)floor(pol->repetitions * scale + 0.5);
    if (ch.repetitions < 1)
        ch.repetitions = 1;
    ch.min_time_s = pol->min_time_s * scale;
    ch.max_time_s = pol->max_time_s * scale;
    return ch;
}

/* "45 s", "4.1 min", "2.5 h": the skip reason's estimate. */
static void format_estimate(double s, char *buf, size_t cap)
{
    if (s < 10)
        snprintf(buf, cap, "%.1f s", s);
    else if (s < 90)
        snprintf(buf, cap, "%.0f s", s);
    else if (s < 90 * 60)
        snprintf(buf, cap, "%.1f min", s / 60);
    else
        snprintf(buf, cap, "%.1f h", s / 3600);
}

/* "29:12" or "1:02:03": the printed plan's durations. */
static void format_clock(double s, char *buf, size_t cap)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

/* Planning ------------------------------------------------------------------ */

static int check_input(const matrix_plan_input *in, char *why, size_t cap)
{
    if (!in) {
        set_msg(why, cap, "no input");
        return MATRIX_PLAN_EINVAL;
    }
    if (!finite_positive(in->budget_s)) {
        set_msg(why, cap, "budget %g s must be a positive number of seconds", in->budget_s);
        return MATRIX_PLAN_EINVAL;
    }
    const matrix_plan_policy *pol = &in->policy;
    if (pol->repetitions < 1 || pol->max_repetitions < pol->repetitions ||
        !(pol->min_time_s >= 0) || !(pol->max_time_s >= 0) || !(pol->cell_overhead_s >= 0) ||
        !isfinite(pol->min_time_s) || !isfinite(pol->max_time_s) ||
        !isfinite(pol->cell_overhead_s)) {
        set_msg(why, cap,
                "policy: repetitions %d (cap %d), min time %g s, max time %g s, overhead %g s "
                "must be >= 1 (<= cap) and >= 0",
                pol->repetitions, pol->max_repetitions, pol->min_time_s, pol->max_time_s,
                pol->cell_overhead_s);
        return MATRIX_PLAN_EINVAL;
    }
    if (in->n_variants < 0 || in->n_cells < 0 || in->n_rates < 0 ||
        (in->n_variants > 0 && !in->variants) || (in->n_cells > 0 && !in->cells) ||
        (in->n_rates > 0 && !in->rates)) {
        set_msg(why, cap, "negative counts or NULL arrays");
        return MATRIX_PLAN_EINVAL;
    }
    for (int v = 0; v < in->n_variants; v++)
        if ((int)in->variants[v].cost_class < 0 ||
            in->variants[v].cost_class >= MATRIX_COST_CLASS_COUNT || !in->variants[v].name) {
            set_msg(why, cap, "variant %d: no name or cost class %d out of range", v,
                    (int)in->variants[v].cost_class);
            return MATRIX_PLAN_EINVAL;
        }
    for (int i = 0; i < in->n_cells; i++) {
        const matrix_plan_cell *c = &in->cells[i];
        if (c->variant < 0 || c->variant >= in->n_variants) {
            set_msg(why, cap, "cell %d: variant index %d out of range (0..%d)", i, c->variant,
                    in->n_variants - 1);
            return MATRIX_PLAN_EINVAL;
        }
        if (c->threads < 1 || !(c->flops >= 0) || !(c->bytes >= 0) || !isfinite(c->flops) ||
            !isfinite(c->bytes) || !(c->setup_s >= 0) || !isfinite(c->setup_s) ||
            !(c->twin_cost >= 0) || !isfinite(c->twin_cost) || !(c->roof_pass_s >= 0) ||
            !isfinite(c->roof_pass_s)) {
            set_msg(why, cap,
                    "cell %d: threads %d, flops %g, bytes %g, setup %g s, twin cost %g, roof pass "
                    "%g s out of range",
                    i, c->threads, c->flops, c->bytes, c->setup_s, c->twin_cost, c->roof_pass_s);
            return MATRIX_PLAN_EINVAL;
        }
        /* The plan file separates fields with blanks: a key has none. */
        if (!c->case_name || !c->case_name[0] || strpbrk(c->case_name, " \t\r\n")) {
            set_msg(why, cap, "cell %d: case name empty or with blanks", i);
            return MATRIX_PLAN_EINVAL;
        }
    }
    return MATRIX_PLAN_OK;
}

int matrix_plan_update_totals(const matrix_plan_input *in, matrix_plan *p)
{
    if (!in || !p || p->n_cells != in->n_cells || p->n_variants != in->n_variants)
        return MATRIX_PLAN_EINVAL;
    p->planned_s = 0;
    p->n_planned = p->n_skipped = 0;
    for (int v = 0; v < p->n_variants; v++)
        p->per_variant[v] = (matrix_plan_variant_total){0};
    for (int i = 0; i < p->n_cells; i++) {
        const matrix_plan_choice *ch = &p->choices[i];
        matrix_plan_variant_total *vt = &p->per_variant[in->cells[i].variant];
        if (ch->skipped) {
            p->n_skipped++;
            vt->skipped++;
            vt->skipped_est_s += ch->est_s;
        } else {
            p->n_planned++;
            vt->planned++;
            vt->est_s += ch->est_s;
            p->planned_s += ch->est_s;
        }
    }
    return MATRIX_PLAN_OK;
}

/* Seconds of every planned cell at `scale` (without storing anything). */
static double planned_seconds_at(const matrix_plan_input *in, const matrix_plan *p, double scale)
{
    const matrix_plan_choice ch = choice_at(&in->policy, scale);
    double total = 0;
    for (int i = 0; i < in->n_cells; i++)
        if (!p->choices[i].skipped)
            total += seconds_of(in, i, &ch);
    return total;
}

static void assign_scale(const matrix_plan_input *in, matrix_plan *p, double scale)
{
    const matrix_plan_choice ch = choice_at(&in->policy, scale);
    for (int i = 0; i < in->n_cells; i++)
        if (!p->choices[i].skipped) {
            p->choices[i] = ch;
            p->choices[i].est_s = seconds_of(in, i, &ch);
        }
    p->scale = scale;
}

/* Step 2: the largest scale that fits, then cells one step above it added
 * back in input order while they fit. The floor must fit already. */
static void fit_scale(const matrix_plan_input *in, matrix_plan *p)
{
    if (planned_seconds_at(in, p, 1.0) <= in->budget_s) {
        assign_scale(in, p, 1.0);
        return;
    }
    double lo = 0, hi = 1; /* lo fits, hi does not */
    for (int step = 0; step < SCALE_STEPS; step++) {
        double mid = 0.5 * (lo + hi);
        if (planned_seconds_at(in, p, mid) <= in->budget_s)
            lo = mid;
        else
            hi = mid;
    }
    assign_scale(in, p, lo);
    double total = planned_seconds_at(in, p, lo);
    const matrix_plan_choice up = choice_at(&in->policy, hi);
    for (int i = 0; i < in->n_cells; i++) {
        matrix_plan_choice *ch = &p->choices[i];
        if (ch->skipped)
            continue;
        double more = seconds_of(in, i, &up);
        /* A hair of margin: the running total and the fresh sum of the
         * final totals may round apart by a few ulps per cell. */
        if (more > ch->est_s && total - ch->est_s + more <= in->budget_s * (1 - 1e-12)) {
            total += more - ch->est_s;
            *ch = up;
            ch->est_s = more;
        }
    }
}

/* The skip order: the slower classes' cells first (a vector cell is the
 * last thing to drop) except each slower variant's share, the most
 * expensive first within each tier; ties by input order, so the plan is
 * the same on every run. */
typedef struct skip_candidate {
    int cell;
    int tier; /* 0: a slower class's cell, 1: vector, 2: within a slower variant's share */
    double floor_s;
} skip_candidate;

static int skip_order(const void *a, const void *b)
{
    const skip_candidate *x = a, *y = b;
    if (x->tier != y->tier)
        return x->tier - y->tier;
    if (x->floor_s != y->floor_s)
        return x->floor_s > y->floor_s ? -1 : 1;
    return x->cell - y->cell;
}

static int by_floor_then_cell(const void *a, const void *b)
{
    const skip_candidate *x = a, *y = b;
    if (x->floor_s != y->floor_s)
        return x->floor_s < y->floor_s ? -1 : 1;
    return x->cell - y->cell;
}

/* Each slower variant keeps its cheapest cells, in order of cost, while
 * they fit its part of MATRIX_PLAN_SLOW_SHARE of the budget: without them
 * a budgeted run would have no naive row to judge speed-ups against and
 * no plain-C baseline at all, for a few seconds the vector cells barely
 * miss. `order` holds every cell (tier 0 or 1); tier 2 marks the kept. */
static void reserve_slow_share(const matrix_plan_input *in, skip_candidate *order)
{
    int slow_variants = 0;
    for (int v = 0; v < in->n_variants; v++) {
        if (in->variants[v].cost_class == MATRIX_COST_VECTOR)
            continue;
        for (int i = 0; i < in->n_cells; i++)
            if (in->cells[i].variant == v) {
                slow_variants++;
                break;
            }
    }
    if (slow_variants == 0)
        return;
    const double share = MATRIX_PLAN_SLOW_SHARE * in->budget_s / slow_variants;
    qsort(order, (size_t)in->n_cells, sizeof *order, by_floor_then_cell);
    for (int v = 0; v < in->n_variants; v++) {
        if (in->variants[v].cost_class == MATRIX_COST_VECTOR)
            continue;
        double kept = 0;
        for (int k = 0; k < in->n_cells; k++) {
            if (in->cells[order[k].cell].variant != v)
                continue;
            if (kept + order[k].floor_s > share)
                break; /* cheapest first: nothing dearer is kept after a miss */
            kept += order[k].floor_s;
            order[k].tier = 2;
        }
    }
}

static int skip_until_floor_fits(const matrix_plan_input *in, matrix_plan *p)
{
    const matrix_plan_choice floor_choice = choice_at(&in->policy, 0.0);
    skip_candidate *order = malloc(sizeof *order * (size_t)(in->n_cells + 1));
    if (!order)
        return MATRIX_PLAN_ENOMEM;
    double total = 0;
    for (int i = 0; i < in->n_cells; i++) {
        double s = seconds_of(in, i, &floor_choice);
        order[i] = (skip_candidate){
            i, in->variants[in->cells[i].variant].cost_class == MATRIX_COST_VECTOR, s};
        total += s;
    }
    reserve_slow_share(in, order);
    qsort(order, (size_t)in->n_cells, sizeof *order, skip_order);
    for (int k = 0; k < in->n_cells && total > in->budget_s; k++) {
        matrix_plan_choice *ch = &p->choices[order[k].cell];
        char est[32];
        format_estimate(order[k].floor_s, est, sizeof est);
        *ch = floor_choice;
        ch->skipped = 1;
        ch->est_s = order[k].floor_s;
        snprintf(ch->reason, sizeof ch->reason, "skipped: over budget (est. %s)", est);
        total -= order[k].floor_s;
        /* Summed afresh near the end, so rounding in the running total
         * cannot let the plan out a hair over the budget. */
        if (total <= in->budget_s)
            total = planned_seconds_at(in, p, 0.0);
    }
    free(order);
    return MATRIX_PLAN_OK;
}

int matrix_plan_make(const matrix_plan_input *in, matrix_plan *out, char *why, size_t cap)
{
    if (!out) {
        set_msg(why, cap, "no plan to fill");
        return MATRIX_PLAN_EINVAL;
    }
    *out = (matrix_plan){0};
    int rc = check_input(in, why, cap);
    if (rc != MATRIX_PLAN_OK)
        return rc;
    out->choices = calloc((size_t)in->n_cells + 1, sizeof *out->choices);
    out->per_variant = calloc((size_t)in->n_variants + 1, sizeof *out->per_variant);
    if (!out->choices || !out->per_variant) {
        matrix_plan_free(out);
        set_msg(why, cap, "out of memory for a plan of %d cells", in->n_cells);
        return MATRIX_PLAN_ENOMEM;
    }
    out->n_cells = in->n_cells;
    out->n_variants = in->n_variants;
    out->budget_s = in->budget_s;
    out->full_s = planned_seconds_at(in, out, 1.0);
    if (planned_seconds_at(in, out, 0.0) > in->budget_s &&
        skip_until_floor_fits(in, out) != MATRIX_PLAN_OK) {
        matrix_plan_free(out);
        set_msg(why, cap, "out of memory for the skip order");
        return MATRIX_PLAN_ENOMEM;
    }
    fit_scale(in, out);
    return matrix_plan_update_totals(in, out);
}

int matrix_plan_refit(const matrix_plan_input *in, matrix_plan *p, const unsigned char *done,
                      double seconds_left, double ratio, char *why, size_t cap)
{
    if (!in || !p || !done || p->n_cells != in->n_cells || p->n_variants != in->n_variants) {
        set_msg(why, cap, "plan and cells do not match");
        return MATRIX_PLAN_EINVAL;
    }
    if (!finite_positive(ratio))
        ratio = 1.0;
    /* The cells still to run, as an input of their own; the budget in the
     * model's seconds, so a run going 20 % slow plans 20 % less. */
    matrix_plan_cell *rest = malloc(sizeof *rest * (size_t)(in->n_cells + 1));
    int *index = malloc(sizeof *index * (size_t)(in->n_cells + 1));
    if (!rest || !index) {
        free(rest);
        free(index);
        set_msg(why, cap, "out of memory");
        return MATRIX_PLAN_ENOMEM;
    }
    int n = 0;
    double done_s = 0;
    for (int i = 0; i < in->n_cells; i++) {
        if (done[i]) {
            if (!p->choices[i].skipped)
                done_s += p->choices[i].est_s;
            continue;
        }
        index[n] = i;
        rest[n++] = in->cells[i];
    }
    matrix_plan_input sub = *in;
    sub.cells = rest;
    sub.n_cells = n;
    sub.budget_s = seconds_left / ratio;
    matrix_plan part;
    int rc = MATRIX_PLAN_OK;
    if (n > 0 && sub.budget_s > 0) {
        rc = matrix_plan_make(&sub, &part, why, cap);
        if (rc == MATRIX_PLAN_OK) {
            for (int k = 0; k < n; k++)
                p->choices[index[k]] = part.choices[k];
            p->scale = part.scale;
            matrix_plan_free(&part);
        }
    } else {
        /* No time left: every cell still to run is skipped. */
        const matrix_plan_choice floor_choice = choice_at(&in->policy, 0.0);
        for (int k = 0; k < n; k++) {
            matrix_plan_choice *ch = &p->choices[index[k]];
            char est[32];
            double s = seconds_of(in, index[k], &floor_choice);
            format_estimate(s, est, sizeof est);
            *ch = floor_choice;
            ch->skipped = 1;
            ch->est_s = s;
            snprintf(ch->reason, sizeof ch->reason, "skipped: over budget (est. %s)", est);
        }
    }
    free(rest);
    free(index);
    if (rc != MATRIX_PLAN_OK)
        return rc;
    p->budget_s = done_s + (sub.budget_s > 0 ? sub.budget_s : 0);
    return matrix_plan_update_totals(in, p);
}

int matrix_plan_free(matrix_plan *p)
{
    if (!p)
        return MATRIX_PLAN_EINVAL;
    free(p->choices);
    free(p->per_variant);
    *p = (matrix_plan){0};
    return MATRIX_PLAN_OK;
}

int matrix_plan_remaining_s(const matrix_plan *p, const unsigned char *done, double *seconds)
{
    if (!p || !seconds)
        return MATRIX_PLAN_EINVAL;
    double left = 0;
    for (int i = 0; i < p->n_cells; i++)
        if (!p->choices[i].skipped && !(done && done[i]))
            left += p->choices[i].est_s;
    *seconds = left;
    return MATRIX_PLAN_OK;
}

int matrix_plan_eta_s(const matrix_plan *p, const unsigned char *done, double elapsed_s,
                      double *seconds, double *ratio)
{
    if (!p || !seconds || !(elapsed_s >= 0))
        return MATRIX_PLAN_EINVAL;
    double left = 0, done_est = 0;
    for (int i = 0; i < p->n_cells; i++) {
        if (p->choices[i].skipped)
            continue;
        if (done && done[i])
            done_est += p->choices[i].est_s;
        else
            left += p->choices[i].est_s;
    }
    /* A few tiny cells say little about the rest: correct only once the
     * cells done carry some weight. */
    double factor = 1.0;
    if (done_est > 0 && done_est >= 0.01 * p->planned_s && elapsed_s > 0)
        factor = elapsed_s / done_est;
    *seconds = left * factor;
    if (ratio)
        *ratio = factor;
    return MATRIX_PLAN_OK;
}

/* Printing ------------------------------------------------------------------- */

int matrix_plan_print(FILE *f, const char *prefix, const matrix_plan_input *in,
                      const matrix_plan *p)
{
    if (!f || !in || !p || p->n_variants != in->n_variants)
        return MATRIX_PLAN_EINVAL;
    if (!prefix)
        prefix = "";
    char budget[32], planned[32], full[32];
    format_clock(p->budget_s, budget, sizeof budget);
    format_clock(p->planned_s, planned, sizeof planned);
    format_clock(p->full_s, full, sizeof full);
    fprintf(f, "%splan: budget %s; %d of %d cells to run, estimated %s (%.0f %% of the budget)",
            prefix, budget, p->n_planned, p->n_cells, planned, 100.0 * p->planned_s / p->budget_s);
    if (p->n_skipped)
        fprintf(f, "; %d skipped over budget", p->n_skipped);
    fprintf(f, "\n");
    const matrix_plan_choice level = choice_at(&in->policy, p->scale);
    if (p->scale < 1.0)
        fprintf(f,
                "%splan: the preset's policy (%d reps, min %.3g s, max %.3g s per cell) would "
                "take %s: scaled to %.2f of it (%d rep%s, min %.3g s, max %.3g s)\n",
                prefix, in->policy.repetitions, in->policy.min_time_s, in->policy.max_time_s, full,
                p->scale, level.repetitions, level.repetitions == 1 ? "" : "s",
                in->policy.min_time_s * p->scale, in->policy.max_time_s * p->scale);
    for (int v = 0; v < p->n_variants; v++) {
        const matrix_plan_variant_total *vt = &p->per_variant[v];
        if (vt->planned + vt->skipped == 0)
            continue;
        const char *cls = "?";
        matrix_cost_class_name(in->variants[v].cost_class, &cls);
        char est[32];
        format_clock(vt->est_s, est, sizeof est);
        fprintf(f, "%splan:   %-10s %-16s %5d cells %9s", prefix, in->variants[v].name, cls,
                vt->planned, est);
        if (vt->skipped) {
            char lost[32];
            format_clock(vt->skipped_est_s, lost, sizeof lost);
            fprintf(f, "   %d skipped (at one repetition: %s)", vt->skipped, lost);
        }
        fprintf(f, "\n");
    }
    return ferror(f) ? MATRIX_PLAN_EIO : MATRIX_PLAN_OK;
}

/* The budget string --------------------------------------------------------- */
