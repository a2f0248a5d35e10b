/* AVX512_BF16 peak kernels: chains of vdpbf16ps (each: 16 lanes x 2 bf16
 * products x 2 flops, f32 accumulate) on zmm, the constants in registers.
 * Compiled with -mavx512f -mavx512bf16 (harness/sources.cmake); peak_bf16.c
 * calls them only when the CPU has AVX512_BF16. */
#include <immintrin.h>

#include "peak_kernels.h"

static inline __m512 dp_step(__m512 acc, __m512 a, __m512 b)
{
    return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}
/* bf16 2^-16 in both halves of every lane, whatever the template asks
 * for: each round adds 2^-31 to accumulators near 1, so nothing
 * overflows, underflows or turns subnormal. */
static inline __m512 bf16_pairs(float ignored)
{
    (void)ignored;
    return _mm512_castsi512_ps(_mm512_set1_epi32(0x37803780));
}

#define PEAK_VEC __m512
#define PEAK_SET1 _mm512_set1_ps
#define PEAK_OPERAND bf16_pairs
#define PEAK_FMA dp_step
#define PEAK_ADD _mm512_add_ps
#include "peak_fma_chains.h"

static float first_lane(__m512 x)
{
    return _mm512_cvtss_f32(x);
}

float attn_peak_fma_avx512bf16_c8(long rounds)
{
    return first_lane(peak_chains(rounds, 8));
}
float attn_peak_fma_avx512bf16_c16(long rounds)
{
    return first_lane(peak_chains(rounds, 16));
}
float attn_peak_fma_avx512bf16_c24(long rounds)
{
    return first_lane(peak_chains(rounds, 24));
}

const attn_peak_fma_kernel attn_peak_bf16_avx512_kernels[] = {
    {8, 32, attn_peak_fma_avx512bf16_c8},
    {16, 32, attn_peak_fma_avx512bf16_c16},
    {24, 32, attn_peak_fma_avx512bf16_c24},
    {0, 0, 0},
};
