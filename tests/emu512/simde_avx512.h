/* The avx512 variant's own sources on a CPU without AVX-512: each wrapper
 * in this directory includes this header, then one impls/ file verbatim.
 * SIMDe (libsimde-dev, header-only) implements the _mm512_* intrinsics
 * those files use on the AVX2 + FMA + F16C they are compiled for here
 * (FMAs stay fused: two 256-bit vfmadd per 512-bit one), and its native
 * aliases keep the files' intrinsic names. tests/test_emu512.c runs the
 * result. It proves the kernels' logic, not their speed. */
#ifndef ATTN_TEST_SIMDE_AVX512_H
#define ATTN_TEST_SIMDE_AVX512_H

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/f16c.h>

/* Intrinsics SIMDe 0.7.4 lacks (or has no alias for). Masked loads read
 * only their lanes, as the hardware does: a lane past a tensor's end is
 * never touched. */
static inline simde__m512 attn_emu_mask3_fmadd_ps(simde__m512 a, simde__m512 b, simde__m512 c,
                                                  simde__mmask16 k)
{
    return simde_mm512_mask_mov_ps(c, k, simde_mm512_fmadd_ps(a, b, c));
}

static inline void attn_emu_mask_storeu_ps(void *p, simde__mmask16 k, simde__m512 a)
{
    float v[16];
    simde_mm512_storeu_ps(v, a);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1)
            ((float *)p)[i] = v[i];
}

static inline simde__m512 attn_emu_maskz_loadu_ps(simde__mmask16 k, const void *p)
{
    float v[16];
    for (int i = 0; i < 16; i++)
        v[i] = k >> i & 1 ? ((const float *)p)[i] : 0.0f;
    return simde_mm512_loadu_ps(v);
}

static inline simde__m512i attn_emu_maskz_loadu_epi32(simde__mmask16 k, const void *p)
{
    int32_t v[16];
    for (int i = 0; i < 16; i++)
        v[i] = k >> i & 1 ? ((const int32_t *)p)[i] : 0;
    return simde_mm512_loadu_si512(v);
}

static inline simde__m512i attn_emu_maskz_loadu_epi16(simde__mmask32 k, const void *p)
{
    int16_t v[32];
    for (int i = 0; i < 32; i++)
        v[i] = k >> i & 1 ? ((const int16_t *)p)[i] : 0;
    return simde_mm512_loadu_si512(v);
}

/* f16 and bf16 widening, half by half on F16C / AVX2: exact, as on AVX-512. */
static inline simde__m512 attn_emu_cvtph_ps(simde__m256i h)
{
    return simde_mm512_insertf32x8(
        simde_mm512_castps256_ps512(simde_mm256_cvtph_ps(simde_mm256_castsi256_si128(h))),
        simde_mm256_cvtph_ps(simde_mm256_extracti128_si256(h, 1)), 1);
}

static inline simde__m512i attn_emu_cvtepu16_epi32(simde__m256i h)
{
    return simde_mm512_inserti32x8(
        simde_mm512_castsi256_si512(simde_mm256_cvtepu16_epi32(simde_mm256_castsi256_si128(h))),
        simde_mm256_cvtepu16_epi32(simde_mm256_extracti128_si256(h, 1)), 1);
}

/* clang's headers define some of these as macros: replace them. */
#undef _mm512_cvtph_ps
#undef _mm512_cvtepu16_epi32
#undef _mm512_mask3_fmadd_ps
#undef _mm512_mask_storeu_ps
#undef _mm512_maskz_loadu_ps
#undef _mm512_maskz_loadu_epi32
#undef _mm512_maskz_loadu_epi16
#undef _mm512_shuffle_f32x4
#define _mm512_cvtph_ps attn_emu_cvtph_ps
#define _mm512_cvtepu16_epi32 attn_emu_cvtepu16_epi32
#define _mm512_mask3_fmadd_ps attn_emu_mask3_fmadd_ps
#define _mm512_mask_storeu_ps attn_emu_mask_storeu_ps
#define _mm512_maskz_loadu_ps attn_emu_maskz_loadu_ps
#define _mm512_maskz_loadu_epi32 attn_emu_maskz_loadu_epi32
#define _mm512_maskz_loadu_epi16 attn_emu_maskz_loadu_epi16
#define _mm512_shuffle_f32x4 simde_mm512_shuffle_f32x4

/* The emulated copies beside the library's own (which the test links too). */
#define attn_variant_avx512 attn_variant_avx512_emu
#define attn_avx512_decode_kernel attn_avx512_decode_kernel_emu
#define attn_exp_avx512_array attn_exp_avx512_array_emu
#define attn_exp_avx512_bf16p_array attn_exp_avx512_bf16p_array_emu

#endif
