/* Scalar FMA-peak kernels and the libm exp loop. Built with vectorisation
 * off (harness/sources.cmake) so the chains stay scalar chains: mulss +
 * addss, what portable C compiled for baseline x86-64 runs. 16 xmm: up to
 * 14 chains beside the two constants. */
#include <math.h>

#include "peak_kernels.h"

static inline float scalar_set1(float x)
{
    return x;
}
static inline float scalar_fma(float a, float m, float c)
{
    return a * m + c; /* two roundings: ISO C does not contract */
}
static inline float scalar_add(float a, float b)
{
    return a + b;
}

#define PEAK_VEC float
#define PEAK_SET1 scalar_set1
#define PEAK_FMA scalar_fma
#define PEAK_ADD scalar_add
#include "peak_fma_chains.h"

float attn_peak_fma_scalar_c6(long rounds)
{
    return peak_chains(rounds, 6);
}
float attn_peak_fma_scalar_c8(long rounds)
{
    return peak_chains(rounds, 8);
}
float attn_peak_fma_scalar_c10(long rounds)
{
    return peak_chains(rounds, 10);
}
float attn_peak_fma_scalar_c12(long rounds)
{
    return peak_chains(rounds, 12);
}
float attn_peak_fma_scalar_c14(long rounds)
{
    return peak_chains(rounds, 14);
}

const attn_peak_fma_kernel attn_peak_fma_scalar_kernels[] = {
    {6, 1, attn_peak_fma_scalar_c6},   {8, 1, attn_peak_fma_scalar_c8},
    {10, 1, attn_peak_fma_scalar_c10}, {12, 1, attn_peak_fma_scalar_c12},
    {14, 1, attn_peak_fma_scalar_c14}, {0, 0, 0},
};

void attn_peak_exp_libm(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = expf(x[i]);
}
