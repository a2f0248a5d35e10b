/* The FMA roof against an independent, minimal, spill-free kernel in the
 * same run: hand-written asm with the chains pinned to registers (12 ymm
 * or 24 zmm FMA chains; 12 xmm mulss+addss chains for scalar), nothing
 * else in the loop. `attnbench peak`'s figure for every ISA this CPU has
 * must be at least 90 % of it, at 1 thread and at all threads; a roof
 * below what a trivial kernel reaches is not an upper bound. The ratio
 * is the best of several pairs' (the two sides back to back), each side
 * the median of 3 runs of 20 ms, so a stolen time slice hits both alike. */
#include <math.h>
#include <omp.h>
#include <stdio.h>

#include "check.h"
#include "peak.h"
#include "timer.h"

#include "peak_reference_chains.h"

static void asm_avx2(long rounds)
{
    __asm__ volatile(
        "vbroadcastss %[m], %%ymm14\n\t"
        "vbroadcastss %[c], %%ymm15\n\t" CHAIN12("vmovaps %%ymm15, %%ymm") "1:\n\t" CHAIN12(
            "vfmadd132ps %%ymm14, %%ymm15, %%ymm") "dec %[r]\n\t"
                                                   "jnz 1b\n\t"
                                                   "vzeroupper\n\t"
        : [r] "+r"(rounds)
        : [m] "m"(m_const), [c] "m"(c_const)
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
          "xmm11", "xmm14", "xmm15", "cc");
}

/* tests/peak_reference_avx512.c: needs -mavx512f to name zmm16..31. */
void asm_avx512(long rounds);

static void asm_scalar(long rounds)
{
    __asm__ volatile("movss %[m], %%xmm14\n\t"
                     "movss %[c], %%xmm15\n\t" CHAIN12("movaps %%xmm15, %%xmm") "1:\n\t" CHAIN12(
                         "mulss %%xmm14, %%xmm") CHAIN12("addss %%xmm15, %%xmm") "dec %[r]\n\t"
                                                                                 "jnz 1b\n\t"
                     : [r] "+r"(rounds)
                     : [m] "m"(m_const), [c] "m"(c_const)
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm14", "xmm15", "cc");
}

typedef struct ref_kernel {
    attn_isa isa;
    void (*run)(long rounds);
    double flops_per_round;
} ref_kernel;

static const ref_kernel refs[] = {
    {ATTN_ISA_SCALAR, asm_scalar, 12 * 2},
    {ATTN_ISA_AVX2, asm_avx2, 12 * 8 * 2},
    {ATTN_ISA_AVX512, asm_avx512, 24 * 16 * 2},
};

static double ref_gflops(const ref_kernel *k, int threads, long rounds)
{
    int64_t t0 = attn_now_ns();
#pragma omp parallel num_threads(threads)
    k->run(rounds);
    double secs = (double)(attn_now_ns() - t0) * 1e-9;
    return (double)threads * (double)rounds * k->flops_per_round / secs * 1e-9;
}

/* The same statistic over the same window as attn_peak_measure_fma's:
 * the median of 3 runs of >= `seconds` each (rounds sized once). A kernel
 * timed over a few milliseconds against one timed over 20 ms would win
 * every burst of a neighbour's load on its own: the shorter window more
 * often falls between the bursts. */
static long rounds_for(const ref_kernel *k, int threads, double seconds)
{
    long rounds = 1L << 16;
    while (rounds < (1L << 40)) {
        int64_t t0 = attn_now_ns();
#pragma omp parallel num_threads(threads)
        k->run(rounds);
        if ((double)(attn_now_ns() - t0) * 1e-9 >= seconds)
            break;
        rounds *= 2;
    }
    return rounds;
}

static double ref_median_gflops(const ref_kernel *k, int threads, long rounds)
{
    double r[3];
    for (int i = 0; i < 3; i++)
        r[i] = ref_gflops(k, threads, rounds);
    double lo = fmin(r[0], fmin(r[1], r[2])), hi = fmax(r[0], fmax(r[1], r[2]));
    return r[0] + r[1] + r[2] - lo - hi;
}

int main(void)
{
    check_tally t = {0, 0};
    const int all = omp_get_num_procs();
    const int counts[2] = {1, all};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        const ref_kernel *k = &refs[i];
        char why[128];
        if (!attn_isa_available(k->isa, why, sizeof why)) {
            printf("SKIP %s: %s\n", attn_isa_name(k->isa), why);
            continue;
        }
        for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
            int threads = counts[c];
            const long rounds = rounds_for(k, threads, 0.02); /* also the warm-up */
            /* At least 3 alternating pairs; more, up to 12, only while the
             * best pair's ratio is short of 95 %. Each pair's two sides
             * run back to back, so the ratio is taken within a pair and
             * the best pair counts: a neighbour's burst on a shared VM
             * can cost one side 10 % for a while (in CI the best attnbench
             * figure of 12 pairs once stood at 89.6 % of the best asm
             * figure, taken from another pair), while a roof that is
             * really low (spills: 1.75x) is low in every pair. What fails
             * is a shortfall of over 10 % in every one of 12 pairs: the
             * noise of these machines (+-5 %) is not, a broken peak loop
             * is. */
            double best_ratio = 0, ref = 0, peak = 0;
            int rep = 0;
            while (rep < 3 || (rep < 12 && best_ratio < 0.95)) {
                double r = ref_median_gflops(k, threads, rounds);
                double p = attn_peak_measure_fma(k->isa, threads, 3, 0.02, NULL);
                if (p / r > best_ratio) {
                    best_ratio = p / r;
                    ref = r;
                    peak = p;
                }
                rep++;
            }
            printf("%-7s threads=%d: attnbench peak %.1f GFLOP/s, minimal asm kernel %.1f "
                   "GFLOP/s: %.1f %% (the best of %d pairs)\n",
                   attn_isa_name(k->isa), threads, peak, ref, 100.0 * best_ratio, rep);
            CHECK(&t, best_ratio >= 0.90,
                  "%s at %d threads: peak %.1f < 90%% of %.1f in every pair", attn_isa_name(k->isa),
                  threads, peak, ref);
        }
    }
    return check_report("peak_reference", &t);
}
