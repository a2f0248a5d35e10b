/* The neutral problem layer every variant builds on: a checked shape, the
 * problem a variant is handed, where each head's tensors start and which
 * keys a row sees. Nothing here knows about variants, and the reference
 * (reference/) uses none of it: it derives all of this from include/attn.h
 * on its own, so a mistake here cannot be reproduced by the judge. */
#ifndef ATTN_PROBLEM_H
#define ATTN_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"
#include "dtype.h"

/* A validated problem: every field of `shape` is in range, byte counts do
 * not overflow, and `scale` is resolved (0 has become 1/sqrt(d_k)). */
typedef struct attn_problem {
    attn_shape shape;
    float scale;   /* resolved */
    int32_t group; /* heads_q / heads_kv: query heads per K/V head */
    int threads;   /* OpenMP threads this call may use (the workspace is sized for it) */
    /* Element types of q, k/v and o (attn_run: all ATTN_F32). A variant
     * whose descriptor says its kernel is f32 only sees all-f32 problems:
     * the dispatcher widens for it (variant.h, attn_widening). */
    attn_types types;
    /* The precision class (docs/accuracy.md): ATTN_F32 keeps the weights in f32;
     * ATTN_BF16 / ATTN_F16 round each weight exp(s - m) to that type where
     * it enters P·V, the normaliser summing the unrounded weights. Only
     * variants that declare the class get anything but ATTN_F32. */
    int32_t p_round;
    const void *q, *k, *v;
    void *o;
} attn_problem;

/* Checks a shape; on failure returns ATTN_EINVAL and writes a message naming
 * the field and its value ("heads_kv = 3 does not divide heads_q = 8"). */
int attn_check_shape(const attn_shape *s, char *msg, size_t cap);

/* The problem the dispatcher builds from a checked shape: scale resolved,
 * group = heads_q / heads_kv, threads = omp_get_max_threads(). */
attn_problem attn_problem_make(const attn_shape *s, const float *q, const float *k, const float *v,
                               float *o);
/* The same with element types and a precision class (both checked). */
attn_problem attn_problem_make_typed(const attn_shape *s, const attn_types *t, int32_t p_round,
                                     const void *q, const void *k, const void *v, void *o);

/* Number of keys query row i sees (0 .. n_kv): causal masking is
 * bottom-right aligned, row i sees key j iff j <= i + (n_kv - n_q).
 * visibility.c, alone, so that tests can link a deliberately wrong one in
 * its place and see the reference catch it (test wrong_visibility). */
int32_t attn_keys_seen(const attn_shape *s, int32_t i);

/* The rows that see no key are a prefix (bottom-right causal with
 * n_q > n_kv): returns its length, 0 .. n_q, from attn_keys_seen. */
int32_t attn_first_seeing_row(const attn_shape *s);

/* Writes +0 into rows [0, first) of every (batch, query head) of p->o.
 * Inside a parallel region the heads are shared out among its threads
 * (an orphaned omp for, with its barrier); outside, one thread does all.
 * Returns ATTN_OK. */
int attn_zero_rows_before(const attn_problem *p, int32_t first);

/* n floats rounded up to whole 64-byte cache lines (16 floats), so that
 * buffers carved one after another from an aligned workspace stay aligned.
 * Wraps to 0 only for n > SIZE_MAX - 15, which no checked shape reaches. */
static inline size_t attn_line_floats(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* Base pointers of one (batch, query head), elements of the problem's
 * types (const float * for an all-f32 problem: void * converts). */
static inline const void *attn_q_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return (const char *)p->q +
           ((size_t)b * s->heads_q + h) * (size_t)s->n_q * s->d_k * attn_dtype_size(p->types.q);
}
static inline const void *attn_k_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return (const char *)p->k + ((size_t)b * s->heads_kv + h / p->group) * (size_t)s->n_kv *
                                    s->d_k * attn_dtype_size(p->types.kv);
}
static inline const void *attn_v_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return (const char *)p->v + ((size_t)b * s->heads_kv + h / p->group) * (size_t)s->n_kv *
                                    s->d_v * attn_dtype_size(p->types.kv);
}
static inline void *attn_o_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return (char *)p->o +
           ((size_t)b * s->heads_q + h) * (size_t)s->n_q * s->d_v * attn_dtype_size(p->types.o);
}

/* Item `it` of an f32 run cut into `blocks` row blocks of `rows` query
 * rows per (batch, query head), heads in order, from row `first` on (the
 * rows before it see no key): its head's K and V, its Q and O rows from
 * i0, and how many rows it has (the last block of a head may be short). */
typedef struct attn_row_block {
    const attn_problem *p;
    const float *q, *k, *v;
    float *o;
    int32_t i0, nr;
} attn_row_block;

static inline attn_row_block attn_row_block_at(const attn_problem *p, int64_t it, int64_t blocks,
                                               int32_t first, int32_t rows)
{
    const attn_shape *s = &p->shape;
    const int32_t b = (int32_t)(it / blocks / s->heads_q);
    const int32_t h = (int32_t)(it / blocks % s->heads_q);
    const int32_t i0 = first + (int32_t)(it % blocks) * rows;
    const attn_row_block rb = {
        .p = p,
        .q = (const float *)attn_q_head(p, b, h) + (size_t)i0 * s->d_k,
        .k = attn_k_head(p, b, h),
        .v = attn_v_head(p, b, h),
        .o = (float *)attn_o_head(p, b, h) + (size_t)i0 * s->d_v,
        .i0 = i0,
        .nr = s->n_q - i0 < rows ? s->n_q - i0 : rows,
    };
    return rb;
}

/* Keys row r of the block sees. */
static inline int32_t attn_row_block_seen(const attn_row_block *rb, int32_t r)
{
    return attn_keys_seen(&rb->p->shape, rb->i0 + r);
}

/* Element e of a tensor of type t at base: the address (for row offsets). */
static inline const void *attn_elem_at(const void *base, int32_t t, size_t e)
{
    return (const char *)base + e * attn_dtype_size(t);
}
static inline void *attn_elem_at_mut(void *base, int32_t t, size_t e)
{
    return (char *)base + e * attn_dtype_size(t);
}

/* A decode step (n_q = 1) of a GQA/MQA model: the query heads that share a
 * K/V head are contiguous rows of Q and O and all see every key, so they
 * can be computed as one block of `group` rows against that K/V head,
 * without copying K or V. Returns the problem unchanged otherwise. */
static inline attn_problem attn_fold_decode_heads(const attn_problem *p)
{
    attn_problem f = *p;
    if (p->shape.n_q == 1 && p->group > 1) {
        f.shape.n_q = p->group;
        f.shape.heads_q = p->shape.heads_kv;
        f.shape.causal = 0; /* the one query row sees all n_kv keys */
        f.group = 1;
    }
    return f;
}

#endif
