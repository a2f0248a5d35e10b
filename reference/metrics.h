/* docs/accuracy.md's metrics and pass rules A and C, accumulated row by row. */
#ifndef ATTN_METRICS_H
#define ATTN_METRICS_H

#include "reference.h"

/* What the harness fills O with before a run (a signalling NaN with a
 * payload no arithmetic produces): an element still holding it was never
 * written, which no rule may mistake for an expected NaN. */
#define ATTN_UNSET_BITS 0x7FA00001u

typedef struct attn_err_stats {
    double e_m;         /* max |ô-o| / M_ic, in u */
    double e_d;         /* max |ô-o| / D_ic, in u */
    double sq_err;      /* sum (ô-o)^2 */
    double sq_ref;      /* sum o^2 */
    double max_ulp;     /* in ulps of O's type, against o rounded to it, for |o| >= 2^-10 M_ic */
    double worst_ratio; /* max |ô-o| / bound (rule A passes while <= 1) */
    double bound_u;     /* the bound in u*M at the element of worst_ratio */
    long elements;      /* elements checked against rule A */
    long rows_skipped;  /* rows that see an Inf: only "no crash" is asked */
    long failures;      /* rule A and rule C violations */
    char first_failure[320];
} attn_err_stats;

void attn_err_init(attn_err_stats *e);

/* The precision class of a run (docs/accuracy.md, "Precision classes"): what
 * rule A adds to the f32 bound and what rule C's ulps are counted in. */
typedef struct attn_err_class {
    int32_t o_type;  /* O's type: its rounding term, its underflow floor, its ulps */
    int32_t p_round; /* 0 (f32): "P in f32"; 1 f16 / 2 bf16: "P rounded to t" */
} attn_err_class;

/* Checks one output row of a variant against the reference row `r`.
 * exp_ulps and rescales are rule A's c_exp and r; `got` is O's row widened
 * to float (exact for f16/bf16); cls NULL means f32 throughout. */
void attn_err_row(attn_err_stats *e, const attn_ref_input *in, int32_t b, int32_t h, int32_t i,
                  const attn_ref_row *r, const float *got, int exp_ulps, int rescales,
                  const attn_err_class *cls);

/* Unit roundoff of type t (2^-24, 2^-11, 2^-8) and its underflow floor
 * (half its smallest subnormal: 2^-150, 2^-25, 2^-134). */
double attn_err_unit_roundoff(int32_t type);
double attn_err_underflow_floor(int32_t type);

/* Folds `src` into `dst` (max of maxima, sums of sums, first failure kept). */
void attn_err_merge(attn_err_stats *dst, const attn_err_stats *src);

double attn_err_nmse(const attn_err_stats *e);

/* Rule B: over the seeds of a case, a variant's max E_M (in u) is at most
 * 4 x naive float32's + 16u. */
static inline int attn_rule_b_holds(double e_m_variant, double e_m_naive)
{
    return e_m_variant <= 4.0 * e_m_naive + 16.0;
}

#endif
