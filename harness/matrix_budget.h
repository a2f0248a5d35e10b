/* matrix --budget: calibrate, plan (harness/matrix_plan.h), follow the
 * plan cell by cell and re-plan what is left every tenth of the way, so a
 * run ends within its budget. */
#ifndef ATTN_MATRIX_BUDGET_H
#define ATTN_MATRIX_BUDGET_H

#include <stdint.h>

#include "matrix.h"
#include "matrix_plan.h"

/* What the plan's input points at, and the run's progress through it. */
typedef struct matrix_budget {
    matrix_plan_input in;
    matrix_plan plan;
    matrix_plan_variant variants[MATRIX_MAX_VARIANTS];
    matrix_plan_cell *cells;
    int *cell_of; /* plan cell -> matrix cell */
    matrix_plan_rate *rates;
    int n_rates;
    int *plan_of;              /* matrix cell -> plan cell, -1: not planned (skipped by rule) */
    unsigned char *done;       /* per plan cell */
    int64_t deadline_ns;       /* the variants' cells: their share of the budget */
    int64_t peers_deadline_ns; /* the peers' cells (--peers): the rest of it */
    double next_refit_s;       /* of the plan's estimate: re-plan when this much is done */
    double refit_step_s;       /* a tenth of the first plan: refits shrink the plan, not the step */
    char path[400];            /* FILE.plan */
    /* FILE.plan had no state line (an older plan): its choices are kept as
     * they are, no re-planning. */
    int resumed;
    double setup_per_byte;   /* the model's, for FILE.plan */
    double elapsed_before_s; /* --resume: wall time the runs before this one spent */
    int64_t t_start_ns;      /* this run's start, its peaks included */
    int64_t last_done_ns;    /* when the previous cell finished */
    /* Per variant: wall seconds of its finished cells and what the
     * uncorrected model said for them (matrix_plan_factors), the factors
     * the last re-plan used. */
    double actual_s[MATRIX_MAX_VARIANTS], model_s[MATRIX_MAX_VARIANTS];
    double factor[MATRIX_MAX_VARIANTS];
} matrix_budget;

/* Calibrates every variant at every thread count the cells use, plans the
 * cells into the variants' share of what is left of the budget since
 * `t_start_ns` (with --peers an equal share per variant and peer; the
 * rest, to peers_deadline_ns, is the peers'), writes FILE.plan, prints the
 * plan and points each cell's `plan` at its choice.
 * On --resume with a readable FILE.plan there is no calibration: the run
 * carries on the saved plan - its choices, its model, each variant's
 * record so far - with the wall time the earlier runs spent taken off the
 * budget, and re-plans the cells left to the time left at once, as the
 * first run would have at its next check. Returns 0, or -1 with the
 * problem printed. */
int matrix_budget_plan(matrix_budget *b, const matrix_opts *o, matrix_cell *cells, int n,
                       const attn_peak *pk, int all, int64_t t_start_ns);

/* After matrix cell i was written: mark it done, add its wall time to
 * its variant's record, and every tenth of the plan re-plan the cells
 * still to run to the time left (FILE.plan too). */
void matrix_budget_cell_done(matrix_budget *b, int i);

/* Writes FILE.plan with the state (the wall time spent so far included),
 * so a later --resume carries on from here. At the end of a run, and from
 * the interrupt handling thread (matrix_sidecar_on_interrupt). */
void matrix_budget_save(matrix_budget *b);

void matrix_budget_free(matrix_budget *b);

#endif
