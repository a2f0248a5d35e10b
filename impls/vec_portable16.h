/* vec_portable16.h — the vector primitives of flash_block_generic.h in
 * plain C, 16 float lanes with a 16-bit lane mask: the AVX-512 layer's
 * semantics without AVX-512. Instantiating the generic kernel on it with
 * the avx512 variant's tile sizes (flash_avx512_tiles.h) runs the very
 * loop structure, tiles, masks and edges of the avx512 kernel on any
 * x86-64 (tests/test_generic16.c), so that logic is verified on machines
 * that cannot run the avx512 variant. FMAs are fmaf (one rounding, as
 * vfmadd); the exp is libm's expf. Not tuned: a test vehicle. */
#ifndef ATTN_VEC_PORTABLE16_H
#define ATTN_VEC_PORTABLE16_H

#include <math.h>
#include <stdint.h>

enum { VEC_LANES = 16 };
typedef struct vec_f {
    float x[VEC_LANES];
} vec_f;
typedef struct vec_i {
    int32_t x[VEC_LANES];
} vec_i;
typedef uint32_t vec_mask; /* bit r: lane r */

static inline vec_f vec_zero(void)
{
    return (vec_f){{0}};
}
static inline vec_f vec_set1(float a)
{
    vec_f r;
    for (int i = 0; i < VEC_LANES; i++)
        r.x[i] = a;
    return r;
}
static inline vec_f vec_load(const float *p)
{
    vec_f r;
    for (int i = 0; i < VEC_LANES; i++)
        r.x[i] = p[i];
    return r;
}
static inline void vec_store(float *p, vec_f a)
{
    for (int i = 0; i < VEC_LANES; i++)
        p[i] = a.x[i];
}
static inline vec_f vec_broadcast(const float *p)
{
    return vec_set1(*p);
}
static inline vec_f vec_in_register(vec_f x) /* nothing to hold here */
{
    return x;
}
static inline vec_f vec_fmadd(vec_f a, vec_f b, vec_f c)
{
    for (int i = 0; i < VEC_LANES; i++)
        c.x[i] = fmaf(a.x[i], b.x[i], c.x[i]);
    return c;
}
static inline vec_f vec_fmsub(vec_f a, vec_f b, vec_f c)
{
    for (int i = 0; i < VEC_LANES; i++)
        c.x[i] = fmaf(a.x[i], b.x[i], -c.x[i]);
    return c;
}
static inline vec_f vec_mul(vec_f a, vec_f b)
{
    for (int i = 0; i < VEC_LANES; i++)
        a.x[i] *= b.x[i];
    return a;
}
static inline vec_f vec_add(vec_f a, vec_f b)
{
    for (int i = 0; i < VEC_LANES; i++)
        a.x[i] += b.x[i];
    return a;
}
static inline vec_f vec_sub(vec_f a, vec_f b)
{
    for (int i = 0; i < VEC_LANES; i++)
        a.x[i] -= b.x[i];
    return a;
}
/* As VMAXPS: y when either is NaN. */
static inline vec_f vec_max_nan_skips(vec_f x, vec_f y)
{
    for (int i = 0; i < VEC_LANES; i++)
        y.x[i] = x.x[i] > y.x[i] ? x.x[i] : y.x[i];
    return y;
}
static inline vec_f vec_exp(vec_f a)
{
    for (int i = 0; i < VEC_LANES; i++)
        a.x[i] = expf(a.x[i]);
    return a;
}
static inline vec_i vec_load_i32(const int32_t *p)
{
    vec_i r;
    for (int i = 0; i < VEC_LANES; i++)
        r.x[i] = p[i];
    return r;
}
static inline vec_i vec_zero_i32(void)
{
    return (vec_i){{0}};
}
static inline vec_mask vec_sees(vec_i seen, int32_t j)
{
    vec_mask m = 0;
    for (int i = 0; i < VEC_LANES; i++)
        m |= (vec_mask)(seen.x[i] > j) << i;
    return m;
}
static inline vec_mask vec_mask_none(void)
{
    return 0;
}
static inline vec_f vec_select(vec_mask m, vec_f yes, vec_f no)
{
    for (int i = 0; i < VEC_LANES; i++)
        if (m >> i & 1)
            no.x[i] = yes.x[i];
    return no;
}
static inline vec_f vec_fmadd_where(vec_mask m, vec_f a, vec_f b, vec_f c)
{
    for (int i = 0; i < VEC_LANES; i++)
        if (m >> i & 1)
            c.x[i] = fmaf(a.x[i], b.x[i], c.x[i]);
    return c;
}
static inline vec_f vec_zero_where_minus_inf(vec_f a)
{
    for (int i = 0; i < VEC_LANES; i++)
        if (a.x[i] == -INFINITY)
            a.x[i] = 0.0f;
    return a;
}
static inline int vec_any_not_one(vec_f a)
{
    int any = 0;
    for (int i = 0; i < VEC_LANES; i++)
        any |= !(a.x[i] == 1.0f);
    return any;
}

#endif
