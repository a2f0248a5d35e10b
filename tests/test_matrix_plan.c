/* The budget planner (harness/matrix_plan.c) on a fake cost table: every
 * rate is given, so each cell's seconds are known exactly and nothing is
 * timed. Checks the fit (<= budget, >= 90 % of it when there is work),
 * that repetitions shrink before anything is skipped, the skip order (most
 * expensive first, vector cells last), the reason strings, the plan file
 * round trip, --resume's apply, the ETA and the budget parser. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "matrix.h"
#include "matrix_plan.h"

enum { V_NAIVE, V_BLOCKED, V_AVX512, N_VARIANTS, MAX_CELLS = 256 };

static const matrix_plan_variant variants[N_VARIANTS] = {
    {"naive", MATRIX_COST_SERIAL_REFERENCE},
    {"blocked", MATRIX_COST_PORTABLE},
    {"avx512", MATRIX_COST_VECTOR},
};

/* Every variant at 1 GFLOP/s on 1 and 2 threads: a cell of F flops takes
 * F / 1e9 seconds a call, whatever its variant. */
static const matrix_plan_rate rates[] = {
    {V_NAIVE, 1, 0, 1.0},  {V_NAIVE, 2, 0, 1.0},  {V_BLOCKED, 1, 0, 1.0}, {V_BLOCKED, 2, 0, 1.0},
    {V_AVX512, 1, 0, 1.0}, {V_AVX512, 2, 0, 1.0}, {V_AVX512, 1, 1, 10.0}, {V_AVX512, 2, 1, 10.0},
};

typedef struct fake_table {
    matrix_plan_cell cells[MAX_CELLS];
    char names[MAX_CELLS][64];
    int n;
    matrix_plan_input in;
} fake_table;

static const matrix_plan_policy policy = {.repetitions = 5,
                                          .min_time_s = 0.5,
                                          .max_time_s = 30,
                                          .cell_overhead_s = 0.2,
                                          .max_repetitions = 1000};

static void table_init(fake_table *t)
{
    memset(t, 0, sizeof *t);
    t->in.variants = variants;
    t->in.n_variants = N_VARIANTS;
    t->in.cells = t->cells;
    t->in.rates = rates;
    t->in.n_rates = (int)(sizeof rates / sizeof rates[0]);
    t->in.policy = policy;
}

/* A compute-bound cell whose call takes `call_s` seconds. */
static int add_cell(fake_table *t, int variant, int threads, double call_s)
{
    int i = t->n++;
    snprintf(t->names[i], sizeof t->names[i], "impl=%s,cell=%d", variants[variant].name, i);
    t->cells[i] = (matrix_plan_cell){.case_name = t->names[i],
                                     .threads = threads,
                                     .variant = variant,
                                     .flops = call_s * 1e9,
                                     .bytes = 1e6,
                                     .peak = 100,
                                     .peak_one_thread = 50};
    t->in.n_cells = t->n;
    return i;
}

/* The seconds of a cell at the floor: overhead + checked run + one timed. */
static double floor_s(const fake_table *t, int i)
{
    return policy.cell_overhead_s + 2 * t->cells[i].flops / 1e9;
}

static double sum_of_floors(const fake_table *t)
{
    double s = 0;
    for (int i = 0; i < t->n; i++)
        s += floor_s(t, i);
    return s;
}

/* A mixed run: small vector cells (many reps each), a few portable and
 * serial cells of very different sizes. */
static void mixed_table(fake_table *t)
{
    table_init(t);
    for (int i = 0; i < 60; i++)
        add_cell(t, V_AVX512, 1 + i % 2, 0.001 * (1 + i % 7));
    for (int i = 0; i < 12; i++)
        add_cell(t, V_BLOCKED, 1 + i % 2, 0.05 * (1 + i));
    const double naive_calls[] = {0.01, 0.5, 2, 8, 20, 60, 122.9};
    for (int i = 0; i < 7; i++)
        add_cell(t, V_NAIVE, 1, naive_calls[i]);
}

static void check_plan_consistent(check_tally *tc, const fake_table *t, const matrix_plan *p)
{
    double sum = 0;
    for (int i = 0; i < t->n; i++) {
        const matrix_plan_choice *ch = &p->choices[i];
        double s;
        if (ch->skipped)
            continue;
        CHECK(tc, ch->repetitions >= 1, "cell %d: %d repetitions", i, ch->repetitions);
        CHECK(tc, matrix_plan_cell_seconds(&t->in, i, ch, &s) == MATRIX_PLAN_OK && s == ch->est_s,
              "cell %d: est %g is not the model's %g", i, ch->est_s, s);
        sum += ch->est_s;
    }
    CHECK(tc, fabs(sum - p->planned_s) <= 1e-9 * sum, "planned_s %g, cells sum to %g", p->planned_s,
          sum);
    CHECK(tc, p->planned_s <= p->budget_s, "planned %.6f s over the budget %.6f s", p->planned_s,
          p->budget_s);
}

/* The model mirrors cmd_matrix's timing loop. */
static void test_cell_model(check_tally *tc)
{
    fake_table t;
    table_init(&t);
    add_cell(&t, V_AVX512, 1, 0.1);
    double s;
    matrix_plan_choice ch = {.repetitions = 3, .min_time_s = 1.0, .max_time_s = 10};
    /* min time wins: ceil(1.0 / 0.1) = 10 timed runs + 1 checked. */
    CHECK(tc, matrix_plan_cell_seconds(&t.in, 0, &ch, &s) == 0 && fabs(s - (0.2 + 1.1)) < 1e-9,
          "min-time cell: %g s", s);
    ch = (matrix_plan_choice){.repetitions = 50, .min_time_s = 0, .max_time_s = 2};
    /* max time stops it at 20 runs. */
    CHECK(tc, matrix_plan_cell_seconds(&t.in, 0, &ch, &s) == 0 && fabs(s - (0.2 + 2.1)) < 1e-9,
          "max-time cell: %g s", s);
    ch = (matrix_plan_choice){.repetitions = 1, .min_time_s = 0, .max_time_s = 0};
    CHECK(tc, matrix_plan_cell_seconds(&t.in, 0, &ch, &s) == 0 && fabs(s - 0.4) < 1e-9,
          "floor cell: %g s", s);
    /* Timed with a twin twice as slow: its warm-up (0.2) and, at min time
     * 1 s, ceil(1.0 / 0.2) = 5 calls of each side (5 x 0.3). */
    int paired = add_cell(&t, V_AVX512, 1, 0.1);
    t.cells[paired].twin_cost = 2;
    ch = (matrix_plan_choice){.repetitions = 3, .min_time_s = 1.0, .max_time_s = 10};
    CHECK(tc,
          matrix_plan_cell_seconds(&t.in, paired, &ch, &s) == 0 &&
              fabs(s - (0.2 + 0.1 + 0.2 + 1.5)) < 1e-9,
          "cell with a twin: %g s", s);
    t.cells[paired].twin_cost = -1;
    matrix_plan bad;
    char bad_why[200] = "";
    t.in.budget_s = 1e6;
    CHECK(tc,
          matrix_plan_make(&t.in, &bad, bad_why, sizeof bad_why) == MATRIX_PLAN_EINVAL &&
              strstr(bad_why, "twin cost -1") != NULL,
          "a negative twin cost is refused: %s", bad_why);
    t.cells[paired].twin_cost = 0;
    /* Its roof measured beside it: a warm-up pass and one per round, 3
     * rounds at 3 repetitions (4 x 0.05 s); at the floor one timed run, so
     * one round, and one pass more to reach the fewest a roof is judged
     * on (3 x 0.05 s). */
    t.cells[paired].roof_pass_s = 0.05;
    ch = (matrix_plan_choice){.repetitions = 3, .min_time_s = 1.0, .max_time_s = 10};
    CHECK(tc,
          matrix_plan_cell_seconds(&t.in, paired, &ch, &s) == 0 &&
              fabs(s - (0.2 + 1.1 + 0.2)) < 1e-9,
          "cell with its roof beside it: %g s", s);
    ch = (matrix_plan_choice){.repetitions = 1, .min_time_s = 0, .max_time_s = 0};
    CHECK(tc,
          matrix_plan_cell_seconds(&t.in, paired, &ch, &s) == 0 && fabs(s - (0.4 + 0.15)) < 1e-9,
          "floor cell with its roof beside it: %g s", s);
    t.cells[paired].roof_pass_s = -0.01;
    CHECK(tc,
          matrix_plan_make(&t.in, &bad, bad_why, sizeof bad_why) == MATRIX_PLAN_EINVAL &&
              strstr(bad_why, "roof pass -0.01 s") != NULL,
          "a negative roof pass is refused: %s", bad_why);
    t.cells[paired].roof_pass_s = 0;
    ch = (matrix_plan_choice){.repetitions = 1, .min_time_s = 0, .max_time_s = 0};
    /* No calibrated rate for blocked's bandwidth-bound cells: the prior,
     * 10 % of the cell's roof (100 GB/s): 1e9 bytes take 0.1 s. */
    int i = add_cell(&t, V_BLOCKED, 2, 0);
    t.cells[i].bandwidth_bound = 1;
    t.cells[i].bytes = 1e9;
    CHECK(tc, matrix_plan_cell_seconds(&t.in, i, &ch, &s) == 0 && fabs(s - 0.4) < 1e-9,
          "prior for a portable bandwidth-bound cell: %g s", s);
    /* naive's prior is of one thread's roof (50): 3 % of it. */
    i = add_cell(&t, V_NAIVE, 2, 0);
    t.cells[i].bandwidth_bound = 0;
    t.cells[i].flops = 1.5e9;
    t.in.n_rates = 0;
    CHECK(tc, matrix_plan_cell_seconds(&t.in, i, &ch, &s) == 0 && fabs(s - (0.2 + 2.0)) < 1e-9,
          "prior for naive: %g s", s);
}

static void test_everything_fits(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    matrix_plan p;
    char why[200];
    t.in.budget_s = 1e6;
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    CHECK(tc, p.n_skipped == 0 && p.scale == 1.0, "%d skipped at scale %g", p.n_skipped, p.scale);
    CHECK(tc, p.planned_s == p.full_s, "planned %g, full %g", p.planned_s, p.full_s);
    for (int i = 0; i < t.n; i++)
        CHECK(tc, p.choices[i].repetitions == 5 && p.choices[i].max_time_s == 30,
              "cell %d: %d reps, max %g", i, p.choices[i].repetitions, p.choices[i].max_time_s);
    check_plan_consistent(tc, &t, &p);
    matrix_plan_free(&p);
}

/* Budgets between the floor and the full policy: repetitions shrink, no
 * cell is skipped, and the plan uses >= 90 % of the budget. */
static void test_shrink_before_skip(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    matrix_plan p;
    char why[200];
    t.in.budget_s = 1e6;
    matrix_plan_make(&t.in, &p, why, sizeof why);
    const double full = p.full_s, floor = sum_of_floors(&t);
    matrix_plan_free(&p);
    CHECK(tc, floor < 0.85 * full, "the table must leave room to shrink: floor %g, full %g", floor,
          full);
    for (int k = 0; k <= 10; k++) {
        /* k = 0: the floor itself (a hair over it: sums may round apart) */
        t.in.budget_s = floor * (1 + 1e-12) + (full - floor) * k / 10.5;
        CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
        CHECK(tc, p.n_skipped == 0, "budget %g (floor %g): %d cells skipped", t.in.budget_s, floor,
              p.n_skipped);
        CHECK(tc, p.scale < 1.0, "budget %g < full %g yet scale %g", t.in.budget_s, full, p.scale);
        CHECK(tc, p.planned_s >= 0.9 * t.in.budget_s, "budget %g: only %g planned (%.1f %%)",
              t.in.budget_s, p.planned_s, 100 * p.planned_s / t.in.budget_s);
        check_plan_consistent(tc, &t, &p);
        int shrunk = 0;
        for (int i = 0; i < t.n; i++)
            shrunk += p.choices[i].repetitions < policy.repetitions;
        CHECK(tc, k == 0 ? shrunk == t.n : shrunk > 0, "budget %g: %d cells with fewer reps",
              t.in.budget_s, shrunk);
        matrix_plan_free(&p);
    }
}

/* Over the floor: the slow classes' most expensive cells go first, vector
 * cells stay, and the freed time goes back to repetitions. */
static void test_skip_order(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    matrix_plan p;
    char why[200];
    /* Room for everything at the floor but the two biggest naive cells. */
    t.in.budget_s = sum_of_floors(&t) - floor_s(&t, t.n - 1) - 0.5 * floor_s(&t, t.n - 2);
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    CHECK(tc, p.n_skipped == 2 && p.choices[t.n - 1].skipped && p.choices[t.n - 2].skipped,
          "%d skipped; the two largest naive cells: %d %d", p.n_skipped, p.choices[t.n - 1].skipped,
          p.choices[t.n - 2].skipped);
    CHECK(tc, strcmp(p.choices[t.n - 1].reason, "skipped: over budget (est. 4.1 min)") == 0,
          "reason '%s'", p.choices[t.n - 1].reason);
    CHECK(tc, strcmp(p.choices[t.n - 2].reason, "skipped: over budget (est. 2.0 min)") == 0,
          "reason '%s'", p.choices[t.n - 2].reason);
    CHECK(tc, fabs(p.choices[t.n - 1].est_s - 246.0) < 1e-9, "skipped est %g",
          p.choices[t.n - 1].est_s);
    CHECK(tc,
          p.per_variant[V_NAIVE].skipped == 2 && p.per_variant[V_NAIVE].planned == 5 &&
              p.per_variant[V_AVX512].skipped == 0 && p.per_variant[V_BLOCKED].skipped == 0,
          "per variant: naive %d/%d skipped", p.per_variant[V_NAIVE].skipped,
          p.per_variant[V_NAIVE].planned);
    CHECK(tc, p.planned_s >= 0.9 * t.in.budget_s, "planned only %.1f %% of the budget",
          100 * p.planned_s / t.in.budget_s);
    check_plan_consistent(tc, &t, &p);
    matrix_plan_free(&p);

    /* Sweep the budget down: at every step, within each slower variant
     * every skipped cell costs at least as much as every planned one, and
     * a vector cell is skipped only when the slower cells still planned
     * fit in their share of the budget (MATRIX_PLAN_SLOW_SHARE). */
    const double floor = sum_of_floors(&t);
    for (int k = 1; k <= 40; k++) {
        t.in.budget_s = floor * k / 41.0;
        CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
        double min_skipped[N_VARIANTS], max_planned[N_VARIANTS], slow_planned_s = 0;
        int vector_skipped = 0;
        for (int v = 0; v < N_VARIANTS; v++) {
            min_skipped[v] = INFINITY;
            max_planned[v] = 0;
        }
        for (int i = 0; i < t.n; i++) {
            int v = t.cells[i].variant, vec = variants[v].cost_class == MATRIX_COST_VECTOR;
            double f = floor_s(&t, i);
            if (p.choices[i].skipped) {
                vector_skipped += vec;
                min_skipped[v] = fmin(min_skipped[v], f);
            } else {
                slow_planned_s += vec ? 0 : f;
                max_planned[v] = fmax(max_planned[v], f);
            }
        }
        for (int v = 0; v < N_VARIANTS; v++)
            CHECK(tc, max_planned[v] <= min_skipped[v],
                  "budget %g: %s planned %g s while skipping %g s", t.in.budget_s, variants[v].name,
                  max_planned[v], min_skipped[v]);
        CHECK(tc, !vector_skipped || slow_planned_s <= MATRIX_PLAN_SLOW_SHARE * t.in.budget_s,
              "budget %g: %d vector cells skipped while %g s of slower cells planned (share %g s)",
              t.in.budget_s, vector_skipped, slow_planned_s,
              MATRIX_PLAN_SLOW_SHARE * t.in.budget_s);
        check_plan_consistent(tc, &t, &p);
        matrix_plan_free(&p);
    }
}

/* A budget too small even for the vector cells: every slower cell is
 * gone, then the most expensive vector cells, each with its reason. */
/* Identical cells whose time is their repetitions: between 4 and 5 reps a
 * single policy level would leave 14 % of the budget unused; the cells one
 * step up are added back until the budget is full. */
static void test_fill_steps(check_tally *tc)
{
    fake_table t;
    table_init(&t);
    for (int i = 0; i < 50; i++)
        add_cell(&t, V_AVX512, 1, 0.2); /* 4 reps: 1.2 s, 5 reps: 1.4 s */
    t.in.budget_s = 50 * 1.39;
    matrix_plan p;
    char why[200];
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    int at4 = 0, at5 = 0;
    for (int i = 0; i < t.n; i++) {
        at4 += p.choices[i].repetitions == 4;
        at5 += p.choices[i].repetitions == 5;
    }
    CHECK(tc, at4 == 3 && at5 == 47, "%d cells at 4 reps, %d at 5", at4, at5);
    CHECK(tc, p.planned_s >= 0.99 * t.in.budget_s && p.n_skipped == 0,
          "planned %.1f %% of the budget, %d skipped", 100 * p.planned_s / t.in.budget_s,
          p.n_skipped);
    check_plan_consistent(tc, &t, &p);
    matrix_plan_free(&p);
}

static void test_budget_below_fast_cells(check_tally *tc)
{
    fake_table t;
    table_init(&t);
    add_cell(&t, V_NAIVE, 1, 0.001);
    add_cell(&t, V_BLOCKED, 2, 0.001);
    int big = add_cell(&t, V_AVX512, 2, 50); /* floor 100.2 s */
    int mid = add_cell(&t, V_AVX512, 1, 10); /* floor 20.2 s */
    int small = add_cell(&t, V_AVX512, 2, 1);
    t.in.budget_s = 15;
    matrix_plan p;
    char why[200];
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    /* naive's and blocked's one cheap cell each fit their share (0.75 s
     * of the 15 s): kept, while the dear vector cells go. */
    CHECK(tc, !p.choices[0].skipped && !p.choices[1].skipped,
          "the slower variants' cheapest cells stay in their share: skipped %d %d",
          p.choices[0].skipped, p.choices[1].skipped);
    CHECK(tc, p.choices[big].skipped && p.choices[mid].skipped && !p.choices[small].skipped,
          "vector cells skipped: big %d mid %d small %d", p.choices[big].skipped,
          p.choices[mid].skipped, p.choices[small].skipped);
    CHECK(tc, strcmp(p.choices[big].reason, "skipped: over budget (est. 1.7 min)") == 0,
          "reason '%s'", p.choices[big].reason);
    CHECK(tc, strcmp(p.choices[mid].reason, "skipped: over budget (est. 20 s)") == 0, "reason '%s'",
          p.choices[mid].reason);
    /* The small one gets its full policy back: 5 reps of 1 s (6.2 s), beside
     * the two slow cells at the preset's policy (0.701 s each). */
    CHECK(tc, p.choices[small].repetitions == 5 && fabs(p.planned_s - 7.602) < 1e-9,
          "small cell: %d reps, planned %g s", p.choices[small].repetitions, p.planned_s);
    check_plan_consistent(tc, &t, &p);
    matrix_plan_free(&p);

    t.in.budget_s = 1; /* nothing fits */
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    CHECK(tc, p.n_skipped == 5 && p.n_planned == 0 && p.planned_s == 0, "%d skipped, %g s",
          p.n_skipped, p.planned_s);
    matrix_plan_free(&p);
}

/* A plan file holding `text` is refused as EFORMAT with a message that
 * contains each of the NULL-terminated `want` strings. */
static void check_refused(check_tally *tc, const char *path, const char *text, const char *what,
                          const char *const *want)
{
    char why[300] = "";
    FILE *f = fopen(path, "w");
    CHECK(tc, f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
    matrix_plan_saved s;
    int ok = matrix_plan_read(path, &s, why, sizeof why) == MATRIX_PLAN_EFORMAT;
    for (int i = 0; want[i]; i++)
        ok &= strstr(why, want[i]) != NULL;
    CHECK(tc, ok, "%s: '%s'", what, why);
}

/* The per-variant correction: exact numbers from the formula, a variant
 * with no record follows the run, and the factor scales its cells only. */
static void test_factors(check_tally *tc)
{
    const double actual[N_VARIANTS] = {30, 0, 10};
    const double model[N_VARIANTS] = {10, 0, 10};
    double f[N_VARIANTS];
    CHECK(tc, matrix_plan_factors(N_VARIANTS, actual, model, 5, f) == MATRIX_PLAN_OK, "factors");
    const double g = 40.0 / 20.0;
    CHECK(tc, fabs(f[V_NAIVE] - (30 + 5 * g) / 15) < 1e-12, "naive %g", f[V_NAIVE]);
    CHECK(tc, fabs(f[V_BLOCKED] - g) < 1e-12, "no record: the run's %g, got %g", g, f[V_BLOCKED]);
    CHECK(tc, fabs(f[V_AVX512] - (10 + 5 * g) / 15) < 1e-12, "avx512 %g", f[V_AVX512]);
    /* Much done: the variant's own ratio, not the run's. */
    const double a2[N_VARIANTS] = {3000, 0, 500}, m2[N_VARIANTS] = {1000, 0, 1000};
    CHECK(tc, matrix_plan_factors(N_VARIANTS, a2, m2, 1, f) == MATRIX_PLAN_OK, "factors");
    CHECK(tc, fabs(f[V_NAIVE] - 3) < 0.01 && fabs(f[V_AVX512] - 0.5) < 0.01, "own records: %g, %g",
          f[V_NAIVE], f[V_AVX512]);
    const double none[N_VARIANTS] = {0, 0, 0};
    CHECK(tc,
          matrix_plan_factors(N_VARIANTS, none, none, 1, f) == MATRIX_PLAN_OK && f[0] == 1 &&
              f[1] == 1 && f[2] == 1,
          "nothing done: factors 1");
    const double bad[N_VARIANTS] = {-1, 0, 0};
    CHECK(tc, matrix_plan_factors(N_VARIANTS, bad, none, 1, f) == MATRIX_PLAN_EINVAL,
          "a negative record is refused");
    CHECK(tc, matrix_plan_factors(N_VARIANTS, none, none, 0, f) == MATRIX_PLAN_EINVAL,
          "a zero prior weight is refused");

    fake_table t;
    table_init(&t);
    int a = add_cell(&t, V_NAIVE, 1, 0.5), b = add_cell(&t, V_AVX512, 2, 0.5);
    const matrix_plan_choice one = {.repetitions = 1};
    double sa, sb, sa2, sb2;
    matrix_plan_cell_seconds(&t.in, a, &one, &sa);
    matrix_plan_cell_seconds(&t.in, b, &one, &sb);
    const double factor[N_VARIANTS] = {2.0, 1.0, 1.0};
    t.in.time_factor = factor;
    matrix_plan_cell_seconds(&t.in, a, &one, &sa2);
    matrix_plan_cell_seconds(&t.in, b, &one, &sb2);
    CHECK(tc, sa2 == 2 * sa && sb2 == sb, "factor 2 on naive: %g -> %g, avx512 %g -> %g", sa, sa2,
          sb, sb2);
    /* A refit with naive running 2x its model: the same budget buys a
     * smaller policy, and naive's estimates are twice the model's. */
    t.in.time_factor = NULL;
    for (int i = 0; i < 20; i++) {
        add_cell(&t, V_NAIVE, 1, 0.5);
        add_cell(&t, V_AVX512, 2, 0.5);
    }
    t.in.budget_s = 1e6;
    matrix_plan p;
    char why[300];
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    unsigned char done[MAX_CELLS] = {0};
    const double left = 0.75 * p.planned_s;
    CHECK(tc, matrix_plan_refit(&t.in, &p, done, left, 1.0, why, sizeof why) == 0, "%s", why);
    const double scale_uncorrected = p.scale;
    t.in.time_factor = factor;
    CHECK(tc, matrix_plan_refit(&t.in, &p, done, left, 1.0, why, sizeof why) == 0, "%s", why);
    CHECK(tc, p.planned_s <= left * (1 + 1e-12) && p.scale < scale_uncorrected,
          "refit with naive at 2x: %g s of %g, scale %g (uncorrected %g)", p.planned_s, left,
          p.scale, scale_uncorrected);
    int doubled = 1;
    for (int i = 0; i < t.n; i++) {
        matrix_plan_input raw = t.in;
        raw.time_factor = NULL;
        double m;
        matrix_plan_cell_seconds(&raw, i, &p.choices[i], &m);
        const double want = t.cells[i].variant == V_NAIVE ? 2 * m : m;
        doubled &= p.choices[i].skipped || fabs(p.choices[i].est_s - want) <= 1e-12 * want;
    }
    CHECK(tc, doubled, "the refit's estimates carry the factors");
    matrix_plan_free(&p);
}

/* The state lines --resume carries on from: written and read back exactly;
 * a plan without them reads as has_state 0; a damaged one is refused. */
static void test_state_round_trip(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    t.in.budget_s = sum_of_floors(&t);
    matrix_plan p;
    char why[300], path[128];
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    snprintf(path, sizeof path, "/tmp/test_matrix_plan_state.%ld.plan", (long)getpid());
    const double actual[N_VARIANTS] = {12.5, 0, 1.0 / 3}, model[N_VARIANTS] = {10, 0, 0.1};
    const matrix_plan_state st = {567.25, 0.1234567, 1.1e-9, actual, model};
    CHECK(tc, matrix_plan_write_state(path, &t.in, &p, &st, why, sizeof why) == MATRIX_PLAN_OK,
          "%s", why);
    matrix_plan_saved s;
    CHECK(tc, matrix_plan_read(path, &s, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    CHECK(tc,
          s.has_state && s.elapsed_s == st.elapsed_s && s.overhead_s == st.overhead_s &&
              s.setup_per_byte == st.setup_per_byte && s.n_entries == t.n,
          "state read back: has %d elapsed %.17g overhead %.17g setup %.17g", s.has_state,
          s.elapsed_s, s.overhead_s, s.setup_per_byte);
    CHECK(tc, s.n_rates == t.in.n_rates && s.n_records == N_VARIANTS, "%d rates, %d records",
          s.n_rates, s.n_records);
    for (int i = 0; i < s.n_rates && i < t.in.n_rates; i++)
        CHECK(tc,
              strcmp(s.rates[i].variant, variants[t.in.rates[i].variant].name) == 0 &&
                  s.rates[i].threads == t.in.rates[i].threads &&
                  s.rates[i].bandwidth_bound == t.in.rates[i].bandwidth_bound &&
                  s.rates[i].rate == t.in.rates[i].rate,
              "rate %d read back differs", i);
    for (int v = 0; v < s.n_records && v < N_VARIANTS; v++)
        CHECK(tc,
              strcmp(s.records[v].variant, variants[v].name) == 0 &&
                  s.records[v].actual_s == actual[v] && s.records[v].model_s == model[v],
              "record %d read back differs: %.17g %.17g", v, s.records[v].actual_s,
              s.records[v].model_s);
    matrix_plan_saved_free(&s);
    CHECK(tc, matrix_plan_write(path, &t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    CHECK(tc, matrix_plan_read(path, &s, why, sizeof why) == MATRIX_PLAN_OK && !s.has_state,
          "a plan without state reads as has_state %d", s.has_state);
    matrix_plan_saved_free(&s);
    check_refused(tc, path,
                  "# attnbench matrix plan 1\n# state elapsed_s=-3 overhead_s=0 setup_per_byte=0\n",
                  "negative elapsed", (const char *const[]){"line 2", "elapsed_s", NULL});
    check_refused(tc, path,
                  "# attnbench matrix plan 1\n# rate variant=avx2 threads=2 bandwidth=2 rate=1\n",
                  "bad rate line", (const char *const[]){"line 2", "rate", NULL});
    remove(path);
    matrix_plan_free(&p);
}

static void test_file_round_trip(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    t.in.budget_s = 0.5 * sum_of_floors(&t); /* skips and shrunk reps */
    matrix_plan p, fresh;
    char why[300], path[128];
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    CHECK(tc, p.n_skipped > 0 && p.scale < 1, "want skips (%d) and a scale < 1 (%g)", p.n_skipped,
          p.scale);
    snprintf(path, sizeof path, "/tmp/test_matrix_plan.%ld.plan", (long)getpid());
    CHECK(tc, matrix_plan_write(path, &t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    matrix_plan_saved saved;
    CHECK(tc, matrix_plan_read(path, &saved, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    CHECK(tc, saved.n_entries == t.n && saved.budget_s == t.in.budget_s, "%d entries, budget %g",
          saved.n_entries, saved.budget_s);
    for (int i = 0; i < t.n; i++) {
        const matrix_plan_choice *c = NULL, *o = &p.choices[i];
        int rc = matrix_plan_saved_find(&saved, t.cells[i].case_name, t.cells[i].threads, &c);
        CHECK(tc, rc == MATRIX_PLAN_OK, "cell %s threads=%d not found", t.cells[i].case_name,
              t.cells[i].threads);
        if (rc != MATRIX_PLAN_OK)
            continue;
        CHECK(tc,
              c->skipped == o->skipped && c->repetitions == o->repetitions &&
                  c->min_time_s == o->min_time_s && c->max_time_s == o->max_time_s &&
                  c->est_s == o->est_s && strcmp(c->reason, o->reason) == 0,
              "cell %d read back differs: reps %d/%d min %.17g/%.17g est %.17g/%.17g", i,
              c->repetitions, o->repetitions, c->min_time_s, o->min_time_s, c->est_s, o->est_s);
    }
    const matrix_plan_choice *none;
    CHECK(tc,
          matrix_plan_saved_find(&saved, t.cells[0].case_name, 99, &none) == MATRIX_PLAN_ENOTFOUND,
          "a thread count not in the plan is found");

    /* --resume with a different budget keeps the saved choices. */
    t.in.budget_s *= 3;
    CHECK(tc, matrix_plan_make(&t.in, &fresh, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    int missing = -1;
    CHECK(tc,
          matrix_plan_apply_saved(&t.in, &fresh, &saved, &missing) == MATRIX_PLAN_OK &&
              missing == 0,
          "%d cells missing", missing);
    CHECK(tc,
          fresh.planned_s == p.planned_s && fresh.n_skipped == p.n_skipped &&
              memcmp(fresh.choices, p.choices, sizeof *p.choices * (size_t)t.n) == 0,
          "resumed plan differs: %g s vs %g s", fresh.planned_s, p.planned_s);
    matrix_plan_free(&fresh);
    matrix_plan_saved_free(&saved);

    /* A foreign or damaged file is refused with its line number. */
    check_refused(tc, path,
                  "# attnbench matrix plan 1\nimpl=x threads=1 reps=2 min_time=0 max_time=1\n",
                  "damaged file", (const char *const[]){"line 2", NULL});
    check_refused(tc, path, "case,variant\n", "foreign file",
                  (const char *const[]){"not an attnbench plan", NULL});
    check_refused(tc, path,
                  "# attnbench matrix plan 1\na threads=1 reps=2 min_time=0 max_time=1 est_s=1\n"
                  "a threads=1 reps=3 min_time=0 max_time=1 est_s=1\n",
                  "duplicate", (const char *const[]){"twice", NULL});
    remove(path);
    CHECK(tc, matrix_plan_read(path, &saved, why, sizeof why) == MATRIX_PLAN_EIO, "missing: '%s'",
          why);

    char plan_path[64];
    CHECK(tc,
          matrix_plan_path("results/x/matrix.csv", plan_path, sizeof plan_path) == 0 &&
              strcmp(plan_path, "results/x/matrix.plan") == 0,
          "plan path '%s'", plan_path);
    matrix_plan_free(&p);
}

static void test_remaining(check_tally *tc)
{
    fake_table t;
    table_init(&t);
    add_cell(&t, V_AVX512, 1, 1);
    add_cell(&t, V_AVX512, 1, 2);
    add_cell(&t, V_NAIVE, 1, 100);
    t.in.budget_s = 20; /* naive skipped; the others at the full policy */
    matrix_plan p;
    char why[200];
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    double left = -1;
    unsigned char done[3] = {1, 0, 0};
    CHECK(tc, matrix_plan_remaining_s(&p, NULL, &left) == 0 && left == p.planned_s,
          "nothing done: %g of %g", left, p.planned_s);
    CHECK(tc,
          matrix_plan_remaining_s(&p, done, &left) == 0 &&
              fabs(left - p.choices[1].est_s) < 1e-12 && fabs(left - 12.2) < 1e-9,
          "first done: %g left", left);
    /* The first cell (6.2 s estimated) took 12.4 s: the rest will too. */
    double eta = -1, ratio = -1;
    CHECK(tc,
          matrix_plan_eta_s(&p, done, 12.4, &eta, &ratio) == 0 && fabs(ratio - 2.0) < 1e-12 &&
              fabs(eta - 2 * 12.2) < 1e-9,
          "corrected ETA %g (ratio %g)", eta, ratio);
    CHECK(tc,
          matrix_plan_eta_s(&p, NULL, 5.0, &eta, &ratio) == 0 && ratio == 1.0 && eta == p.planned_s,
          "nothing done: ETA %g ratio %g", eta, ratio);
    matrix_plan_free(&p);
}

/* Mid-run: a run going twice as slow as planned re-plans what is left to
 * half the model seconds; the cells done keep their choices. */
static void test_refit(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    t.in.budget_s = 0.5 * sum_of_floors(&t);
    matrix_plan p;
    char why[200];
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_OK, "%s", why);
    matrix_plan_choice before[MAX_CELLS];
    memcpy(before, p.choices, sizeof *before * (size_t)t.n);
    unsigned char done[MAX_CELLS] = {0};
    double done_s = 0;
    for (int i = 0; i < t.n; i += 2) {
        done[i] = 1;
        if (!p.choices[i].skipped)
            done_s += p.choices[i].est_s;
    }
    double left_before;
    matrix_plan_remaining_s(&p, done, &left_before);
    CHECK(tc, matrix_plan_refit(&t.in, &p, done, left_before, 2.0, why, sizeof why) == 0, "%s",
          why);
    double left_after;
    matrix_plan_remaining_s(&p, done, &left_after);
    CHECK(tc, left_after <= 0.5 * left_before * (1 + 1e-9) && left_after >= 0.45 * left_before,
          "remaining %g s after a 2x refit of %g s", left_after, left_before);
    int kept = 1;
    for (int i = 0; i < t.n; i += 2)
        kept &= memcmp(&before[i], &p.choices[i], sizeof before[i]) == 0;
    CHECK(tc, kept, "a done cell's choice changed");
    CHECK(tc, fabs(p.planned_s - (done_s + left_after)) < 1e-9 && p.planned_s <= p.budget_s,
          "planned %g, done %g + left %g, budget %g", p.planned_s, done_s, left_after, p.budget_s);
    /* Ahead of schedule: a cell skipped before may come back. */
    int skipped_before = 0, skipped_after = 0;
    for (int i = 1; i < t.n; i += 2)
        skipped_before += p.choices[i].skipped;
    CHECK(tc, matrix_plan_refit(&t.in, &p, done, 1e6, 1.0, why, sizeof why) == 0, "%s", why);
    for (int i = 1; i < t.n; i += 2)
        skipped_after += p.choices[i].skipped;
    CHECK(tc, skipped_before > 0 && skipped_after == 0, "skipped %d -> %d with time to spare",
          skipped_before, skipped_after);
    /* No time left: everything not done is skipped, with its reason. */
    CHECK(tc, matrix_plan_refit(&t.in, &p, done, 0, 1.0, why, sizeof why) == 0, "%s", why);
    CHECK(tc, p.choices[1].skipped && strncmp(p.choices[1].reason, "skipped: over budget", 20) == 0,
          "cell 1 after a refit with no time: '%s'", p.choices[1].reason);
    matrix_plan_free(&p);
}

static void test_print(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    t.in.budget_s = 0.5 * sum_of_floors(&t);
    matrix_plan p;
    char why[200];
    matrix_plan_make(&t.in, &p, why, sizeof why);
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    CHECK(tc, f && matrix_plan_print(f, "matrix: ", &t.in, &p) == MATRIX_PLAN_OK, "print failed");
    if (f)
        fclose(f);
    fputs(buf, stdout);
    CHECK(tc, strstr(buf, "matrix: plan: budget ") == buf, "first line: %s", buf);
    CHECK(tc,
          strstr(buf, "skipped over budget") && strstr(buf, "scaled to") && strstr(buf, "naive") &&
              strstr(buf, "serial_reference") && strstr(buf, "avx512"),
          "summary lacks a part: %s", buf);
    matrix_plan_free(&p);
}

static void test_bad_input(check_tally *tc)
{
    fake_table t;
    mixed_table(&t);
    matrix_plan p;
    char why[200];
    t.in.budget_s = 0;
    CHECK(tc, matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_EINVAL, "budget 0");
    t.in.budget_s = 100;
    t.cells[3].variant = 7;
    CHECK(tc,
          matrix_plan_make(&t.in, &p, why, sizeof why) == MATRIX_PLAN_EINVAL &&
              strstr(why, "cell 3") != NULL,
          "variant out of range: '%s'", why);
}

static void test_budget_parser(check_tally *tc)
{
    static const struct {
        const char *text;
        double seconds;
    } good[] = {{"30m", 1800},     {"90s", 90},  {"1.5h", 5400},   {"2h30m", 9000},
                {"1h0m30s", 3630}, {"0.5m", 30}, {"45m30s", 2730}, {"1h15s", 3615}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double s = -1;
        char why[200] = "";
        int rc = matrix_plan_parse_budget("--budget", good[i].text, &s, why, sizeof why);
        CHECK(tc, rc == MATRIX_PLAN_OK && fabs(s - good[i].seconds) < 1e-9, "'%s' -> %g (%s)",
              good[i].text, s, why);
    }
    static const char *const bad[] = {"30",   "",    "m",    "-5m", "1.2.3h", "30x",   "30 m",
                                      "5s3m", "2hh", "1e3s", "0s",  "0.1s",   "9999h", "m30"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double s = -1;
        char why[200] = "", quoted[64];
        int rc = matrix_plan_parse_budget("--budget", bad[i], &s, why, sizeof why);
        snprintf(quoted, sizeof quoted, "--budget '%s'", bad[i]);
        CHECK(tc, rc == MATRIX_PLAN_EINVAL && s == -1 && strstr(why, quoted) != NULL,
              "'%s' accepted or message does not name it: rc %d, '%s'", bad[i], rc, why);
    }
    char why[200];
    double s;
    matrix_plan_parse_budget("--budget", "30", &s, why, sizeof why);
    CHECK(tc, strstr(why, "needs a unit") != NULL, "bare number: '%s'", why);
    matrix_plan_parse_budget("--budget", "2h30x", &s, why, sizeof why);
    CHECK(tc, strstr(why, "'x' is not a unit") != NULL, "bad unit: '%s'", why);
    matrix_plan_parse_budget("--budget", "5s3m", &s, why, sizeof why);
    CHECK(tc, strstr(why, "'m' out of order") != NULL, "order: '%s'", why);
}

/* A row's paired roof is the best of its passes: a pass a neighbour
 * slowed must not pull the roof under the row, whatever their count. */
static void test_roof_of_passes(check_tally *tc)
{
    const double stolen[] = {82.3, 214.0, 79.5};
    CHECK(tc, matrix_roof_of_passes(stolen, 3) == 214.0, "best of 3 passes: %g",
          matrix_roof_of_passes(stolen, 3));
    const double one_good[] = {25.3, 24.8, 26.1, 25.0, 40.4};
    CHECK(tc, matrix_roof_of_passes(one_good, 5) == 40.4, "best of 5 passes, the last: %g",
          matrix_roof_of_passes(one_good, 5));
    const double junk[] = {NAN, -1.0, 0.0, INFINITY, 33.0};
    CHECK(tc, matrix_roof_of_passes(junk, 5) == 33.0,
          "NaN, Inf and non-positive passes skipped: %g", matrix_roof_of_passes(junk, 5));
    CHECK(tc, isnan(matrix_roof_of_passes(junk, 4)), "no usable pass: NaN, not %g",
          matrix_roof_of_passes(junk, 4));
    CHECK(tc, isnan(matrix_roof_of_passes(NULL, 0)), "no pass: NaN");

    /* The setter every paired row goes through: 3 passes given, none
     * added (a real pass of this CPU's FMA roof reads far above 30); one
     * pass given, the probe's own passes added until there are 3 (each a
     * real figure, finite and positive; not above any floor: a 2 ms pass
     * a neighbour preempts reads what it reads, 0.37 GFLOP/s once under
     * ASan in a CI run). */
    attn_roof_probe probe;
    char why[128] = "";
    if (attn_roof_probe_compute(&probe, ATTN_ROOF_FMA, 0, 1, 0.002, why, sizeof why) != 0) {
        CHECK(tc, 0, "FMA roof probe: %s", why);
        return;
    }
    double passes[3 + MATRIX_PLAN_MIN_ROOF_PASSES] = {10.0, 30.0, 20.0};
    attn_result_row row = {0};
    matrix_set_paired_roof(&row, &probe, passes, 3);
    CHECK(tc, row.peak_gflops == 30.0 && strcmp(row.roof_source, "paired") == 0,
          "3 passes: their best, none added: %g (%s)", row.peak_gflops, row.roof_source);
    passes[0] = passes[1] = passes[2] = NAN;
    matrix_set_paired_roof(&row, &probe, passes, 1);
    CHECK(tc, isfinite(passes[1]) && passes[1] > 0.0 && isfinite(passes[2]) && passes[2] > 0.0,
          "1 pass: 2 of the probe's added: %g, %g", passes[1], passes[2]);
    CHECK(tc, row.peak_gflops == fmax(passes[1], passes[2]), "1 pass: the best of 3: %g",
          row.peak_gflops);

    /* A row above its roof: more passes until one reaches it (a real pass
     * reads far above 2 GFLOP/s), then judged again; a row within its roof
     * takes none; a row above any pass takes them all and stays flagged. */
    attn_result_row above = {.peak_gflops = 1.0, .gflops = 2.0};
    snprintf(above.limit, sizeof above.limit, "fma");
    matrix_judge_roof(&above);
    const int taken = matrix_recheck_roof(&above, &probe);
    CHECK(tc,
          taken >= 1 && taken <= MATRIX_ROOF_RECHECK_PASSES && above.peak_gflops >= 2.0 &&
              !above.roof_exceeded && above.pct_peak <= 100.0,
          "above its roof: %d passes, roof %g, %g %%, flag %d", taken, above.peak_gflops,
          above.pct_peak, above.roof_exceeded);
    attn_result_row within = {.peak_gflops = 4.0, .gflops = 2.0};
    snprintf(within.limit, sizeof within.limit, "fma");
    matrix_judge_roof(&within);
    CHECK(tc, matrix_recheck_roof(&within, &probe) == 0 && within.peak_gflops == 4.0,
          "within its roof: no pass, roof kept at %g", within.peak_gflops);
    attn_result_row beyond = {.peak_gflops = 1.0, .gflops = 1e12};
    snprintf(beyond.limit, sizeof beyond.limit, "fma");
    matrix_judge_roof(&beyond);
    CHECK(tc,
          matrix_recheck_roof(&beyond, &probe) == MATRIX_ROOF_RECHECK_PASSES &&
              beyond.roof_exceeded && beyond.peak_gflops > 1.0,
          "above every pass: all passes, still flagged (roof %g)", beyond.peak_gflops);
}

/* A decode row (one query row, d_k = d_v = d, f32 Q and O) for the side tests. */
static attn_result_row decode_row(int32_t heads_q, int32_t heads_kv, int32_t n_kv, int32_t d,
                                  int32_t kv_type, int threads)
{
    attn_result_row row;
    attn_result_row_init(&row);
    row.shape = (attn_shape){.batch = 1,
                             .heads_q = heads_q,
                             .heads_kv = heads_kv,
                             .n_q = 1,
                             .n_kv = n_kv,
                             .d_k = d,
                             .d_v = d};
    row.types = (attn_types){ATTN_F32, kv_type, ATTN_F32};
    row.threads = threads;
    return row;
}

/* A decode row's side from the two roofs measured beside it. The figures
 * of a Zen 4 VM's f16-cache decode (Hq 32 / Hkv 8, d 128, n_kv 32768, 2
 * threads, 3.90 ms a call, 4 flops a byte): its run began at a read roof
 * of 67.8 GB/s, where the flops (234.9 GFLOP/s) bind, while the passes
 * beside it read 37.5 GB/s, where its bytes do. A decode row with any
 * roof timed beside it takes its side from its two columns; prefill
 * never leaves the FMA roof. */
static void test_settle_side(check_tally *tc)
{
    attn_result_row row = decode_row(32, 8, 32768, 128, ATTN_F16, 2);
    row.peak_gflops = 234.857;
    row.peak_gbytes_per_s = 67.8459; /* the run's: its ridge 3.46 flops a byte */
    matrix_settle_side(&row);
    CHECK(tc, strcmp(row.limit, "fma") == 0, "ridge 3.46, 4 flops a byte: %s", row.limit);
    row.peak_gbytes_per_s = 37.4521; /* beside the row: ridge 6.27 */
    matrix_settle_side(&row);
    CHECK(tc, strcmp(row.limit, "bandwidth") == 0, "ridge 6.27: %s", row.limit);

    const double ns = 3902710.0;
    row.gflops = attn_perf_flops(&row.shape) / ns;
    row.gbytes_per_s = attn_perf_bytes(&row.shape, &row.types) / ns;
    /* Probes that are never passed: the row is within its roofs, so no
     * recheck runs one (matrix_recheck_roof). */
    const attn_roof_probe compute = {.bandwidth = 0}, read = {.bandwidth = 1};
    snprintf(row.limit, sizeof row.limit, "fma"); /* the run's peaks' choice */
    const matrix_row_probes both = {&compute, &read};
    matrix_judge_paired(&row, &both);
    CHECK(tc, strcmp(row.limit, "bandwidth") == 0 && fabs(row.pct_peak - 91.85) < 0.05,
          "both probes: settled on the read roof, %s %.2f%%", row.limit, row.pct_peak);
    snprintf(row.limit, sizeof row.limit, "fma");
    const matrix_row_probes one = {&compute, NULL};
    matrix_judge_paired(&row, &one);
    CHECK(tc, strcmp(row.limit, "bandwidth") == 0, "one probe: still its columns' side, %s",
          row.limit);
    row.peak_gbytes_per_s = 67.8459;
    snprintf(row.limit, sizeof row.limit, "bandwidth");
    matrix_judge_paired(&row, &one);
    CHECK(tc, strcmp(row.limit, "fma") == 0 && fabs(row.pct_peak - 58.57) < 0.05,
          "one probe, the run's read roof in its column: %s %.2f%%", row.limit, row.pct_peak);
    snprintf(row.limit, sizeof row.limit, "bandwidth");
    matrix_judge_paired(&row, NULL);
    CHECK(tc, strcmp(row.limit, "bandwidth") == 0, "no probe (--roof run): the side kept, %s",
          row.limit);

    /* Prefill never goes to the read roof, whatever the two read. */
    row.shape.n_q = row.shape.n_kv = 4096;
    row.peak_gbytes_per_s = 1e-3;
    matrix_settle_side(&row);
    CHECK(tc, strcmp(row.limit, "fma") == 0, "prefill: %s", row.limit);
}

/* A recheck that raises a roof can move a decode row to the other side,
 * where it may stand above that roof too: then that roof gets its
 * recheck as well, not a flag. One head per K/V head (0.5 flops a byte)
 * with both roof columns at stolen passes: on the FMA side at 200 %
 * first; the FMA recheck (real passes: far above 0.002 GFLOP/s) puts it
 * on the read side at 133 %; the read recheck (real passes over 1 MiB
 * arrays) ends it within its roof, on the side its two raised roofs give
 * (the read side here; under ASan, whose FMA passes read ~4 GFLOP/s
 * beside ~14 GB/s, the FMA side). */
static void test_recheck_moves_side(check_tally *tc)
{
    attn_roof_probe compute, read;
    char why[128] = "";
    if (attn_roof_probe_compute(&compute, ATTN_ROOF_FMA, 0, 1, 0.002, why, sizeof why) != 0) {
        CHECK(tc, 0, "FMA roof probe: %s", why);
        return;
    }
    attn_peak_stream arrays;
    if (attn_peak_stream_alloc(&arrays, (size_t)1 << 20, ATTN_PAGES_BASE) != 0) {
        CHECK(tc, 0, "1 MiB read arrays");
        return;
    }
    attn_peak_stream_touch(&arrays, 1);
    attn_roof_probe_read(&read, &arrays, NULL, 1);
    attn_result_row row = decode_row(8, 8, 4096, 64, ATTN_F32, 1);
    row.gflops = 2e-3;
    row.gbytes_per_s = row.gflops * attn_perf_bytes(&row.shape, &row.types) /
                       attn_perf_flops(&row.shape); /* 4e-3 */
    row.peak_gflops = 1e-3;
    row.peak_gbytes_per_s = 3e-3;
    snprintf(row.roof_source, sizeof row.roof_source, "paired");
    const matrix_row_probes both = {&compute, &read};
    matrix_judge_paired(&row, &both);
    attn_result_row by_columns = row;
    matrix_settle_side(&by_columns);
    CHECK(tc,
          strcmp(row.limit, by_columns.limit) == 0 && !row.roof_exceeded &&
              row.peak_gflops > 2e-3 && row.peak_gbytes_per_s > 4e-3 && row.pct_peak <= 100.0,
          "FMA recheck, then the read side's: %s %.3g%%, flag %d, roofs %g / %g", row.limit,
          row.pct_peak, row.roof_exceeded, row.peak_gflops, row.peak_gbytes_per_s);
    attn_peak_stream_free(&arrays);
}

/* A row's probes come from the run's slots: a decode row asks for both
 * roofs, a prefill row for its limit's only; one that cannot be made
 * (no free slot, or a roof this CPU cannot measure) is NULL with its
 * reason, and the row's note names which column kept the run's figure.
 * Every slot is filled by hand, so no probe runs here. */
static void test_roofs_for_row(check_tally *tc)
{
    static matrix_roofs roofs; /* 24 slots of probes: not on the stack */
    attn_peak pk;
    memset(&pk, 0, sizeof pk);
    matrix_roofs_init(&roofs, &pk, 1 << 20, ATTN_PAGES_BASE, 2);
    roofs.n = MATRIX_ROOF_SLOTS;
    for (int i = 0; i < MATRIX_ROOF_SLOTS; i++)
        roofs.slot[i] = (matrix_roof_slot){.bandwidth = 0, .threads = 100 + i, .ok = 1};
    roofs.slot[0] = (matrix_roof_slot){.bandwidth = 1, .threads = 2, .ok = 1}; /* read, 2 */
    const attn_result_row decode = decode_row(32, 8, 32768, 128, ATTN_F32, 2);
    attn_shape prefill = decode.shape;
    prefill.n_q = 4096;
    const char *no_limit = "unset", *no_other = "unset";
    char note[512] = "";

    /* No slot left for the decode row's compute roof. */
    matrix_row_probes p =
        matrix_roofs_for_row(&roofs, 1, ATTN_ROOF_FMA, 2, &decode.shape, &no_limit, &no_other);
    CHECK(tc,
          p.limit == &roofs.slot[0].probe && p.other == NULL && no_limit == NULL && no_other &&
              strstr(no_other, "more roofs") != NULL,
          "decode, no slot for its other roof: limit %d, other %p (%s)",
          p.limit == &roofs.slot[0].probe, (const void *)p.other, no_other ? no_other : "-");
    CHECK(tc,
          matrix_unpaired_note(note, sizeof note, "decode", 2, 1, no_limit, no_other) == 1 &&
              strstr(note, "keeps the run's compute roof beside its paired read roof") != NULL,
          "its note names the column kept: %s", note);

    /* A prefill row asks for its limit's roof only: nothing to note. */
    p = matrix_roofs_for_row(&roofs, 1, ATTN_ROOF_FMA, 2, &prefill, &no_limit, &no_other);
    CHECK(tc,
          p.limit == &roofs.slot[0].probe && p.other == NULL && !no_limit && !no_other &&
              matrix_unpaired_note(note, sizeof note, "prefill", 2, 1, NULL, NULL) == 0,
          "prefill: the limit's probe alone, no note");

    /* The other roof in a slot: both probes; one this CPU cannot measure:
     * NULL with the slot's reason. */
    roofs.slot[1] = (matrix_roof_slot){.bandwidth = 0, .threads = 2, .ok = 1};
    p = matrix_roofs_for_row(&roofs, 1, ATTN_ROOF_FMA, 2, &decode.shape, &no_limit, &no_other);
    CHECK(tc, p.limit == &roofs.slot[0].probe && p.other == &roofs.slot[1].probe && !no_other,
          "decode with both slots: both probes");
    roofs.slot[1].ok = 0;
    snprintf(roofs.slot[1].why, sizeof roofs.slot[1].why, "no such roof here");
    p = matrix_roofs_for_row(&roofs, 1, ATTN_ROOF_FMA, 2, &decode.shape, &no_limit, &no_other);
    CHECK(tc, p.other == NULL && no_other && strcmp(no_other, "no such roof here") == 0,
          "decode whose other roof cannot be measured: %s", no_other ? no_other : "-");

    /* No probe for the limit (no slot at 3 threads): the other is not
     * asked for, and the note says the row keeps the run's roof. */
    p = matrix_roofs_for_row(&roofs, 0, ATTN_ROOF_FMA, 3, &decode.shape, &no_limit, &no_other);
    CHECK(tc,
          !p.limit && !p.other && no_limit && !no_other &&
              matrix_unpaired_note(note, sizeof note, "decode", 3, 0, no_limit, no_other) == 1 &&
              strstr(note, "threads=3 keeps the run's roof: more roofs") != NULL,
          "no limit probe: %s", note);
}

int main(void)
{
    check_tally tc = {0};
    test_cell_model(&tc);
    test_everything_fits(&tc);
    test_shrink_before_skip(&tc);
    test_skip_order(&tc);
    test_fill_steps(&tc);
    test_budget_below_fast_cells(&tc);
    test_file_round_trip(&tc);
    test_remaining(&tc);
    test_refit(&tc);
    test_factors(&tc);
    test_state_round_trip(&tc);
    test_print(&tc);
    test_bad_input(&tc);
    test_budget_parser(&tc);
    test_roof_of_passes(&tc);
    test_settle_side(&tc);
    test_recheck_moves_side(&tc);
    test_roofs_for_row(&tc);
    return check_report("matrix_plan", &tc);
}
