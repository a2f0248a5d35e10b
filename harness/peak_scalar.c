/* Scalar FMA-peak kernel and the libm exp loop. Built with vectorisation
 * off (harness/sources.cmake) so the chains stay scalar chains. */
#include <math.h>

#include "peak_kernels.h"

float attn_peak_fma_scalar(long rounds)
{
    float acc[ATTN_PEAK_SCALAR_CHAINS];
    for (int j = 0; j < ATTN_PEAK_SCALAR_CHAINS; j++)
        acc[j] = 1.0f + 0.001f * (float)j;
    /* acc -> c / (1 - m) = 1: values stay near 1, never subnormal or Inf. */
    const float m = 0.999999f, c = 1e-6f;
    for (long r = 0; r < rounds; r++)
        for (int j = 0; j < ATTN_PEAK_SCALAR_CHAINS; j++)
            acc[j] = acc[j] * m + c;
    float sum = 0.0f;
    for (int j = 0; j < ATTN_PEAK_SCALAR_CHAINS; j++)
        sum += acc[j];
    return sum;
}

void attn_peak_exp_libm(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = expf(x[i]);
}
