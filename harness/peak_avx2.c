/* AVX2 + FMA peak kernels: ymm FMA chains (16 registers: up to 14 chains
 * plus the two constants) and the read kernel with software prefetch.
 * Compiled with -mavx2 -mfma (harness/sources.cmake); peak.c calls them
 * only when the CPU has both. */
#include <immintrin.h>

#include "peak_kernels.h"

#define PEAK_VEC __m256
#define PEAK_SET1 _mm256_set1_ps
#define PEAK_FMA _mm256_fmadd_ps
#define PEAK_ADD _mm256_add_ps
#include "peak_fma_chains.h"

static float first_lane(__m256 x)
{
    return _mm256_cvtss_f32(x);
}

float attn_peak_fma_avx2_c8(long rounds)
{
    return first_lane(peak_chains(rounds, 8));
}
float attn_peak_fma_avx2_c10(long rounds)
{
    return first_lane(peak_chains(rounds, 10));
}
float attn_peak_fma_avx2_c12(long rounds)
{
    return first_lane(peak_chains(rounds, 12));
}
float attn_peak_fma_avx2_c14(long rounds)
{
    return first_lane(peak_chains(rounds, 14));
}

const attn_peak_fma_kernel attn_peak_fma_avx2_kernels[] = {
    {8, 8, attn_peak_fma_avx2_c8},
    {10, 8, attn_peak_fma_avx2_c10},
    {12, 8, attn_peak_fma_avx2_c12},
    {14, 8, attn_peak_fma_avx2_c14},
    {0, 0, 0},
};

/* Each stream in 64-byte lines: two ymm loads per line into separate
 * accumulators, and a prefetch `ahead` bytes further on. */
float attn_peak_read_avx2_prefetch(const float *const *arrays, int n_arrays, size_t n, size_t ahead)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int s = 0; s < n_arrays; s++) {
            const float *p = arrays[s] + i;
            _mm_prefetch((const char *)p + ahead, _MM_HINT_T0);
            acc0 = _mm256_add_ps(acc0, _mm256_load_ps(p));
            acc1 = _mm256_add_ps(acc1, _mm256_load_ps(p + 8));
        }
    float sum = first_lane(_mm256_add_ps(acc0, acc1));
    for (; i < n; i++)
        for (int s = 0; s < n_arrays; s++)
            sum += arrays[s][i];
    return sum;
}

/* The arrays in turn, `block` floats of each (a multiple of 16), as a
 * decode kernel reads a key block of K and then of V; in 64-byte lines,
 * each prefetched `ahead` bytes further on in its own array. */
float attn_peak_read_avx2_blocks(const float *const *arrays, int n_arrays, size_t n, size_t block,
                                 size_t ahead)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    size_t i0 = 0;
    for (; i0 + block <= n; i0 += block)
        for (int s = 0; s < n_arrays; s++)
            for (size_t i = i0; i < i0 + block; i += 16) {
                const float *p = arrays[s] + i;
                _mm_prefetch((const char *)p + ahead, _MM_HINT_T0);
                acc0 = _mm256_add_ps(acc0, _mm256_load_ps(p));
                acc1 = _mm256_add_ps(acc1, _mm256_load_ps(p + 8));
            }
    const float *rest[3];
    for (int s = 0; s < n_arrays && s < 3; s++)
        rest[s] = arrays[s] + i0;
    return first_lane(_mm256_add_ps(acc0, acc1)) +
           attn_peak_read_avx2_prefetch(rest, n_arrays < 3 ? n_arrays : 3, n - i0, ahead);
}
