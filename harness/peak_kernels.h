/* The inner loops of `attnbench peak`, one file per ISA so each gets its
 * own compiler flags (harness/sources.cmake); peak.c decides at run time,
 * from attn_cpu()->features, which of them this CPU may run.
 *
 * FMA kernels run `rounds` rounds of `chains` independent multiply-add
 * chains and return a value that depends on every chain, so nothing is
 * optimised away. How many chains saturate the FMA units is latency x
 * ports, which differs between microarchitectures (4-cycle FMA on 2 ports
 * wants 8 in flight, 5 cycles want 10, ...), so each ISA has kernels for
 * several counts and peak.c keeps the best. Every count leaves room for the
 * two constants in registers (16 ymm: at most 14 chains; 32 zmm: 28): a
 * kernel that spills measures the stack, not the FMA units — ctest
 * `peak_no_spill` disassembles every kernel and fails on any memory
 * operand inside its loop. */
#ifndef ATTN_PEAK_KERNELS_H
#define ATTN_PEAK_KERNELS_H

#include <stddef.h>

#include "big_alloc.h"

typedef float (*attn_peak_fma_fn)(long rounds);

typedef struct attn_peak_fma_kernel {
    int chains;           /* independent accumulators */
    int lanes;            /* floats per accumulator */
    attn_peak_fma_fn run; /* flops per round: chains x lanes x 2 */
} attn_peak_fma_kernel;

/* Each list ends with {0}. Kernel functions are named
 * attn_peak_fma_<isa>_c<chains> (the spill test finds them by name). */
/* Portable C, built without vectorisation: mulss + addss, what code
 * compiled without ISA flags (naive) runs. */
extern const attn_peak_fma_kernel attn_peak_fma_scalar_kernels[];
/* vfmadd on ymm (AVX2 + FMA). */
extern const attn_peak_fma_kernel attn_peak_fma_avx2_kernels[];
/* vfmadd on zmm (AVX-512F). */
extern const attn_peak_fma_kernel attn_peak_fma_avx512_kernels[];

/* bf16 kernels (peak_avx512bf16.c, peak_amx.c): `chains` independent
 * instructions per round, each `lanes` bf16 multiply-adds (2 flops). The
 * vdpbf16ps ones are named attn_peak_fma_avx512bf16_c<n> for the spill test. */
extern const attn_peak_fma_kernel attn_peak_bf16_avx512_kernels[];
extern const attn_peak_fma_kernel attn_peak_bf16_amx_kernels[];

/* One kernel on a team of `threads`: GFLOP/s, median of `reps` runs of
 * about `seconds` each (peak.c). */
double attn_peak_measure_kernel(const attn_peak_fma_kernel *k, int threads, int reps,
                                double seconds);
/* Its parts, for a roof measured beside a row (roof_probe.h): the rounds
 * one thread runs in about `seconds`, and one timed run of the team,
 * in GFLOP/s of the team. */
long attn_peak_kernel_rounds(const attn_peak_fma_kernel *k, double seconds);
double attn_peak_kernel_pass(const attn_peak_fma_kernel *k, int threads, long rounds);

/* y[i] = exp(x[i]) with glibc's expf (naive, blocked, blas, stream, xsmm);
 * the SIMD exps are the variants' own attn_exp_avx2_array and
 * attn_exp_avx512_array (impls/). */
void attn_peak_exp_libm(const float *x, float *y, size_t n);

/* Read kernels: each returns a sum of every float it read, so no load is
 * optimised away. A decode kernel streams K and V (two streams) with
 * software prefetch, so the read roof is the best of several ways to read,
 * not one plain loop (which under-read a Sapphire Rapids machine by 15 %):
 *   plain        one stream per thread, plain C (-O3, baseline ISA)
 *   streams      the thread's parts of `n_arrays` arrays read side by side
 *   *_prefetch   AVX2 loads with prefetcht0 `ahead` bytes ahead
 *   *_blocks     the same, the arrays in turn a block at a time (a decode
 *                kernel's K block, then its V block)
 * `arrays` holds n_arrays pointers, each to n floats. */
float attn_peak_read(const float *a, size_t n);
float attn_peak_read_streams(const float *const *arrays, int n_arrays, size_t n);
float attn_peak_read_avx2_prefetch(const float *const *arrays, int n_arrays, size_t n,
                                   size_t ahead);
/* The arrays in turn, `block` floats of each (a multiple of 16; at most 3
 * arrays), as a decode kernel reads a key block of K, then of V. */
float attn_peak_read_avx2_blocks(const float *const *arrays, int n_arrays, size_t n, size_t block,
                                 size_t ahead);
void attn_peak_triad(float *a, const float *b, const float *c, float s, size_t n);

/* Three arrays of `bytes` each on `pages` (big_alloc.h: the pages the
 * rows' inputs get, so the roof reads what they read); touched first by
 * the team that measures. */
typedef struct attn_peak_stream {
    float *a, *b, *c;
    size_t n;
} attn_peak_stream;
int attn_peak_stream_alloc(attn_peak_stream *s, size_t bytes, attn_pages pages);
void attn_peak_stream_touch(attn_peak_stream *s, int threads);
/* read: the best of the read kernels (its name to read_kernel, cap 32,
 * when not NULL); triad as information. */
void attn_peak_stream_measure(attn_peak_stream *s, int threads, int reps, double *read_gbs,
                              double *triad_gbs, char *read_kernel);
/* The read kernels one by one, for a roof measured beside a row
 * (roof_probe.h): the index of the kernel named `name` that this CPU runs
 * (-1: none), the next one this CPU runs after index i (-1 to start; -1
 * at the end), a kernel's name, and one pass of kernel i over the three
 * arrays on a team of `threads`, in GB/s. */
int attn_peak_read_kernel_find(const char *name);
int attn_peak_read_kernel_next(int i);
const char *attn_peak_read_kernel_name(int i);
double attn_peak_read_pass(attn_peak_stream *s, int kernel, int threads);
void attn_peak_stream_free(attn_peak_stream *s);

#endif
