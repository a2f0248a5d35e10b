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
    int *plan_of;        /* matrix cell -> plan cell, -1: not planned (skipped by rule) */
    unsigned char *done; /* per plan cell */
    int64_t start_ns, deadline_ns;
    double next_refit_s; /* of the plan's estimate: re-plan when this much is done */
    double refit_step_s; /* a tenth of the first plan: refits shrink the plan, not the step */
    char path[400];      /* FILE.plan */
    int resumed;         /* the choices came from FILE.plan: keep them as they are */
} matrix_budget;

/* Calibrates every variant at every thread count the cells use (skipped on
 * --resume with a readable FILE.plan, whose choices are kept), plans the
 * cells into what is left of the budget since `t_start_ns`, writes
 * FILE.plan, prints the plan and points each cell's `plan` at its choice.
 * Returns 0, or -1 with the problem printed. */
int matrix_budget_plan(matrix_budget *b, const matrix_opts *o, matrix_cell *cells, int n,
                       const attn_peak *pk, int all, int64_t t_start_ns);

/* After matrix cell i was written: mark it done, and every tenth of the
 * plan re-plan the cells still to run to the time left (FILE.plan too). */
void matrix_budget_cell_done(matrix_budget *b, int i);

void matrix_budget_free(matrix_budget *b);

#endif
