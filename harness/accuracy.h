/* Runs a variant's output through the reference and docs/accuracy.md's rules,
 * on every row or on a sample (for shapes where the full reference is slow). */
#ifndef ATTN_ACCURACY_H
#define ATTN_ACCURACY_H

#include <stddef.h>

#include "metrics.h"
#include "variant.h"

/* Checks every `row_stride`-th query row (1 = all) of `o`, the output of
 * variant `v` for problem `p` (p->o is ignored; `o` is read, of type
 * p->types.o). The reference reads p->q, p->k, p->v in p->types (flushing
 * subnormal narrow inputs when v declares denormals-are-zero); the rules
 * are those of the class p->types.o / p->p_round. Returns ATTN_OK or
 * ATTN_ENOMEM for the reference's scratch. */
int attn_check_output(const attn_variant *v, const attn_problem *p, const void *o,
                      int64_t row_stride, attn_err_stats *out);

/* Buffers for one case's tensors. q, k, v hold the f32 data the case
 * generator makes; tq, tk, tv the same rounded to nearest even into the
 * buffers' types (the same arrays when a type is f32), which is what runs
 * and what the reference judges. O is of types.o, surrounded by guards. */
enum { ATTN_GUARD_FLOATS = 16 };
typedef struct attn_case_buffers {
    float *q, *k, *v;
    void *tq, *tk, *tv;
    unsigned char *o_block; /* guards, O, guards */
    void *o;
    size_t o_elems;
    attn_types types;
} attn_case_buffers;
int attn_case_buffers_alloc(attn_case_buffers *b, const attn_shape *s);
int attn_case_buffers_alloc_typed(attn_case_buffers *b, const attn_shape *s, const attn_types *t);
void attn_case_buffers_free(attn_case_buffers *b);
/* Rounds q, k, v into tq, tk, tv (after attn_case_fill; verify runs do it). */
void attn_case_buffers_narrow(attn_case_buffers *b, const attn_shape *s);
/* O element i widened to f32. */
float attn_case_buffers_o(const attn_case_buffers *b, size_t i);

/* One run of `v` on the data in `b` (O pre-filled with a NaN pattern so an
 * element never written shows up), then guard bytes around O and the
 * workspace, then every row through attn_check_output. Returns 0, or -1
 * with `why` set when the run itself failed or a guard was overwritten.
 * attn_verify_run is the "P in f32" class; _class takes p_round. */
int attn_verify_run(const attn_variant *v, const attn_shape *s, attn_case_buffers *b,
                    attn_err_stats *st, char *why, size_t cap);
int attn_verify_run_class(const attn_variant *v, const attn_shape *s, int32_t p_round,
                          attn_case_buffers *b, attn_err_stats *st, char *why, size_t cap);

#endif
