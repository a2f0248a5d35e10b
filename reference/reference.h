/* The double-precision reference, row by row, with what ACCURACY.md's
 * rule A needs alongside each output element. */
#ifndef ATTN_REFERENCE_H
#define ATTN_REFERENCE_H

#include "variant.h"

typedef struct attn_ref_row {
    double *o;       /* [d_v] the reference output */
    double *D;       /* [d_v] D_ic = sum_j p_ij |v_jc| */
    double *M;       /* [d_v] M_ic = max_j |v_jc| over the keys the row sees */
    double *scores;  /* [n_kv] scratch: scaled scores, then weights p_ij */
    double sigma;    /* (d_k + 2) u |scale| max_j sum_t |q_it k_jt| */
    int32_t n_seen;  /* keys the row sees */
    int32_t top_key; /* the key with the largest score (-1 when none) */
    double top_gap;  /* largest minus second-largest score (inf with one key) */
    int nan_in_qk;   /* NaN in the q row or in a K row the row sees */
    int inf_seen;    /* +-Inf in the q row or in a K/V row the row sees */
} attn_ref_row;

/* Fills `r` (whose arrays the caller provides) for query row i of batch b,
 * query head h. */
void attn_reference_row(const attn_problem *p, int32_t b, int32_t h, int32_t i, attn_ref_row *r);

#endif
