/* Runs a variant's output through the reference and ACCURACY.md's rules,
 * on every row or on a sample (for shapes where the full reference is slow). */
#ifndef ATTN_ACCURACY_H
#define ATTN_ACCURACY_H

#include <stddef.h>

#include "metrics.h"
#include "variant.h"

/* Checks every `row_stride`-th query row (1 = all) of `o`, the output of
 * variant `v` for problem `p` (p->o is ignored; `o` is read). Returns
 * ATTN_OK or ATTN_ENOMEM for the reference's scratch. */
int attn_check_output(const attn_variant *v, const attn_problem *p, const float *o,
                      int64_t row_stride, attn_err_stats *out);

/* Buffers for one case's tensors, O surrounded by guard floats. */
enum { ATTN_GUARD_FLOATS = 16 };
typedef struct attn_case_buffers {
    float *q, *k, *v, *o_block, *o;
    size_t o_elems;
} attn_case_buffers;
int attn_case_buffers_alloc(attn_case_buffers *b, const attn_shape *s);
void attn_case_buffers_free(attn_case_buffers *b);

/* One run of `v` on the data in `b` (O pre-filled with a NaN pattern so an
 * element never written shows up), then guard bytes around O and the
 * workspace, then every row through attn_check_output. Returns 0, or -1
 * with `why` set when the run itself failed or a guard was overwritten. */
int attn_verify_run(const attn_variant *v, const attn_shape *s, attn_case_buffers *b,
                    attn_err_stats *st, char *why, size_t cap);

#endif
