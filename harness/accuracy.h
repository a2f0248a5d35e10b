/* Runs a variant's output through the reference and ACCURACY.md's rules,
 * on every row or on a sample (for shapes where the full reference is slow). */
#ifndef ATTN_ACCURACY_H
#define ATTN_ACCURACY_H

#include "metrics.h"

/* Checks every `row_stride`-th query row (1 = all) of `o`, the output of
 * variant `v` for problem `p` (p->o is ignored; `o` is read). Returns
 * ATTN_OK or ATTN_ENOMEM for the reference's scratch. */
int attn_check_output(const attn_variant *v, const attn_problem *p, const float *o,
                      int64_t row_stride, attn_err_stats *out);

/* Builds the problem the dispatcher would build (scale resolved). */
attn_problem attn_problem_for(const attn_shape *s, const float *q, const float *k, const float *v);

#endif
