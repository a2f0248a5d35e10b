/* AVX2 + FMA kernels: the FMA peak (16 independent ymm chains) and the
 * throughput of the avx2 variant's exp (impls/simd_avx2.h). Compiled with
 * -mavx2 -mfma (harness/sources.cmake); peak.c calls them only when the
 * CPU has both. */
#include <immintrin.h>

#include "peak_kernels.h"
#include "simd_avx2.h"

float attn_peak_fma_avx2(long rounds)
{
    __m256 acc[ATTN_PEAK_CHAINS];
    for (int j = 0; j < ATTN_PEAK_CHAINS; j++)
        acc[j] = _mm256_set1_ps(1.0f + 0.001f * (float)j);
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
    for (long r = 0; r < rounds; r++)
        for (int j = 0; j < ATTN_PEAK_CHAINS; j++)
            acc[j] = _mm256_fmadd_ps(acc[j], m, c);
    __m256 sum = acc[0];
    for (int j = 1; j < ATTN_PEAK_CHAINS; j++)
        sum = _mm256_add_ps(sum, acc[j]);
    float lanes[8];
    _mm256_storeu_ps(lanes, sum);
    return lanes[0] + lanes[7];
}

void attn_peak_exp_avx2(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, attn_exp_avx2(_mm256_loadu_ps(x + i)));
    for (; i < n; i++) /* the arrays peak.c passes are whole vectors: unused */
        y[i] = x[i];
}
