/* roof_probe.h — a roof measured beside a row (matrix --roof paired, the
 * default). Why: on a shared machine the roofs move under the rows. On a
 * 2-core Zen 5 VM the 2-thread read roof measured 35.9 GB/s at a run's
 * start and 58-69 GB/s minutes later (the neighbours' memory traffic
 * comes and goes), so decode rows timed at a quiet minute ran at 104-113 %
 * of the start's roof, and the 1-thread FMA peak read 231 GFLOP/s in one
 * run and 256 in the next. A ratio to a roof measured minutes apart is as
 * much the neighbours' as the code's. So each round of a row's calls also
 * times one pass of the roof's own kernel — the one the run's peak chose
 * (FMA chains, read kernel), at the row's thread count — and the row is
 * judged against the best of those passes, 3 at least
 * (matrix_set_paired_roof: a neighbour can slow a pass, nothing speeds
 * one up; the median let a stretch of stolen passes put rows at
 * 109-180 % of a "roof" on a Zen 4 VM): a variant against its roof from
 * one stretch of time, as a ratio target is timed against its twin
 * (matrix_pair.c). */
#ifndef ATTN_ROOF_PROBE_H
#define ATTN_ROOF_PROBE_H

#include <stddef.h>

#include "peak.h"
#include "peak_kernels.h"

typedef struct attn_roof_probe {
    int bandwidth; /* 1: the read roof (GB/s); 0: a compute roof (GFLOP/s) */
    int threads;
    /* compute: the kernel and the rounds of one pass */
    const attn_peak_fma_kernel *kernel;
    long rounds;
    /* bandwidth: the arrays (not owned) and the read kernel's index */
    attn_peak_stream *arrays;
    int read_kernel;
} attn_roof_probe;

/* A compute roof's probe at `threads`: the kernel of the roof's
 * instructions (the fp32 FMA kernels of the best ISA this CPU runs, or
 * the bf16 ones) with `chains` chains when the run's peak chose them
 * (> 0), else the best of one pass of each; one pass about `seconds`
 * long. 0, or -1 with `why` when this CPU lacks the roof's instructions. */
int attn_roof_probe_compute(attn_roof_probe *p, attn_roof roof, int chains, int threads,
                            double seconds, char *why, size_t cap);

/* The read roof's probe at `threads` over `arrays` (touched already):
 * the read kernel named `kernel` (the run's peak's choice), else, when
 * that is NULL, empty or not one this CPU runs, the best of one pass of
 * each. One pass reads the three arrays once. */
void attn_roof_probe_read(attn_roof_probe *p, attn_peak_stream *arrays, const char *kernel,
                          int threads);

/* One pass: GFLOP/s (compute) or GB/s (bandwidth) of the team. */
double attn_roof_probe_pass(const attn_roof_probe *p);

/* What the probe measures, for messages: "avx512 FMA, 24 chains",
 * "read streams3". */
void attn_roof_probe_describe(const attn_roof_probe *p, char *buf, size_t cap);

#endif
