/* The BLAS's own sgemm on this machine: a reference point beside the FMA
 * roof, not a roof. The FMA roof is what the FMA ports do with their
 * operands in registers; a kernel that streams its operands through the
 * caches reaches some fraction of it, and how large a fraction depends on
 * the machine as much as on the kernel. A tuned GEMM library's large
 * square sgemm shows that fraction here, so a prefill figure of "67 % of
 * the FMA roof" reads against what the machine's own GEMM gets: on a
 * Sapphire Rapids VM both OpenBLAS's and MKL's sgemm reached ~70 % of the
 * FMA roof, on the same VM where the fused attention kernels sat at
 * 63-70 %.
 *
 * Each thread of the team multiplies its own pair of n x n matrices with
 * OpenBLAS held to one thread, as the FMA peak runs one kernel a core: the
 * team's GFLOP/s with no thread pool of OpenBLAS's own in the way. OpenBLAS
 * chooses its kernel itself (DYNAMIC_ARCH; ATTN_CPU_MASK does not reach
 * it): its name goes with the figure. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peak.h"
#include "timer.h"

/* ATTN_PEAK_SGEMM_N = 2048: 17 GFLOP a thread, ~0.1 s at 160 GFLOP/s, and
 * 48 MiB of operands a thread, far past L2, as a GEMM that must block for
 * the caches is. */
enum { SGEMM_MAX_REPS = 15 };

/* OpenBLAS's own declarations (cblas.h of OpenBLAS has them; restated so a
 * cblas.h of another origin still compiles). */
extern void openblas_set_num_threads(int);
extern int openblas_get_num_threads(void);
extern char *openblas_get_config(void);
extern char *openblas_get_corename(void);

void attn_peak_sgemm_library(char *out, size_t cap)
{
    /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." + corename: keep the
     * name, the version and the kernel. */
    char name[32] = "", version[32] = "";
    const char *config = openblas_get_config();
    if (!config || sscanf(config, "%31s %31s", name, version) != 2)
        snprintf(name, sizeof name, "OpenBLAS"), version[0] = '\0';
    const char *core = openblas_get_corename();
    snprintf(out, cap, "%s%s%s %s", name, version[0] ? " " : "", version, core ? core : "?");
}

/* Small values from a per-thread linear congruential sequence: the
 * products stay finite and normal (no subnormal assists in the timing). */
static void fill(float *x, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = 0.25f + (float)(seed >> 8) * (1.0f / 16777216.0f);
    }
}

double attn_peak_measure_sgemm(int threads, int reps)
{
    if (threads < 1)
        return NAN;
    reps = reps < 1 ? 1 : reps > SGEMM_MAX_REPS ? SGEMM_MAX_REPS : reps;
    const size_t n = ATTN_PEAK_SGEMM_N, elems = n * n;
    float **buf = calloc((size_t)threads * 3, sizeof *buf);
    int ok = buf != NULL;
    for (int i = 0; ok && i < threads * 3; i++) {
        void *p = NULL;
        ok = posix_memalign(&p, 64, elems * sizeof(float)) == 0;
        buf[i] = p;
    }
    if (!ok) {
        for (int i = 0; buf && i < threads * 3; i++)
            free(buf[i]);
        free(buf);
        return NAN;
    }
    /* Each thread fills (first-touches) its own operands. */
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        fill(buf[3 * t], elems, 1u + 2u * (unsigned)t);
        fill(buf[3 * t + 1], elems, 2u + 2u * (unsigned)t);
        memset(buf[3 * t + 2], 0, elems * sizeof(float));
    }
    const int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    double rate[SGEMM_MAX_REPS];
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up (OpenBLAS's buffers) */
        const int64_t t0 = attn_now_ns();
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f,
                        buf[3 * t], (int)n, buf[3 * t + 1], (int)n, 0.0f, buf[3 * t + 2], (int)n);
        }
        const int64_t t1 = attn_now_ns();
        if (r >= 0)
            rate[r] = 2.0 * (double)n * (double)n * (double)n * threads / ((double)(t1 - t0));
    }
    openblas_set_num_threads(saved);
    for (int i = 0; i < threads * 3; i++)
        free(buf[i]);
    free(buf);
    return attn_median(rate, reps);
}
