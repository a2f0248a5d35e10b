/* The internal contract between the dispatcher (api.c) and a variant.
 * Every variant is one file exporting one `const attn_variant` (plain data
 * plus two functions) and one line of variants.inc. The dispatcher validates the shape, checks CPU
 * features, sizes and allocates the workspace once per call, then calls run(). */
#ifndef ATTN_VARIANT_H
#define ATTN_VARIANT_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"
#include "problem.h"

/* How a variant's softmax sees the keys: what rule A's r and the harness's
 * grouping (fused vs two-pass rows in perf-targets, the RSS target) need. */
typedef enum attn_family {
    ATTN_FAMILY_QUADRATIC, /* all n_q x n_kv scores of a head at once */
    ATTN_FAMILY_TWO_PASS,  /* a row block's scores, exact max then softmax */
    ATTN_FAMILY_ONLINE,    /* one pass over key blocks, running max (r > 0) */
} attn_family;

/* What a call costs, so the harness can decide without naming variants. */
typedef enum attn_cost_class {
    ATTN_COST_FAST,     /* multi-threaded, tiled: every preset cell */
    ATTN_COST_BASELINE, /* a peer library the targets compare with (blas) */
    /* One thread and n_q x n_kv scores: at n >= 8192 minutes per call, so
     * the matrix skips those cells (attn_cost_too_slow). */
    ATTN_COST_QUADRATIC_ONE_THREAD,
} attn_cost_class;

/* The tile sizes a variant's kernel is built around, each read from the
 * constant the kernel itself uses (0: the variant has no such tile). verify's
 * edge sweeps run n and d over 1, T-1, T, T+1 and 2T+prime for each. */
typedef struct attn_tiles {
    int32_t keys;     /* keys per block; online: per running-max rescale (rule A's r) */
    int32_t rows;     /* query rows per block or tile */
    int32_t lanes;    /* floats per vector (rows are vector lanes) */
    int32_t reg_rows; /* register tile: query rows */
    int32_t reg_keys; /* register tile: keys of Q.K^T */
    int32_t reg_cols; /* register tile: columns of P.V */
} attn_tiles;

enum { ATTN_MAX_TILES = 6 }; /* the fields of attn_tiles */

typedef struct attn_variant {
    const char *name;
    uint32_t required_features; /* ATTN_CPU_* bits; all must be present */
    const char *description;
    attn_family family;
    attn_cost_class cost;
    /* exp error in ulps (rule A's c_exp), measured by tests/test_exp. */
    int exp_ulps;
    attn_tiles tiles;
    /* The library the variant is built on and its version, for the
     * results' metadata ("libxsmm", "1.17-..."); both NULL when none. */
    const char *library;
    const char *(*library_version)(void);
    /* Bytes of workspace run() needs for this problem and p->threads.
     * Returns ATTN_OK, or ATTN_ENOMEM when the size overflows. */
    int (*workspace_size)(const attn_problem *p, size_t *bytes);
    /* Computes O. The workspace is 64-byte aligned and at least the size
     * asked for. Must not allocate. Returns ATTN_OK or an error code. */
    int (*run)(const attn_problem *p, void *workspace);
} attn_variant;

/* The one table (table.c, from variants.inc), in `attnbench list` order. */
extern const attn_variant *const attn_variant_table[];
extern const int attn_variant_table_size;

/* Rule A's r for a row that sees n_seen keys, run on `threads` threads:
 * online variants rescale once per key block plus up to two merges per
 * thread for split-KV (flash-decoding); two-pass variants never. */
static inline int attn_variant_rescales(const attn_variant *v, int threads, int32_t n_seen)
{
    if (v->family != ATTN_FAMILY_ONLINE || v->tiles.keys <= 0)
        return 0;
    return (n_seen + v->tiles.keys - 1) / v->tiles.keys + 2 * threads;
}

/* The distinct nonzero tile sizes of v, at most ATTN_MAX_TILES; returns how
 * many were written. */
int attn_variant_tile_sizes(const attn_variant *v, int32_t out[ATTN_MAX_TILES]);

/* One thread over n x n float32 scores: ~34 GFLOP per head at n = 8192 at
 * a few GFLOP/s, minutes per call. */
enum { ATTN_QUADRATIC_ONE_THREAD_MAX_N = 8192 };

/* 1 when a call of v on s takes minutes (the cost class says so). */
int attn_cost_too_slow(const attn_variant *v, const attn_shape *s);

/* NULL when unknown. */
const attn_variant *attn_find_variant(const char *name);

/* 1 when the (possibly masked) CPU has every feature the variant needs. */
int attn_variant_runnable(const attn_variant *v);

/* Space-separated names of the features the variant needs and the CPU lacks. */
void attn_variant_missing(const attn_variant *v, char *buf, size_t cap);

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
