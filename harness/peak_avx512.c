/* AVX-512 FMA peak kernels: zmm chains (32 registers: up to 28 chains plus
 * the two constants; two 4-cycle FMA units need 8, a slower or wider core
 * more). Compiled with -mavx512f -mfma (harness/sources.cmake); peak.c
 * calls them only when the CPU and OS support AVX-512F. */
#include <immintrin.h>

#include "peak_kernels.h"

#define PEAK_VEC __m512
#define PEAK_SET1 _mm512_set1_ps
#define PEAK_FMA _mm512_fmadd_ps
#define PEAK_ADD _mm512_add_ps
#include "peak_fma_chains.h"

static float first_lane(__m512 x)
{
    return _mm512_cvtss_f32(x);
}

float attn_peak_fma_avx512_c8(long rounds)
{
    return first_lane(peak_chains(rounds, 8));
}
float attn_peak_fma_avx512_c12(long rounds)
{
    return first_lane(peak_chains(rounds, 12));
}
float attn_peak_fma_avx512_c16(long rounds)
{
    return first_lane(peak_chains(rounds, 16));
}
float attn_peak_fma_avx512_c20(long rounds)
{
    return first_lane(peak_chains(rounds, 20));
}
float attn_peak_fma_avx512_c24(long rounds)
{
    return first_lane(peak_chains(rounds, 24));
}
float attn_peak_fma_avx512_c28(long rounds)
{
    return first_lane(peak_chains(rounds, 28));
}

const attn_peak_fma_kernel attn_peak_fma_avx512_kernels[] = {
    {8, 16, attn_peak_fma_avx512_c8},
    {12, 16, attn_peak_fma_avx512_c12},
    {16, 16, attn_peak_fma_avx512_c16},
    {20, 16, attn_peak_fma_avx512_c20},
    {24, 16, attn_peak_fma_avx512_c24},
    {28, 16, attn_peak_fma_avx512_c28},
    {0, 0, 0},
};
