/* STREAM-style memory kernels in plain C (no ISA flags): a sequential
 * stream is limited by the memory system, not by vector width. */
#include "peak_kernels.h"

float attn_peak_read(const float *a, size_t n)
{
    /* 16 independent sums, so the loop is load-bound, not add-latency-bound
     * (and vectorises without reassociating anything). */
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += a[i + j];
    for (; i < n; i++)
        acc[0] += a[i];
    float sum = 0.0f;
    for (int j = 0; j < 16; j++)
        sum += acc[j];
    return sum;
}

/* One 64-byte line of each array per step: as many open streams as
 * arrays, which the hardware prefetchers track side by side. */
float attn_peak_read_streams(const float *const *arrays, int n_arrays, size_t n)
{
    float acc[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int s = 0; s < n_arrays; s++)
            for (int j = 0; j < 16; j++)
                acc[j] += arrays[s][i + j];
    for (; i < n; i++)
        for (int s = 0; s < n_arrays; s++)
            acc[0] += arrays[s][i];
    float sum = 0.0f;
    for (int j = 0; j < 16; j++)
        sum += acc[j];
    return sum;
}

void attn_peak_triad(float *restrict a, const float *restrict b, const float *restrict c, float s,
                     size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}
