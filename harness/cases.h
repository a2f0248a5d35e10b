/* Correctness cases (small, odd, adversarial) and their input data. The
 * performance shapes live elsewhere (perf_cases.h): different jobs. */
#ifndef ATTN_CASES_H
#define ATTN_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"

/* What the inputs look like; each exercises an item of docs/accuracy.md. */
typedef enum attn_data_kind {
    DATA_NORMAL,           /* q, k, v ~ N(0, 1) */
    DATA_HUGE_LOGITS,      /* scores far beyond 88.7, where expf overflows */
    DATA_ALL_NEGATIVE,     /* every score about -200, where every expf underflows */
    DATA_TIED,             /* all scores equal: O is the mean of the visible V rows */
    DATA_ONE_HOT,          /* one key 200 above the rest: O is that V row */
    DATA_RISING,           /* scores rise along the key axis: a rescale every block */
    DATA_FALLING,          /* scores fall along the key axis: no rescale */
    DATA_CANCELLING_V,     /* V rows in +/- pairs with equal keys: o ~ 0, judged by E_D */
    DATA_NAN_Q,            /* NaN in one q row per head */
    DATA_NAN_K,            /* NaN in one K row per head */
    DATA_NAN_V,            /* NaN in one V element per head */
    DATA_MASKED_NONFINITE, /* NaN/Inf in K/V rows that causal masking hides from most rows */
    DATA_INF,              /* +-Inf in q, K and V */
    DATA_SUBNORMAL,        /* subnormal q and k (scores underflow), V mixing subnormals */
    DATA_KIND_COUNT
} attn_data_kind;

const char *attn_data_name(attn_data_kind kind);
/* The scale an input kind sets for itself (attn_case_fill: its data are
 * built for that scale), or 0 when it keeps the shape's. */
float attn_data_own_scale(attn_data_kind kind);

typedef struct attn_case {
    attn_shape shape;
    attn_data_kind data;
    /* Element types (all ATTN_F32 = 0 when left out) and the precision
     * class (ATTN_F32: "P in f32"; bf16/f16: "P rounded to t"). */
    attn_types types;
    int32_t p_round;
} attn_case;

/* The --dtype axis: f32, bf16, f16 (Q, K/V and O of that type), f16kv and
 * bf16kv (f32 Q and O, a narrow KV cache), all (those five). */
enum { ATTN_DTYPE_AXIS_MAX = 5 };
/* Parses a comma-separated list of those names into out (at most
 * ATTN_DTYPE_AXIS_MAX, duplicates dropped); returns how many, or -1 with
 * msg naming the bad value. */
int attn_dtype_axis_parse(const char *arg, attn_types *out, char *msg, size_t cap);
/* The axis name of a type combination ("f16kv"), or NULL for one the axis
 * has no name for. */
const char *attn_dtype_axis_name(const attn_types *t);
/* 1 when all three are ATTN_F32. */
int attn_types_all_f32(const attn_types *t);

/* Seeds verify runs a case with at least. Rule B compares maxima over
 * seeds; where rounded scores dominate the error (huge logits: a score of
 * 2000 carries ~2.4e-4 of rounding, and two near-tied top scores turn that
 * into thousands of u for float32 naive and fused variants alike) the
 * maximum is heavy-tailed: at 3 or 10 seeds FMA-ordered variants (avx2,
 * avx512, xsmm, blas) failed rule B by the luck of naive's draw while
 * their mean error was lower than naive's; from 20 seeds on the maxima are
 * stable. Those cases take 32. What the maximum needs is rows: the prefill
 * cases have 130 a seed, and the decode case, 4 a seed at first, still
 * drew a lucky naive at 32 seeds (128 rows: E_M 63u, blas on OpenBLAS's
 * AVX-512 kernels 311u, against 817u and 311u at 64 seeds); it has 16 a
 * seed now (512 rows; every variant, type and class within 0.43 of rule
 * B's bound on a Zen 4). So a huge-logit case takes 32 seeds or as many
 * as make 512 rows (batch x heads_q x n_q a seed), at most 1000: a shape
 * of the user's with 4 rows a seed (B 2, Hq 2, n_q 1, n_kv 258, a bf16
 * cache) drew naive's 214u at 32 seeds against 1239u for xsmm, and passed
 * every variant, type and class at 128. Not a cure: at n_kv 100 naive's
 * maximum was 27u over 512 rows (avx2, avx512, xsmm, blas failed) and
 * 9848u over 4000 (all passed); 2048 rows still failed 2 of 288 lines of
 * random 1-16-row shapes on a Sapphire Rapids, and cost the adversarial
 * dtype suites 1.4-2.3x their time (this decode case at 128 seeds). */
int attn_case_min_seeds(const attn_case *c);

/* The most seeds a case runs: verify's --seeds limit and the cap of
 * attn_case_min_seeds. */
enum { ATTN_CASE_SEEDS_MAX = 1000 };

/* The canonical case name shared by verify, bench and the CSV:
 * impl=avx512,B=1,Hq=32,Hkv=8,nq=1,nkv=4096,dk=128,dv=128,causal=1[,scale=..][,data=..]
 *     [,q=..,kv=..,o=..][,p=..]
 * `variant` may be NULL (no impl= part); data=normal, scale=0, all-f32
 * types and the "P in f32" class are omitted (so f32 names never change). */
void attn_case_name(const char *variant, const attn_case *c, char *buf, size_t cap);

/* growth: 64 query rows against n_kv = 64 ... 16384 keys (causal, so the
 * rows see nearly all of them), normal and tied data: how E_M grows with n
 * (docs/accuracy.md). */
typedef enum attn_case_set {
    CASES_QUICK,
    CASES_FULL,
    CASES_ADVERSARIAL,
    CASES_GROWTH
} attn_case_set;

/* Parses "quick", "full", "adversarial", "growth"; -1 when unknown. */
int attn_case_set_parse(const char *name);

/* Writes up to `cap` cases of a set into `out` and returns how many the set
 * has (call with cap = 0 to count). `tiles` (n_tiles of them, may be NULL) adds
 * the edge sweeps of docs/accuracy.md around each tile size to the full set. */
int attn_case_list(attn_case_set set, const int32_t *tiles, int n_tiles, attn_case *out, int cap);

/* Element counts of the four tensors. */
size_t attn_q_elems(const attn_shape *s);
size_t attn_kv_elems(const attn_shape *s, int32_t d);
size_t attn_o_elems(const attn_shape *s);

/* Fills q, k, v for a case deterministically from `seed`. The case's shape
 * may ask for a particular scale; the generator may set shape->scale
 * (adversarial data pick their own), so use the returned shape. */
attn_shape attn_case_fill(const attn_case *c, uint64_t seed, float *q, float *k, float *v);

/* A small deterministic generator (splitmix64), state in the caller. */
typedef struct attn_rng {
    uint64_t state;
} attn_rng;
uint64_t attn_rng_next(attn_rng *r);
double attn_rng_uniform(attn_rng *r); /* [0, 1) */
double attn_rng_normal(attn_rng *r);

#endif
