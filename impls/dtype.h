/* dtype.h — the element types of attn_run_typed as the variants see them:
 * sizes, names, and the exact conversions between f32 and f16/bf16 in
 * portable C (bit operations only, so the result does not depend on the
 * compiler's _Float16 support or the FPU's rounding mode). Widening is
 * exact; narrowing rounds to nearest even, overflows to Inf (f16 beyond
 * 65504 + half an ulp), keeps NaN a (quiet) NaN and rounds into and through
 * the subnormals. The reference (reference/) decodes the types on its own. */
#ifndef ATTN_DTYPE_H
#define ATTN_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attn.h"

enum { ATTN_DTYPE_COUNT = 3 };

/* Bit (1 << dtype): a set of element types. */
#define ATTN_DTYPE_BIT(t) (1u << (unsigned)(t))
#define ATTN_DTYPES_ALL                                                                            \
    (ATTN_DTYPE_BIT(ATTN_F32) | ATTN_DTYPE_BIT(ATTN_F16) | ATTN_DTYPE_BIT(ATTN_BF16))

static inline int attn_dtype_valid(int32_t t)
{
    return t >= 0 && t < ATTN_DTYPE_COUNT;
}

static inline size_t attn_dtype_size(int32_t t)
{
    return t == ATTN_F32 ? 4 : 2;
}

/* "f32", "f16", "bf16"; "?" for a value outside attn_dtype. */
static inline const char *attn_dtype_name(int32_t t)
{
    static const char *const names[ATTN_DTYPE_COUNT] = {"f32", "f16", "bf16"};
    return attn_dtype_valid(t) ? names[t] : "?";
}

static inline uint32_t attn_f32_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline float attn_bits_f32(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static inline float attn_bf16_to_f32(uint16_t h)
{
    return attn_bits_f32((uint32_t)h << 16);
}

static inline uint16_t attn_f32_to_bf16(float x)
{
    uint32_t b = attn_f32_bits(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((b >> 16) | 0x0040u); /* NaN stays NaN, quieted */
    /* Round to nearest even on the 16 bits dropped; a carry into the
     * exponent is the right answer (up to Inf past the largest bf16). */
    b += 0x7FFFu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

static inline float attn_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (exp == 0x1F) /* Inf, NaN (payload kept) */
        return attn_bits_f32(sign | 0x7F800000u | (mant << 13));
    if (exp == 0) { /* zero or subnormal: mant · 2^-24, exact in f32 */
        float m = (float)mant * 0x1p-24f;
        return attn_bits_f32(sign | attn_f32_bits(m));
    }
    return attn_bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t attn_f32_to_f16(float x)
{
    uint32_t b = attn_f32_bits(x);
    uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
    uint32_t a = b & 0x7FFFFFFFu;
    if (a > 0x7F800000u) /* NaN: quiet, top payload bits kept */
        return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    if (a >= 0x477FF000u) /* >= 65520 = 65504 + half an ulp: rounds to Inf */
        return (uint16_t)(sign | 0x7C00u);
    if (a < 0x38800000u) { /* below 2^-14: an f16 subnormal (or 0) */
        /* The value in units of 2^-24, rounded to nearest even by hand:
         * a = 1.m · 2^(e-127) with the implicit bit, shifted right. */
        uint32_t e = a >> 23;
        if (e < 102) /* below 2^-25: rounds to 0 (2^-25 itself is a tie to 0) */
            return sign;
        uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
        uint32_t shift = 126u - e; /* 24 .. 14: m · 2^(e-150) / 2^-24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q); /* q == 0x400 is the smallest normal: right */
    }
    /* Normal: rebias the exponent (127 -> 15), round the 13 bits dropped. */
    a -= 0x38000000u;
    a += 0x0FFFu + ((a >> 13) & 1u);
    return (uint16_t)(sign | (a >> 13));
}

/* Element i of a tensor of type t, widened to f32 (exact). */
static inline float attn_load_elem(const void *base, int32_t t, size_t i)
{
    if (t == ATTN_F32)
        return ((const float *)base)[i];
    uint16_t h = ((const uint16_t *)base)[i];
    return t == ATTN_F16 ? attn_f16_to_f32(h) : attn_bf16_to_f32(h);
}

/* x rounded to type t (nearest even) into element i. */
static inline void attn_store_elem(void *base, int32_t t, size_t i, float x)
{
    if (t == ATTN_F32)
        ((float *)base)[i] = x;
    else
        ((uint16_t *)base)[i] = t == ATTN_F16 ? attn_f32_to_f16(x) : attn_f32_to_bf16(x);
}

/* x rounded to type t and back: the value a t holds (x itself for f32). */
static inline float attn_round_to(int32_t t, float x)
{
    if (t == ATTN_F16)
        return attn_f16_to_f32(attn_f32_to_f16(x));
    if (t == ATTN_BF16)
        return attn_bf16_to_f32(attn_f32_to_bf16(x));
    return x;
}

/* n elements of type t from src (element offset 0) widened into dst. */
typedef void (*attn_widen_fn)(const void *src, int32_t t, float *dst, size_t n);

static inline void attn_widen_portable(const void *src, int32_t t, float *dst, size_t n)
{
    if (t == ATTN_F32) {
        memcpy(dst, src, n * sizeof(float));
        return;
    }
    const uint16_t *h = src;
    if (t == ATTN_BF16)
        for (size_t i = 0; i < n; i++)
            dst[i] = attn_bf16_to_f32(h[i]);
    else
        for (size_t i = 0; i < n; i++)
            dst[i] = attn_f16_to_f32(h[i]);
}

/* The fastest widening this CPU runs: F16C vcvtph2ps and AVX2 shifts when
 * present (widen_f16c.c), else attn_widen_portable. Exact either way. */
attn_widen_fn attn_widen_best(void);

/* n f32 values rounded to type t (nearest even, attn_store_elem's bits)
 * into dst (element offset 0). */
typedef void (*attn_narrow_fn)(const float *src, int32_t t, void *dst, size_t n);

static inline void attn_narrow_portable(const float *src, int32_t t, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        attn_store_elem(dst, t, i, src[i]);
}

/* The fastest narrowing this CPU runs: F16C vcvtps2ph and AVX2 integer
 * rounding when present (widen_f16c.c), else attn_narrow_portable. The
 * same bits either way. */
attn_narrow_fn attn_narrow_best(void);

#endif
