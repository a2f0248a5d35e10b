/* vec_avx512.h — the vector primitives of flash_block_generic.h for
 * AVX-512F: 16 float lanes, masks in k registers (masked FMA and moves).
 * See vec_avx2.h for the contract of each. -mavx512f -mfma. */
#ifndef ATTN_VEC_AVX512_H
#define ATTN_VEC_AVX512_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "exp_avx512.h"

enum { VEC_LANES = 16 };
typedef __m512 vec_f;
typedef __m512i vec_i;
typedef __mmask16 vec_mask;

static inline vec_f vec_zero(void)
{
    return _mm512_setzero_ps();
}
static inline vec_f vec_set1(float x)
{
    return _mm512_set1_ps(x);
}
static inline vec_f vec_load(const float *p) /* 64-byte aligned */
{
    return _mm512_load_ps(p);
}
static inline void vec_store(float *p, vec_f x)
{
    _mm512_store_ps(p, x);
}
/* The compiler folds it into the FMA's {1to16} memory operand. */
static inline vec_f vec_broadcast(const float *p)
{
    return _mm512_set1_ps(*p);
}
/* An empty asm that takes x in a zmm register and may change it: GCC 12
 * can no longer fold the load into its uses as a memory operand. Not on
 * SIMDe (tests/emu512/), where a __m512 is no register. */
static inline vec_f vec_in_register(vec_f x)
{
#ifdef __AVX512F__
    __asm__("" : "+v"(x));
#endif
    return x;
}
static inline vec_f vec_fmadd(vec_f a, vec_f b, vec_f c)
{
    return _mm512_fmadd_ps(a, b, c);
}
static inline vec_f vec_fmsub(vec_f a, vec_f b, vec_f c)
{
    return _mm512_fmsub_ps(a, b, c);
}
static inline vec_f vec_mul(vec_f a, vec_f b)
{
    return _mm512_mul_ps(a, b);
}
static inline vec_f vec_add(vec_f a, vec_f b)
{
    return _mm512_add_ps(a, b);
}
static inline vec_f vec_sub(vec_f a, vec_f b)
{
    return _mm512_sub_ps(a, b);
}
static inline vec_f vec_max_nan_skips(vec_f x, vec_f y)
{
    return _mm512_max_ps(x, y);
}
static inline vec_f vec_exp(vec_f x)
{
    return attn_exp_avx512(x);
}
static inline vec_i vec_load_i32(const int32_t *p)
{
    return _mm512_load_si512(p);
}
static inline vec_i vec_zero_i32(void)
{
    return _mm512_setzero_si512();
}
static inline vec_mask vec_sees(vec_i seen, int32_t j)
{
    return _mm512_cmpgt_epi32_mask(seen, _mm512_set1_epi32(j));
}
static inline vec_mask vec_mask_none(void)
{
    return 0;
}
static inline vec_f vec_select(vec_mask m, vec_f yes, vec_f no)
{
    return _mm512_mask_mov_ps(no, m, yes);
}
static inline vec_f vec_fmadd_where(vec_mask m, vec_f a, vec_f b, vec_f c)
{
    return _mm512_mask3_fmadd_ps(a, b, c, m);
}
static inline vec_f vec_zero_where_minus_inf(vec_f x)
{
    return _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, _mm512_set1_ps(-INFINITY), _CMP_EQ_OQ),
                              _mm512_setzero_ps());
}
static inline int vec_any_not_one(vec_f x)
{
    return _mm512_cmp_ps_mask(x, _mm512_set1_ps(1.0f), _CMP_NEQ_UQ) != 0;
}

#endif
