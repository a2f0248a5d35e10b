/* The double-precision reference, row by row, with what docs/accuracy.md's
 * rule A needs alongside each output element.
 *
 * The judge is independent of the judged: this directory includes only
 * include/attn.h and its own headers. Which keys a row sees, where a head's
 * tensors start and the default scale are derived here from the public
 * contract (attn.h, README "The library"), not taken from the variants'
 * problem layer (impls/problem.h), so a mistake there is caught, not
 * reproduced (test wrong_visibility). */
#ifndef ATTN_REFERENCE_H
#define ATTN_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"

/* The inputs as the contract states them: row-major, Q
 * [batch][heads_q][n_q][d_k], K [batch][heads_kv][n_kv][d_k], V
 * [batch][heads_kv][n_kv][d_v], each element of its attn_types type (f32,
 * IEEE binary16, or bf16 = the top half of a float32), widened exactly to
 * double here: the judge reads the values the variant was given, not the
 * float32 data they were rounded from. The shape must be valid. */
typedef struct attn_ref_input {
    attn_shape shape;
    double scale; /* shape.scale, or 1/sqrt(d_k) when it is 0 */
    attn_types types;
    /* 1: subnormal f16/bf16 inputs read as zero, for a variant whose
     * instructions do so and declare it (denormals-are-zero). */
    int flush_subnormals;
    const void *q, *k, *v;
} attn_ref_input;

attn_ref_input attn_ref_input_make(const attn_shape *s, const float *q, const float *k,
                                   const float *v);
attn_ref_input attn_ref_input_make_typed(const attn_shape *s, const attn_types *t, const void *q,
                                         const void *k, const void *v, int flush_subnormals);

/* Element t of row i of query head h of batch b, of key row j that head
 * reads (K/V head h / (heads_q / heads_kv)) and of its value row. */
double attn_ref_q_value(const attn_ref_input *in, int32_t b, int32_t h, int32_t i, int32_t t);
double attn_ref_k_value(const attn_ref_input *in, int32_t b, int32_t h, int32_t j, int32_t t);
double attn_ref_v_value(const attn_ref_input *in, int32_t b, int32_t h, int32_t j, int32_t c);

/* One element of type t (0 f32, 1 f16, 2 bf16) as double, exactly. */
double attn_ref_decode(const void *base, int32_t type, size_t index, int flush_subnormals);

/* Keys row i sees: all n_kv, or with causal masking (bottom-right aligned)
 * the keys j with j - i <= n_kv - n_q. */
int32_t attn_ref_keys_seen(const attn_shape *s, int32_t i);

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
 * query head h. Returns ATTN_OK, or ATTN_ENOMEM for its scratch (a few
 * rows of d_k and d_v doubles). */
int attn_reference_row(const attn_ref_input *in, int32_t b, int32_t h, int32_t i, attn_ref_row *r);

/* The same for `count` (1 ... ATTN_REF_ROWS_MAX) rows of batch b that read
 * one K/V head, row m being query row i[m] of head h[m], into r[m]: each
 * K/V row is decoded once for all of them. Each row gets the bits
 * attn_reference_row gives it alone (a NaN may carry another payload:
 * tests/test_reference_rows.c). ATTN_EINVAL for a count out of range or
 * heads that read different K/V heads, ATTN_ENOMEM. */
enum { ATTN_REF_ROWS_MAX = 64 };
int attn_reference_rows(const attn_ref_input *in, int32_t b, const int32_t *h, const int32_t *i,
                        int32_t count, attn_ref_row *r);

/* How many rows to take together when each needs `doubles` doubles of
 * the caller's scratch (o, D, M, scores): ATTN_REF_ROWS_MAX, fewer when
 * those would pass 16 MiB a thread (n_kv beyond 32 thousand), at least 1. */
int32_t attn_ref_rows_within(size_t doubles);

/* The rows row, row + stride, ... (row-major over [batch][heads_q][n_q]),
 * at most max_rows of them and ATTN_REF_ROWS_MAX, as far as they share
 * the first one's batch and K/V head: their count, with *b and h[], i[]
 * set for attn_reference_rows. */
int32_t attn_ref_rows_at(const attn_shape *s, int64_t row, int64_t stride, int32_t max_rows,
                         int32_t *b, int32_t *h, int32_t *i);

/* The whole O in double, [batch][heads_q][n_q][d_v], for a valid shape:
 * what the public attn_reference (impls/api.c, which checks the shape)
 * returns. ATTN_OK or ATTN_ENOMEM. */
int attn_ref_attention(const attn_shape *s, const float *q, const float *k, const float *v,
                       double *o);
/* The same for inputs of any attn_types (types.o is not used). */
int attn_ref_attention_typed(const attn_ref_input *in, double *o);

#endif
