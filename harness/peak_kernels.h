/* The inner loops of `attnbench peak`, one file per ISA so each gets its
 * own compiler flags (harness/sources.cmake); peak.c decides at run time,
 * from attn_cpu()->features, which of them this CPU may run.
 *
 * FMA kernels run `rounds` rounds of independent multiply-add chains and
 * return a value that depends on every chain, so nothing is optimised
 * away. Enough chains to cover latency x ports: 4-cycle FMA latency on
 * 2 ports needs 8 in flight; 16 leaves room for a slower core. The scalar
 * kernel has 12: with a multiplier and an addend in registers, 16 chains
 * would not fit the 16 xmm registers and spill. */
#ifndef ATTN_PEAK_KERNELS_H
#define ATTN_PEAK_KERNELS_H

#include <stddef.h>

enum {
    ATTN_PEAK_CHAINS = 16,
    ATTN_PEAK_SCALAR_CHAINS = 12,
    /* flops per round: chains x lanes x 2 (multiply and add) */
    ATTN_PEAK_SCALAR_FLOPS = ATTN_PEAK_SCALAR_CHAINS * 1 * 2,
    ATTN_PEAK_AVX2_FLOPS = ATTN_PEAK_CHAINS * 8 * 2,
    ATTN_PEAK_AVX512_FLOPS = ATTN_PEAK_CHAINS * 16 * 2,
};

/* Portable C, built without vectorisation: mulss + addss, what code
 * compiled without ISA flags (naive) runs. */
float attn_peak_fma_scalar(long rounds);
/* vfmadd on ymm (AVX2 + FMA). */
float attn_peak_fma_avx2(long rounds);
/* vfmadd on zmm (AVX-512F). */
float attn_peak_fma_avx512(long rounds);

/* y[i] = exp(x[i]) with each variant family's exp: glibc's expf (naive,
 * blocked, blas, stream, xsmm) and the SIMD exps of impls/simd_avx2.h and
 * impls/simd_avx512.h (avx2, avx512). n a multiple of 16. */
void attn_peak_exp_libm(const float *x, float *y, size_t n);
void attn_peak_exp_avx2(const float *x, float *y, size_t n);
void attn_peak_exp_avx512(const float *x, float *y, size_t n);

/* STREAM-style memory kernels (plain C, -O3): the sum of a[0..n) and
 * a[i] = b[i] + s * c[i]. */
float attn_peak_read(const float *a, size_t n);
void attn_peak_triad(float *a, const float *b, const float *c, float s, size_t n);

#endif
