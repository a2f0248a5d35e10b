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
static inline float scalar_mul(float a, float m)
{
    return a * m;
}
static inline float scalar_add(float a, float b)
{
    return a + b;
}

/* One empty asm naming every accumulator of the kernel: nothing before
 * it may move below it, nothing after it above. `chains` is a constant
 * after inlining, so the switch folds to one case; a count without a
 * case gets no barrier, and ctest peak_no_spill fails its loop. */
#define X2(a, i) "+x"(a[i]), "+x"(a[i + 1])
#define X6(a) X2(a, 0), X2(a, 2), X2(a, 4)
#define X8(a) X6(a), X2(a, 6)
#define X10(a) X8(a), X2(a, 8)
#define X12(a) X10(a), X2(a, 10)
#define X14(a) X12(a), X2(a, 12)
#define PEAK_ROUND_BARRIER(a, chains)                                                              \
    do {                                                                                           \
        switch (chains) {                                                                          \
        case 6:                                                                                    \
            __asm__("" : X6(a));                                                                   \
            break;                                                                                 \
        case 8:                                                                                    \
            __asm__("" : X8(a));                                                                   \
            break;                                                                                 \
        case 10:                                                                                   \
            __asm__("" : X10(a));                                                                  \
            break;                                                                                 \
        case 12:                                                                                   \
            __asm__("" : X12(a));                                                                  \
            break;                                                                                 \
        case 14:                                                                                   \
            __asm__("" : X14(a));                                                                  \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

#define PEAK_VEC float
#define PEAK_SET1 scalar_set1
#define PEAK_MUL scalar_mul
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
