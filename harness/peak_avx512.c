/* AVX-512 kernels: the FMA peak (16 independent zmm chains; two FMA units
 * with 4-cycle latency need 8) and the throughput of the avx512 variant's
 * exp (impls/simd_avx512.h). Compiled with -mavx512f -mfma, like the
 * variant (harness/sources.cmake); peak.c calls them only when the CPU and
 * OS support AVX-512F. */
#include <immintrin.h>

#include "peak_kernels.h"
#include "simd_avx512.h"

float attn_peak_fma_avx512(long rounds)
{
    __m512 acc[ATTN_PEAK_CHAINS];
    for (int j = 0; j < ATTN_PEAK_CHAINS; j++)
        acc[j] = _mm512_set1_ps(1.0f + 0.001f * (float)j);
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
    for (long r = 0; r < rounds; r++)
        for (int j = 0; j < ATTN_PEAK_CHAINS; j++)
            acc[j] = _mm512_fmadd_ps(acc[j], m, c);
    __m512 sum = acc[0];
    for (int j = 1; j < ATTN_PEAK_CHAINS; j++)
        sum = _mm512_add_ps(sum, acc[j]);
    return _mm512_reduce_add_ps(sum);
}

void attn_peak_exp_avx512(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, attn_exp_avx512(_mm512_loadu_ps(x + i)));
    for (; i < n; i++) /* the arrays peak.c passes are whole vectors: unused */
        y[i] = x[i];
}
