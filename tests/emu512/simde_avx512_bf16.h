/* The AVX512_BF16 instructions avx512_bf16 uses, emulated to the bit on
 * SIMDe (after simde_avx512.h). SIMDe 0.7.4 has _mm512_dpbf16_ps but adds
 * the even product first, without denormals-are-zero; it has no
 * _mm512_cvtne2ps_pbh. Both as the hardware defines them (Intel's
 * pseudo-code; matched bit for bit on a Zen 5 over 32 M random lanes of
 * small integers, wide exponent ranges and raw bit patterns with NaN, Inf
 * and subnormals, and by test_emu512 against the native kernel):
 *   vdpbf16ps       per f32 lane: acc += a_odd·b_odd, then acc += a_even·b_even,
 *                   each an FMA (the product of two bf16 is exact) rounded to
 *                   nearest even, subnormal inputs (bf16 and acc) read as
 *                   zero and subnormal results written as zero (sign kept);
 *   vcvtne2ps2bf16  round to nearest even, subnormal inputs as zero, NaN kept
 *                   a quiet NaN; the second operand fills the low half. */
#ifndef ATTN_TEST_SIMDE_AVX512_BF16_H
#define ATTN_TEST_SIMDE_AVX512_BF16_H

#include <stdint.h>
#include <string.h>

/* x with every subnormal lane made a zero of its sign. */
static inline simde__m512 attn_emu_flush(simde__m512 x)
{
    const simde__m512i b = simde_mm512_castps_si512(x);
    const simde__mmask16 tiny = simde_mm512_cmpeq_epi32_mask(
        simde_mm512_and_si512(b, simde_mm512_set1_epi32(0x7F800000)), simde_mm512_setzero_si512());
    return simde_mm512_castsi512_ps(
        simde_mm512_mask_and_epi32(b, tiny, b, simde_mm512_set1_epi32((int)0x80000000u)));
}

static inline simde__m512 attn_emu_dpbf16_ps(simde__m512 acc, simde__m512bh a, simde__m512bh b)
{
    const simde__m512i ai = (simde__m512i)a, bi = (simde__m512i)b;
    const simde__m512i high = simde_mm512_set1_epi32((int)0xFFFF0000u);
    const simde__m512 a_odd =
        attn_emu_flush(simde_mm512_castsi512_ps(simde_mm512_and_si512(ai, high)));
    const simde__m512 b_odd =
        attn_emu_flush(simde_mm512_castsi512_ps(simde_mm512_and_si512(bi, high)));
    const simde__m512 a_even =
        attn_emu_flush(simde_mm512_castsi512_ps(simde_mm512_slli_epi32(ai, 16)));
    const simde__m512 b_even =
        attn_emu_flush(simde_mm512_castsi512_ps(simde_mm512_slli_epi32(bi, 16)));
    acc = attn_emu_flush(acc);
    acc = attn_emu_flush(simde_mm512_fmadd_ps(a_odd, b_odd, acc));
    return attn_emu_flush(simde_mm512_fmadd_ps(a_even, b_even, acc));
}

static inline uint16_t attn_emu_cvtne_bf16(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((b >> 16) | 0x0040u);
    if ((b & 0x7F800000u) == 0)
        b &= 0x80000000u;
    b += 0x7FFFu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

static inline simde__m512bh attn_emu_cvtne2ps_pbh(simde__m512 a, simde__m512 b)
{
    float fa[16], fb[16];
    uint16_t h[32];
    simde_mm512_storeu_ps(fa, a);
    simde_mm512_storeu_ps(fb, b);
    for (int i = 0; i < 16; i++) {
        h[i] = attn_emu_cvtne_bf16(fb[i]);
        h[16 + i] = attn_emu_cvtne_bf16(fa[i]);
    }
    return (simde__m512bh)simde_mm512_loadu_si512(h);
}

#undef _mm512_dpbf16_ps
#undef _mm512_cvtne2ps_pbh
#define _mm512_dpbf16_ps attn_emu_dpbf16_ps
#define _mm512_cvtne2ps_pbh attn_emu_cvtne2ps_pbh

/* The emulated copies beside the library's own. */
#define attn_variant_avx512_bf16 attn_variant_avx512_bf16_emu
#define attn_avx512_bf16_decode_kernel attn_avx512_bf16_decode_kernel_emu
#define attn_avx512_bf16_decode_reads attn_avx512_bf16_decode_reads_emu

#endif
