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

/* The roof a variant's compute-bound rows are judged against: the peak of
 * the instructions its two GEMMs run on (the matrix's pct_peak,
 * perf-targets' roof targets). Bandwidth-bound rows (decode) are judged
 * against the read roof whatever this says. */
typedef enum attn_roof {
    ATTN_ROOF_FMA = 0,     /* fp32 FMA peak of the best ISA the CPU runs (the default) */
    ATTN_ROOF_BF16_AVX512, /* vdpbf16ps: bf16 pairs, f32 accumulate */
    ATTN_ROOF_BF16_AMX,    /* tdpbf16ps on AMX tiles */
} attn_roof;

/* How f16/bf16 tensors reach a variant's kernel (attn_run_typed). */
typedef enum attn_widening {
    /* An f32 kernel: the dispatcher widens narrow Q, K, V whole into f32
     * copies in the workspace and rounds O from an f32 one after the run,
     * as a NumPy or BLAS user does (astype). The default. */
    ATTN_WIDEN_BY_DISPATCHER = 0,
    /* The kernel reads and writes the narrow types itself, widening a
     * block at a time as it loads (the online-softmax driver, naive). */
    ATTN_WIDEN_ON_LOAD,
} attn_widening;

typedef struct attn_variant {
    const char *name;
    uint32_t required_features; /* ATTN_CPU_* bits; all must be present */
    const char *description;
    attn_family family;
    attn_cost_class cost;
    /* exp error in ulps (rule A's c_exp), measured by tests/test_exp. */
    int exp_ulps;
    attn_tiles tiles;
    attn_roof roof;
    /* The library the variant is built on and its version, for the
     * results' metadata ("libxsmm", "1.17-..."); both NULL when none. */
    const char *library;
    const char *(*library_version)(void);
    /* Element types taken, bit (1 << attn_dtype) per tensor; 0: every type. */
    uint32_t q_types, kv_types, o_types;
    attn_widening widening;
    /* The precision classes computed (docs/accuracy.md, "Precision classes"):
     * bit (1 << t) for "P rounded to t" (the kernel gets p->p_round = t),
     * bit (1 << ATTN_F32) for "P in f32". 0: "P in f32" only. */
    uint32_t p_rounds;
    /* 1 when its instructions treat subnormal narrow inputs as zero
     * (vdpbf16ps, AMX): verify then flushes them in the reference too. */
    int denormals_are_zero;
    /* For a variant that picks its softmax exp at run time: the one it
     * calls on this CPU (attn_cpu(), masks included), by peak's names:
     * "avx2" or "avx512" (the vector exps of exp_array.h) or "expf"
     * (glibc's scalar one). perf-targets reports xsmm's. NULL: the exp is
     * fixed by the variant's ISA, or not declared. */
    const char *(*exp_in_use)(void);
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

/* What a typed run asks for besides the shape: element types and class. */
typedef struct attn_run_options {
    attn_types types;
    int32_t p_round; /* ATTN_F32 ("P in f32"), ATTN_BF16 or ATTN_F16 ("P rounded to t") */
} attn_run_options;

/* attn_run_variant with element types and a precision class. ATTN_EINVAL
 * for NULL options or a value outside attn_dtype, ATTN_ENOTSUP for types
 * or a class the variant does not take; msg names the field and value. */
int attn_run_variant_typed(const attn_variant *v, const attn_shape *s, const attn_run_options *opt,
                           const void *q, const void *k, const void *v_, void *o,
                           attn_run_report *report, char *msg, size_t cap);

/* What attn_run_variant_typed does between its checks and its guard bytes,
 * split so a timing loop can run it on a workspace allocated once (the
 * harness's perf cells): the bytes of workspace v needs for the typed
 * problem p (its own, plus the f32 copies the dispatcher widens into for an
 * f32 kernel; ATTN_ENOMEM when that overflows), and the run itself on a
 * 64-byte aligned workspace of at least that size (widening for an f32
 * kernel, O rounded back to its type). p is made by attn_problem_make_typed
 * with the run's types, class and p->threads; no argument is checked here. */
int attn_variant_workspace_typed(const attn_variant *v, const attn_problem *p, size_t *bytes);
int attn_variant_run_in(const attn_variant *v, const attn_problem *p, void *workspace);

/* ATTN_OK when v takes these types and class, ATTN_EINVAL (a value outside
 * attn_dtype) or ATTN_ENOTSUP, with msg naming the field and value. CPU
 * features are not checked here (attn_variant_runnable). */
int attn_variant_check_types(const attn_variant *v, const attn_run_options *opt, char *msg,
                             size_t cap);

/* The type sets of v with 0 resolved: ATTN_DTYPES_ALL. */
static inline uint32_t attn_variant_type_set(uint32_t declared)
{
    return declared ? declared : ATTN_DTYPES_ALL;
}
static inline uint32_t attn_variant_p_rounds(const attn_variant *v)
{
    return v->p_rounds ? v->p_rounds : ATTN_DTYPE_BIT(ATTN_F32);
}

/* The element types a caller that names none runs v in (verify without
 * --dtype, the tests that sweep every variant): all f32 when v takes
 * them, else the first v takes of all bf16, f32 Q and O over bf16 K/V,
 * all f16, f32 over f16 K/V. A variant takes at least one (test_table). */
static inline attn_types attn_variant_default_types(const attn_variant *v)
{
    static const attn_types order[] = {{ATTN_F32, ATTN_F32, ATTN_F32},
                                       {ATTN_BF16, ATTN_BF16, ATTN_BF16},
                                       {ATTN_F32, ATTN_BF16, ATTN_F32},
                                       {ATTN_F16, ATTN_F16, ATTN_F16},
                                       {ATTN_F32, ATTN_F16, ATTN_F32}};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if ((attn_variant_type_set(v->q_types) & ATTN_DTYPE_BIT(order[i].q)) &&
            (attn_variant_type_set(v->kv_types) & ATTN_DTYPE_BIT(order[i].kv)) &&
            (attn_variant_type_set(v->o_types) & ATTN_DTYPE_BIT(order[i].o)))
            return order[i];
    return order[0];
}

/* 1 when v takes all-f32 tensors (attn_run), in its default class. */
static inline int attn_variant_takes_f32(const attn_variant *v)
{
    const attn_types t = attn_variant_default_types(v);
    return t.q == ATTN_F32 && t.kv == ATTN_F32 && t.o == ATTN_F32;
}

/* The class attn_run_typed runs v in: "P in f32" when v computes it, else
 * the one it declares (bf16 before f16): a variant built around a bf16
 * P·V computes no other, and the public API names no class. */
static inline int32_t attn_variant_default_p_round(const attn_variant *v)
{
    const uint32_t c = attn_variant_p_rounds(v);
    return (c & ATTN_DTYPE_BIT(ATTN_F32))    ? ATTN_F32
           : (c & ATTN_DTYPE_BIT(ATTN_BF16)) ? ATTN_BF16
                                             : ATTN_F16;
}

#endif
