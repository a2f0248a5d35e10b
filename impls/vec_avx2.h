/* vec_avx2.h — the vector primitives flash_block_generic.h is written
 * against, for AVX2+FMA: 8 float lanes, masks as all-ones lanes (blends).
 * The same names are defined by vec_avx512.h and vec_portable16.h; a
 * kernel file includes exactly one of them (all static inline: one
 * translation unit each, no name pasting). -mavx2 -mfma. */
#ifndef ATTN_VEC_AVX2_H
#define ATTN_VEC_AVX2_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "exp_avx2.h"

enum { VEC_LANES = 8 };
typedef __m256 vec_f;
typedef __m256i vec_i;
typedef __m256 vec_mask; /* all-ones lanes: vblendvps reads the sign bit */

static inline vec_f vec_zero(void)
{
    return _mm256_setzero_ps();
}
static inline vec_f vec_set1(float x)
{
    return _mm256_set1_ps(x);
}
static inline vec_f vec_load(const float *p) /* 32-byte aligned */
{
    return _mm256_load_ps(p);
}
static inline void vec_store(float *p, vec_f x)
{
    _mm256_store_ps(p, x);
}
/* AVX2 FMA cannot broadcast from memory: vbroadcastss, then the FMA. */
static inline vec_f vec_broadcast(const float *p)
{
    return _mm256_broadcast_ss(p);
}
/* x, held in a register for all its uses: the compiler may otherwise
 * fold its load into each FMA that reads it, one load per use. Here x as
 * it is: avx2's register tiles (12 accumulators of 16 ymm) leave GCC 12
 * registers enough, its hot loops fold no load, and holding them anyway
 * gave 1.00-1.01x on a Sapphire Rapids (not measured on a Zen 3). */
static inline vec_f vec_in_register(vec_f x)
{
    return x;
}
static inline vec_f vec_fmadd(vec_f a, vec_f b, vec_f c) /* a·b + c, one rounding */
{
    return _mm256_fmadd_ps(a, b, c);
}
static inline vec_f vec_fmsub(vec_f a, vec_f b, vec_f c) /* a·b - c, one rounding */
{
    return _mm256_fmsub_ps(a, b, c);
}
static inline vec_f vec_mul(vec_f a, vec_f b)
{
    return _mm256_mul_ps(a, b);
}
static inline vec_f vec_add(vec_f a, vec_f b)
{
    return _mm256_add_ps(a, b);
}
static inline vec_f vec_sub(vec_f a, vec_f b)
{
    return _mm256_sub_ps(a, b);
}
/* max(x, y), y when either is NaN (VMAXPS): a NaN x is skipped. */
static inline vec_f vec_max_nan_skips(vec_f x, vec_f y)
{
    return _mm256_max_ps(x, y);
}
static inline vec_f vec_exp(vec_f x)
{
    return attn_exp_avx2(x);
}
static inline vec_i vec_load_i32(const int32_t *p) /* 32-byte aligned */
{
    return _mm256_load_si256((const __m256i *)p);
}
static inline vec_i vec_zero_i32(void)
{
    return _mm256_setzero_si256();
}
/* Lanes whose seen count exceeds j: the rows that see key j. */
static inline vec_mask vec_sees(vec_i seen, int32_t j)
{
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(seen, _mm256_set1_epi32(j)));
}
static inline vec_mask vec_mask_none(void)
{
    return _mm256_setzero_ps();
}
/* m ? yes : no, per lane. */
static inline vec_f vec_select(vec_mask m, vec_f yes, vec_f no)
{
    return _mm256_blendv_ps(no, yes, m);
}
/* a·b + c in the lanes of m, c untouched elsewhere (no 0·NaN can reach a
 * lane outside m). */
static inline vec_f vec_fmadd_where(vec_mask m, vec_f a, vec_f b, vec_f c)
{
    return _mm256_blendv_ps(c, _mm256_fmadd_ps(a, b, c), m);
}
/* 0 where x is -inf, x elsewhere. */
static inline vec_f vec_zero_where_minus_inf(vec_f x)
{
    return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ), x);
}
/* Nonzero when some lane of x is not 1 (NaN included). */
static inline int vec_any_not_one(vec_f x)
{
    return _mm256_movemask_ps(_mm256_cmp_ps(x, _mm256_set1_ps(1.0f), _CMP_NEQ_UQ));
}

#endif
