/* Performance cases: realistic model shapes for bench and matrix, in named
 * presets. Separate from the correctness cases of cases.h (small, odd,
 * adversarial): a different job. Data is always N(0, 1) (DATA_NORMAL),
 * made in f32 and rounded to nearest even into the case's element types. */
#ifndef ATTN_PERF_CASES_H
#define ATTN_PERF_CASES_H

#include "attn.h"
#include "variant.h"

typedef enum attn_perf_preset {
    PERF_QUICK,   /* minutes: n 128..2048, d 64/128, heads 8, causal on/off, one decode row;
                     a bf16 prefill and a bf16 KV cache decode */
    PERF_FULL,    /* hours: n 128..16384, d 64/80/128, heads 1/8/32, GQA, MQA, decode;
                     a bf16 / narrow-KV slice for the fast variants */
    PERF_DECODE,  /* n_q = 1 (and 4) against KV caches up to 32768 */
    PERF_SCALING, /* every thread count on a few shapes */
    PERF_TARGETS, /* the performance targets' rows (perf_targets.h), f32 and low precision */
    PERF_TEST,    /* seconds: tiny shapes for ctest */
    PERF_PRESET_COUNT
} attn_perf_preset;

/* A ratio a preset reports, timed as one: the cell in alternating rounds
 * with its twin (the same variant and shape at 1 thread, in f32, without
 * the causal mask, or at the default scale), so a drift of a shared machine hits both sides
 * of the ratio alike. */
typedef enum attn_perf_pair {
    ATTN_PAIR_NONE,        /* timed alone */
    ATTN_PAIR_ONE_THREAD,  /* with its 1-thread twin (only a cell at 2 or more threads) */
    ATTN_PAIR_F32,         /* with its f32 twin (only a cell not all f32) */
    ATTN_PAIR_NON_CAUSAL,  /* with its non-causal twin (only a causal cell) */
    ATTN_PAIR_USUAL_SCALE, /* with its twin at the default scale (only a cell with a scale) */
} attn_perf_pair;

/* perf-targets' peaked-attention cell: 8 heads, n_q = n_kv = PEAKED_N,
 * d 128, at this scale (its twin at the default 1/sqrt(d)). */
enum { PEAKED_N = 512 };
#define PEAKED_SCALE 2.0f

typedef struct attn_perf_case {
    attn_shape shape;
    int threads;      /* resolved: 1 .. all */
    attn_types types; /* of Q, K/V and O (all f32 unless the preset or --dtype says) */
    /* Which of the preset's variants run this case too (NULL: all of them):
     * the low-precision slice of full is for the fast variants only. */
    int (*includes)(const attn_variant *v);
    attn_perf_pair pair;
} attn_perf_case;

/* The twin case c is timed in alternation with: 1 and *twin filled, or 0
 * when c is timed alone. */
int attn_perf_twin(const attn_perf_case *c, attn_perf_case *twin);

/* The name of a performance row of `variant` (a variant or a peer) on
 * shape s in types t: attn_case_name's, with N(0, 1) data. The matrix
 * keys rows by it, a paired row names its twin by it. */
void attn_perf_case_name(const char *variant, const attn_shape *s, const attn_types *t, char *buf,
                         size_t cap);

/* 1 when variant v runs case c (the case's own choice; the preset's is
 * attn_perf_preset_variants). */
int attn_perf_case_runs(const attn_perf_case *c, const attn_variant *v);

/* The axes a command line gives that replace a preset's: thread counts
 * (--threads), element types (--dtype) and shapes (--shape: each at all
 * threads unless --threads says otherwise, unpaired); n_... = 0 keeps the
 * preset's. */
typedef struct attn_perf_axes {
    const int *threads;
    int n_threads;
    const attn_types *types;
    int n_types;
    const attn_shape *shapes;
    int n_shapes;
} attn_perf_axes;

/* 1 when a and b are one cell of the results: every field but the scale,
 * which the CSV does not carry (so neither a row's key nor a peer's pairing
 * can tell two such shapes apart). */
int attn_perf_same_cell(const attn_shape *a, const attn_shape *b);

typedef struct attn_perf_preset_info {
    const char *name;
    const char *summary;
    /* Which variants of the table run when no --variant is given (NULL:
     * every one), decided from the descriptor, never from a name. */
    int (*includes)(const attn_variant *v);
    int repetitions; /* default minimum timed repetitions */
    double min_time; /* default minimum seconds of timed repetitions */
    /* Default cap: a cell stops repeating once its timed runs reach this
     * many seconds (after at least one), minimums notwithstanding. */
    double max_time;
} attn_perf_preset_info;

/* The preset's default variants in table order, at most cap; returns how
 * many were written. */
int attn_perf_preset_variants(attn_perf_preset p, const attn_variant **out, int cap);

/* -1 when unknown. */
int attn_perf_preset_parse(const char *name);
const attn_perf_preset_info *attn_perf_preset_get(attn_perf_preset p);
/* "quick|full|decode|scaling|perf-targets|test" */
const char *attn_perf_preset_names(void);

/* Writes up to `cap` cases into `out` and returns how many the preset has
 * (cap = 0 counts), or the axes' shapes when they give any. `all` is the
 * machine's thread count ("all threads").
 * Each shape appears once per thread count and element types of its row of
 * the preset; `axes` (may be NULL) replace those for every shape: given
 * thread counts replace the preset's, given types replace both the f32 of
 * each shape and the preset's own low-precision rows (which are then not
 * listed, so no cell appears twice). */
int attn_perf_case_list(attn_perf_preset p, int all, const attn_perf_axes *axes,
                        attn_perf_case *out, int cap);

/* Work and traffic of one call, as the CSV defines them:
 * flops = 2 (d_k + d_v) sum_rows n_i * heads_q * batch (n_i: keys row i
 * sees, so causal counts only what is computed); bytes = Q, K, V and O
 * each moved once, each element of its type's size (t NULL: all f32), so a
 * bf16 KV cache moves half the bytes of an f32 one and its GB/s and %
 * of the read roof count what was really read. */
double attn_perf_flops(const attn_shape *s);
double attn_perf_bytes(const attn_shape *s, const attn_types *t);
/* 1 when the shape is timed from memory (n_q <= 16: decode and small
 * chunks; their cells rotate copies past the last-level cache), 0 when its
 * tensors stay in the caches between calls (prefill). */
int attn_perf_bandwidth_bound(const attn_shape *s);
/* The roofline's side of a cell at these roofs (GFLOP/s of the roof that
 * applies to its variant, read GB/s): 1 (judged against the read roof)
 * when it is timed from memory and its bytes at the read roof take at
 * least as long as its flops at the compute roof, 0 (against the compute
 * roof) otherwise. Decode of many query heads per K/V head is
 * compute-bound: Hq 32 / Hkv 1, d 128, f32 does 16 flops a byte, against
 * a ridge of 5.2 on a 2-core Zen 3. A prefill cell is never judged against
 * the read roof: its tensors come from the caches, which read faster. A
 * roof that is not a positive figure (not measured) leaves the shape's
 * rule. */
int attn_perf_roofline_bandwidth_bound(const attn_shape *s, const attn_types *t, double gflops,
                                       double gbytes_per_s);

#endif
