/* The chain loop every FMA peak kernel shares, written once and compiled
 * in each ISA's file with that file's vector type (peak_scalar.c,
 * peak_avx2.c, peak_avx512.c define PEAK_VEC, PEAK_SET1, PEAK_FMA and
 * PEAK_LANES before including it; the scalar file defines PEAK_MUL and
 * PEAK_ROUND_BARRIER instead of PEAK_FMA). `chains` is a compile-time constant in
 * every caller, so the accumulator array is fully unrolled into
 * registers (ctest peak_no_spill checks that it is). */
#ifndef ATTN_PEAK_FMA_CHAINS_H
#define ATTN_PEAK_FMA_CHAINS_H

/* The two operands beside each accumulator: set like the accumulators
 * unless the ISA's instruction takes another type (bf16 pairs). */
#ifndef PEAK_OPERAND
#define PEAK_OPERAND PEAK_SET1
#endif

enum { PEAK_MAX_CHAINS = 28 };

static inline __attribute__((always_inline)) PEAK_VEC peak_chains(long rounds, const int chains)
{
    PEAK_VEC acc[PEAK_MAX_CHAINS];
    /* The empty asm makes every start value opaque, so the compiler can
     * neither fold chains together nor precompute any of them. */
#pragma GCC unroll 32
    for (int j = 0; j < chains; j++) {
        acc[j] = PEAK_SET1(1.0f + 0.001f * (float)j);
        __asm__("" : "+v"(acc[j]));
    }
    /* acc -> c / (1 - m) = 1: values stay near 1, never subnormal or Inf. */
    const PEAK_VEC m = PEAK_OPERAND(0.999999f), c = PEAK_OPERAND(1e-6f);
    for (long r = 0; r < rounds; r++) {
        /* Unrolled whatever the count: a loop over the array would keep
         * the chains in memory (gcc stops unrolling fully near 20). */
#ifdef PEAK_MUL
        /* A multiply-then-add ISA (scalar: mulss + addss): every multiply
         * of the round, then every add, as the minimal asm kernel of
         * ctest peak_reference issues them. gcc interleaves the pairs
         * (mul, add, mul, add, ...) unless told otherwise, and on a Zen 4
         * that order topped out at 11.4 GFLOP/s where the grouped one
         * reached 13.3 (1 thread, best of 40 runs of 20 M rounds): the
         * test failed there, 86 % of the asm kernel. The barrier is an
         * empty asm on every accumulator at once, so no add can be
         * scheduled above it. */
#pragma GCC unroll 32
        for (int j = 0; j < chains; j++)
            acc[j] = PEAK_MUL(acc[j], m);
        PEAK_ROUND_BARRIER(acc, chains);
#pragma GCC unroll 32
        for (int j = 0; j < chains; j++)
            acc[j] = PEAK_ADD(acc[j], c);
#else
#pragma GCC unroll 32
        for (int j = 0; j < chains; j++)
            acc[j] = PEAK_FMA(acc[j], m, c);
#endif
    }
#pragma GCC unroll 32
    for (int j = 1; j < chains; j++)
        acc[0] = PEAK_ADD(acc[0], acc[j]);
    return acc[0];
}

#endif
