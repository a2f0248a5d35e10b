/* The read and triad roofs (peak.h): three arrays well past the last-level
 * cache, read by the best of several read kernels (peak_kernels.h), each
 * thread its static share. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "peak.h"
#include "peak_kernels.h"
#include "timer.h"

enum { MAX_REPS = 64 };

static int clamp_reps(int reps)
{
    return reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
}

static int have(uint32_t features)
{
    return (features & ~attn_cpu()->features) == 0;
}

/* Splits [0, n) into `parts` static chunks of whole cache lines. */
static void chunk(size_t n, int parts, int part, size_t *begin, size_t *end)
{
    size_t lines = (n + 15) / 16, per = (lines + (size_t)parts - 1) / (size_t)parts;
    *begin = (size_t)part * per * 16;
    *end = *begin + per * 16;
    if (*begin > n)
        *begin = n;
    if (*end > n)
        *end = n;
}

/* The read kernels the read roof is the best of (peak_kernels.h): a
 * decode kernel reads two streams with software prefetch, which a single
 * plain loop does not measure. `streams`: the thread's parts of a, b and c
 * side by side (3) or one after the other (1). */
typedef struct read_kernel {
    const char *name;
    int streams;
    size_t prefetch_ahead; /* 0: no software prefetch (plain C) */
    size_t block;          /* > 0: the streams in turn, this many floats of each */
    uint32_t features;
} read_kernel;

static const read_kernel read_kernels[] = {
    {"plain", 1, 0, 0, 0},
    {"streams3", 3, 0, 0, 0},
    {"avx2-prefetch-1k", 1, 1024, 0, ATTN_CPU_AVX2 | ATTN_CPU_FMA},
    {"avx2-prefetch-4k", 1, 4096, 0, ATTN_CPU_AVX2 | ATTN_CPU_FMA},
    {"avx2-prefetch-4k-streams3", 3, 4096, 0, ATTN_CPU_AVX2 | ATTN_CPU_FMA},
    {"avx2-prefetch-8k-blocks3", 3, 8192, 6144, ATTN_CPU_AVX2 | ATTN_CPU_FMA},
};
enum { READ_KERNELS = sizeof read_kernels / sizeof read_kernels[0] };

static float read_part(const read_kernel *k, const float *const *parts, size_t n)
{
    float s = 0.0f;
    if (k->streams == 3 && k->block)
        return attn_peak_read_avx2_blocks(parts, 3, n, k->block, k->prefetch_ahead);
    if (k->streams == 3)
        return k->prefetch_ahead ? attn_peak_read_avx2_prefetch(parts, 3, n, k->prefetch_ahead)
                                 : attn_peak_read_streams(parts, 3, n);
    for (int i = 0; i < 3; i++)
        s += k->prefetch_ahead ? attn_peak_read_avx2_prefetch(parts + i, 1, n, k->prefetch_ahead)
                               : attn_peak_read(parts[i], n);
    return s;
}

/* One pass; returns its wall time in seconds. `k` NULL: triad. */
static double stream_pass(const read_kernel *k, float *a, float *b, float *c, size_t n, int threads)
{
    volatile float sink = 0.0f;
    int64_t t0 = attn_now_ns();
#pragma omp parallel num_threads(threads)
    {
        size_t lo, hi;
        chunk(n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
        if (k) {
            const float *parts[3] = {a + lo, b + lo, c + lo};
            float s = read_part(k, parts, hi - lo);
            if (omp_get_thread_num() == 0)
                sink = s;
        } else {
            attn_peak_triad(a + lo, b + lo, c + lo, 0.5f, hi - lo);
        }
    }
    (void)sink;
    return (double)(attn_now_ns() - t0) * 1e-9;
}

int attn_peak_stream_alloc(attn_peak_stream *s, size_t bytes, attn_pages pages)
{
    s->n = bytes / sizeof(float) < 16 ? 16 : bytes / sizeof(float);
    s->a = attn_big_alloc(s->n * sizeof(float), pages);
    s->b = attn_big_alloc(s->n * sizeof(float), pages);
    s->c = attn_big_alloc(s->n * sizeof(float), pages);
    if (s->a && s->b && s->c)
        return 0;
    free(s->a);
    free(s->b);
    free(s->c);
    return -1;
}

void attn_peak_stream_free(attn_peak_stream *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
}

/* First touch, in parallel (faulting 1.5 GiB in on one thread is slow),
 * by the same static split the passes of that team use. */
void attn_peak_stream_touch(attn_peak_stream *s, int threads)
{
#pragma omp parallel num_threads(threads)
    {
        size_t lo, hi;
        chunk(s->n, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            s->a[i] = 1.0f;
            s->b[i] = 2.0f;
            s->c[i] = 0.5f;
        }
    }
}

int attn_peak_read_kernel_find(const char *name)
{
    for (int i = 0; name && i < READ_KERNELS; i++)
        if (strcmp(read_kernels[i].name, name) == 0 && have(read_kernels[i].features))
            return i;
    return -1;
}

int attn_peak_read_kernel_next(int i)
{
    for (i++; i < READ_KERNELS; i++)
        if (have(read_kernels[i].features))
            return i;
    return -1;
}

const char *attn_peak_read_kernel_name(int i)
{
    return i >= 0 && i < READ_KERNELS ? read_kernels[i].name : "?";
}

double attn_peak_read_pass(attn_peak_stream *s, int kernel, int threads)
{
    if (kernel < 0 || kernel >= READ_KERNELS)
        return NAN;
    const double moved = 3.0 * (double)s->n * sizeof(float);
    return moved / stream_pass(&read_kernels[kernel], s->a, s->b, s->c, s->n, threads) * 1e-9;
}

/* Median GB/s of one kernel (NULL: triad) over `reps` passes after one
 * warm-up pass. Every kernel moves the three arrays once (triad reads b
 * and c and writes a: STREAM's count, without the write-allocate read). */
static double stream_rate(attn_peak_stream *s, const read_kernel *k, int threads, int reps)
{
    const double moved = 3.0 * (double)s->n * sizeof(float);
    double rate[MAX_REPS];
    stream_pass(k, s->a, s->b, s->c, s->n, threads);
    for (int r = 0; r < reps; r++)
        rate[r] = moved / stream_pass(k, s->a, s->b, s->c, s->n, threads) * 1e-9;
    return attn_median(rate, reps);
}

void attn_peak_stream_measure(attn_peak_stream *s, int threads, int reps, double *read_gbs,
                              double *triad_gbs, char *read_kernel_name)
{
    reps = clamp_reps(reps);
    *read_gbs = NAN;
    for (int i = 0; i < READ_KERNELS; i++) {
        const read_kernel *k = &read_kernels[i];
        if (!have(k->features))
            continue;
        double gbs = stream_rate(s, k, threads, reps);
        if (!(gbs <= *read_gbs)) {
            *read_gbs = gbs;
            if (read_kernel_name)
                snprintf(read_kernel_name, 32, "%s", k->name);
        }
    }
    *triad_gbs = stream_rate(s, NULL, threads, reps);
}

int attn_peak_measure_bandwidth(size_t bytes, int threads, int reps, double *read_gbs,
                                double *triad_gbs, char *read_kernel_name)
{
    attn_peak_stream s;
    if (attn_peak_stream_alloc(&s, bytes, attn_peak_default_opts().pages) != 0)
        return -1;
    attn_peak_stream_touch(&s, threads);
    attn_peak_stream_measure(&s, threads, reps, read_gbs, triad_gbs, read_kernel_name);
    attn_peak_stream_free(&s);
    return 0;
}
