/* The internal contract between the dispatcher (api.c) and a variant.
 * Every variant is one entry in the table of table.c: plain data plus two
 * functions. The dispatcher validates the shape, checks CPU features, sizes
 * and allocates the workspace once per call, then calls run(). */
#ifndef ATTN_VARIANT_H
#define ATTN_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"

/* A validated problem: every field of `shape` is in range, byte counts do
 * not overflow, and `scale` is resolved (0 has become 1/sqrt(d_k)). */
typedef struct attn_problem {
    attn_shape shape;
    float scale;   /* resolved */
    int32_t group; /* heads_q / heads_kv: query heads per K/V head */
    int threads;   /* OpenMP threads this call may use (the workspace is sized for it) */
    const float *q, *k, *v;
    float *o;
} attn_problem;

enum { ATTN_MAX_TILES = 8 };

typedef struct attn_variant {
    const char *name;
    uint32_t required_features; /* ATTN_CPU_* bits; all must be present */
    const char *description;
    /* exp error in ulps (rule A's c_exp), measured by tests/test_exp. */
    int exp_ulps;
    /* Keys per running-max rescale block (rule A's r = ceil(n_i / kv_block)
     * plus split merges); 0 for two-pass softmax variants. */
    int32_t kv_block;
    /* Tile sizes T (up to ATTN_MAX_TILES, 0-terminated when fewer): verify's
     * edge sweeps run n and d over 1, T-1, T, T+1 and 2T+prime for each. */
    int32_t tiles[ATTN_MAX_TILES];
    /* Bytes of workspace run() needs for this problem and p->threads.
     * Returns ATTN_OK, or ATTN_ENOMEM when the size overflows. */
    int (*workspace_size)(const attn_problem *p, size_t *bytes);
    /* Computes O. The workspace is 64-byte aligned and at least the size
     * asked for. Must not allocate. Returns ATTN_OK or an error code. */
    int (*run)(const attn_problem *p, void *workspace);
} attn_variant;

/* The one table (table.c). */
extern const attn_variant attn_variants[];
extern const int attn_variants_count;

/* NULL when unknown. */
const attn_variant *attn_find_variant(const char *name);

/* 1 when the (possibly masked) CPU has every feature the variant needs. */
int attn_variant_runnable(const attn_variant *v);

/* Space-separated names of the features the variant needs and the CPU lacks. */
void attn_variant_missing(const attn_variant *v, char *buf, size_t cap);

/* Number of keys query row i sees (0 .. n_kv). */
static inline int32_t attn_keys_seen(const attn_shape *s, int32_t i)
{
    if (!s->causal)
        return s->n_kv;
    int64_t n = (int64_t)i + s->n_kv - s->n_q + 1;
    return n < 0 ? 0 : (n > s->n_kv ? s->n_kv : (int32_t)n);
}

/* Base pointers of one (batch, query head). */
static inline const float *attn_q_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return p->q + ((size_t)b * s->heads_q + h) * (size_t)s->n_q * s->d_k;
}
static inline const float *attn_k_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return p->k + ((size_t)b * s->heads_kv + h / p->group) * (size_t)s->n_kv * s->d_k;
}
static inline const float *attn_v_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return p->v + ((size_t)b * s->heads_kv + h / p->group) * (size_t)s->n_kv * s->d_v;
}
static inline float *attn_o_head(const attn_problem *p, int32_t b, int32_t h)
{
    const attn_shape *s = &p->shape;
    return p->o + ((size_t)b * s->heads_q + h) * (size_t)s->n_q * s->d_v;
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

/* Checks a shape; on failure returns ATTN_EINVAL and writes a message naming
 * the field and its value ("heads_kv = 3 does not divide heads_q = 8"). */
int attn_check_shape(const attn_shape *s, char *msg, size_t cap);

/* The problem the dispatcher builds from a checked shape: scale resolved,
 * group = heads_q / heads_kv, threads = omp_get_max_threads(). */
attn_problem attn_problem_make(const attn_shape *s, const float *q, const float *k, const float *v,
                               float *o);

/* The workspace limit in bytes: half the physical memory, at most 64 GiB. */
size_t attn_workspace_limit(void);

/* Runs a variant on a problem with optional guard checks on the workspace.
 * `msg` (may be NULL) receives a description of any error. */
typedef struct attn_run_report {
    size_t workspace_bytes;
    int workspace_guard_ok; /* 1 when the bytes around the workspace were untouched */
} attn_run_report;
int attn_run_variant(const attn_variant *v, const attn_shape *s, const float *q, const float *k,
                     const float *v_, float *o, attn_run_report *report, char *msg, size_t cap);

#endif
