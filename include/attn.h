/* attn.h — the public contract of libattn: scaled dot-product attention,
 * O = softmax(Q·Kᵀ·scale)·V, computed by interchangeable variants.
 *
 * Layout (float32 for attn_run; attn_run_typed below takes f16/bf16; contiguous,
 * row-major):
 *   Q [batch][heads_q][n_q][d_k]    K [batch][heads_kv][n_kv][d_k]
 *   V [batch][heads_kv][n_kv][d_v]  O [batch][heads_q][n_q][d_v]
 * Query head h reads K/V head h / (heads_q / heads_kv) (GQA; MQA when
 * heads_kv == 1). Causal masking is bottom-right aligned: query row i sees
 * key j iff j <= i + (n_kv - n_q); a row that sees no key outputs +0.
 * Threads: OpenMP (OMP_NUM_THREADS); a fixed thread count gives bitwise
 * reproducible results. On any error nothing is written to O. */
#ifndef ATTN_H
#define ATTN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ATTN_BUILDING_LIBRARY) && defined(__GNUC__)
#define ATTN_API __attribute__((visibility("default")))
#else
#define ATTN_API
#endif

enum {
    ATTN_OK = 0,
    ATTN_EINVAL = -1,   /* bad argument: NULL pointer, field out of range, size overflow */
    ATTN_ENOTSUP = -2,  /* this CPU lacks a feature the variant needs */
    ATTN_ENOMEM = -3,   /* workspace cannot be allocated or exceeds the limit */
    ATTN_ENOTFOUND = -4 /* no variant of that name */
};

/* The most query or key rows a head may have: 2^31 - 2^16, so that the
 * kernels' int32 steps through rows and keys never pass INT32_MAX. */
#define ATTN_MAX_ROWS 2147418112

typedef struct attn_shape { /* field order is part of the ABI */
    int32_t batch;          /* >= 1 */
    int32_t heads_q;        /* >= 1 */
    int32_t heads_kv;       /* >= 1 and divides heads_q (GQA; MQA when 1) */
    int32_t n_q;            /* query rows per head, 1 ... ATTN_MAX_ROWS */
    int32_t n_kv;           /* key/value rows per head, 1 ... ATTN_MAX_ROWS */
    int32_t d_k;            /* >= 1 */
    int32_t d_v;            /* >= 1 */
    int32_t causal;         /* 0 or 1 */
    float scale;            /* 0 means 1/sqrt(d_k); otherwise any finite value */
} attn_shape;

ATTN_API int attn_variant_count(void);
/* NULL when out of range. */
ATTN_API const char *attn_variant_name(int index);
/* 1, 0 (this CPU lacks a feature), ATTN_ENOTFOUND; ATTN_EINVAL when the
 * ATTN_CPU_MASK environment variable is malformed. */
ATTN_API int attn_variant_supported(const char *name);
ATTN_API int attn_run(const char *variant, const attn_shape *s, const float *q, const float *k,
                      const float *v, float *o);

/* Element types. f16 is IEEE binary16, bf16 the top 16 bits of a float32.
 * Q, K, V and O of attn_run_typed have the same layout as above, each
 * element of its own type; the kernels compute in float32 (products,
 * scores, weights, sums, accumulators), and an f16/bf16 O is rounded to
 * nearest even (an f16 O beyond +-65504 is +-Inf, as the conversion gives).
 * A variant that feeds the weights to P.V in bf16 (avx512_bf16) rounds each
 * weight once to bf16 there, and only that: its precision class, which
 * `attnbench list` names per variant. */
typedef enum attn_dtype { ATTN_F32 = 0, ATTN_F16 = 1, ATTN_BF16 = 2 } attn_dtype;
typedef struct attn_types { /* field order is part of the ABI */
    int32_t q;              /* attn_dtype of Q */
    int32_t kv;             /* attn_dtype of K and V: a KV cache may be narrower than Q */
    int32_t o;              /* attn_dtype of O */
} attn_types;
/* attn_run with element types; attn_run(...) is attn_run_typed with all ATTN_F32.
 * ATTN_EINVAL: NULL types or a value outside attn_dtype; ATTN_ENOTSUP: the variant
 * does not take these types (or this CPU lacks what it needs for them). */
ATTN_API int attn_run_typed(const char *variant, const attn_shape *s, const attn_types *t,
                            const void *q, const void *k, const void *v, void *o);
/* 1 when the variant takes these types on this CPU, 0 when not, ATTN_ENOTFOUND,
 * ATTN_EINVAL (bad types or a malformed ATTN_CPU_MASK). */
ATTN_API int attn_variant_supports(const char *variant, const attn_types *t);
/* The double-precision reference (two-pass, max-shifted softmax on the
 * float32 inputs widened to double). O is [batch][heads_q][n_q][d_v]. */
ATTN_API int attn_reference(const attn_shape *s, const float *q, const float *k, const float *v,
                            double *o);
ATTN_API const char *attn_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_H */
