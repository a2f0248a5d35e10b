/* One job, read best whole (a little over the ~400 lines a file here
 * usually has): the FMA and exp roofs, the peak table and its print; the
 * bandwidth roof is peak_bandwidth.c, the bf16 ones peak_bf16.c. */
/* Measures the roofline: FMA peak per ISA, exp throughput, memory
 * bandwidth. The ISA kernels live in peak_<isa>.c with their own flags. */
#include "peak.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "exp_array.h" /* attn_exp_avx2_array, attn_exp_avx512_array */
#include "peak_kernels.h"
#include "timer.h"

enum { MAX_REPS = 64, EXP_ARRAY = 4096 };

/* Repetitions kept for a median: at least one, at most the rate buffers. */
static int clamp_reps(int reps)
{
    return reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
}

attn_peak_opts attn_peak_default_opts(void)
{
    return (attn_peak_opts){
        .fma = 1,
        .exp = 1,
        .bandwidth = 1,
        .sgemm = 1,
        .repetitions = 5,
        .seconds = 0.05,
        .bw_array_bytes = (size_t)ATTN_PEAK_DEFAULT_BW_MIB << 20,
        .pages = ATTN_PAGES_HUGE,
    };
}

static const char *const isa_names[ATTN_ISA_COUNT] = {"scalar", "avx2", "avx512"};
static const uint32_t isa_features[ATTN_ISA_COUNT] = {0, ATTN_CPU_AVX2 | ATTN_CPU_FMA,
                                                      ATTN_CPU_AVX512F};
static const char *const exp_names[ATTN_EXP_COUNT] = {"expf", "avx2", "avx512"};
/* The features of the variants whose exp each kind is. */
static const uint32_t exp_features[ATTN_EXP_COUNT] = {0, ATTN_CPU_AVX2 | ATTN_CPU_FMA,
                                                      ATTN_CPU_AVX512F | ATTN_CPU_FMA};

const char *attn_isa_name(attn_isa isa)
{
    return isa >= 0 && isa < ATTN_ISA_COUNT ? isa_names[isa] : "?";
}

const char *attn_exp_name(attn_exp_kind kind)
{
    return kind >= 0 && kind < ATTN_EXP_COUNT ? exp_names[kind] : "?";
}

static int features_present(uint32_t need, char *why, size_t cap)
{
    uint32_t missing = need & ~attn_cpu()->features;
    if (!missing)
        return 1;
    if (why && cap) {
        char names[128];
        attn_cpu_format(missing, names, sizeof names);
        snprintf(why, cap, "needs %.100s", names);
    }
    return 0;
}

int attn_isa_available(attn_isa isa, char *why, size_t cap)
{
    if (isa < 0 || isa >= ATTN_ISA_COUNT)
        return 0;
    return features_present(isa_features[isa], why, cap);
}

int attn_exp_available(attn_exp_kind kind, char *why, size_t cap)
{
    if (kind < 0 || kind >= ATTN_EXP_COUNT)
        return 0;
    return features_present(exp_features[kind], why, cap);
}

void attn_peak_init(attn_peak *pk)
{
    memset(pk, 0, sizeof *pk);
    for (int t = 0; t < ATTN_PEAK_MAX_THREAD_COUNTS; t++) {
        for (int i = 0; i < ATTN_ISA_COUNT; i++)
            pk->fma_gflops[i][t] = NAN;
        for (int e = 0; e < ATTN_EXP_COUNT; e++)
            pk->exp_gelem_per_s[e][t] = NAN;
        pk->read_gbytes_per_s[t] = NAN;
        pk->triad_gbytes_per_s[t] = NAN;
        for (int b = 0; b < ATTN_BF16_COUNT; b++)
            pk->bf16_gflops[b][t] = NAN;
        pk->sgemm_gflops[t] = NAN;
    }
}

int attn_peak_index(const attn_peak *pk, int threads)
{
    for (int i = 0; i < pk->n_threads; i++)
        if (pk->threads[i] == threads)
            return i;
    return -1;
}

/* Moves column `from` of every figure to `to`. */
static void move_column(attn_peak *pk, int from, int to)
{
    pk->threads[to] = pk->threads[from];
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        pk->fma_gflops[i][to] = pk->fma_gflops[i][from];
    for (int e = 0; e < ATTN_EXP_COUNT; e++)
        pk->exp_gelem_per_s[e][to] = pk->exp_gelem_per_s[e][from];
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        pk->fma_chains[i][to] = pk->fma_chains[i][from];
    pk->read_gbytes_per_s[to] = pk->read_gbytes_per_s[from];
    memcpy(pk->read_kernel[to], pk->read_kernel[from], sizeof pk->read_kernel[to]);
    pk->triad_gbytes_per_s[to] = pk->triad_gbytes_per_s[from];
    for (int b = 0; b < ATTN_BF16_COUNT; b++)
        pk->bf16_gflops[b][to] = pk->bf16_gflops[b][from];
    pk->sgemm_gflops[to] = pk->sgemm_gflops[from];
}

int attn_peak_add_threads(attn_peak *pk, int threads)
{
    int at = attn_peak_index(pk, threads);
    if (at >= 0)
        return at;
    if (pk->n_threads >= ATTN_PEAK_MAX_THREAD_COUNTS || threads < 1)
        return -1;
    at = pk->n_threads;
    while (at > 0 && pk->threads[at - 1] > threads) {
        move_column(pk, at - 1, at);
        at--;
    }
    pk->n_threads++;
    pk->threads[at] = threads;
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        pk->fma_gflops[i][at] = NAN;
    for (int e = 0; e < ATTN_EXP_COUNT; e++)
        pk->exp_gelem_per_s[e][at] = NAN;
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        pk->fma_chains[i][at] = 0;
    pk->read_gbytes_per_s[at] = NAN;
    pk->read_kernel[at][0] = '\0';
    pk->triad_gbytes_per_s[at] = NAN;
    for (int b = 0; b < ATTN_BF16_COUNT; b++)
        pk->bf16_gflops[b][at] = NAN;
    pk->sgemm_gflops[at] = NAN;
    return at;
}

const attn_peak_fma_kernel *attn_peak_fma_kernels_for(attn_isa isa)
{
    switch (isa) {
    case ATTN_ISA_AVX2:
        return attn_peak_fma_avx2_kernels;
    case ATTN_ISA_AVX512:
        return attn_peak_fma_avx512_kernels;
    default:
        return attn_peak_fma_scalar_kernels;
    }
}

/* Wall time of every thread of a team of `threads` running `rounds`
 * rounds; *team gets the team size the runtime actually gave. */
static double time_fma_team(const attn_peak_fma_kernel *k, int threads, long rounds, int *team)
{
    volatile float sink = 0.0f;
    int got = 1;
    int64_t t0 = attn_now_ns();
#pragma omp parallel num_threads(threads)
    {
        float r = k->run(rounds);
#pragma omp master
        {
            got = omp_get_num_threads();
            sink = r;
        }
    }
    int64_t t1 = attn_now_ns();
    (void)sink;
    *team = got;
    return (double)(t1 - t0) * 1e-9;
}

long attn_peak_kernel_rounds(const attn_peak_fma_kernel *k, double seconds)
{
    /* Calibrated on one thread (this also warms the vector units up:
     * AVX-512 runs at a lower licence for the first microseconds). */
    int team;
    long rounds = 1 << 14;
    double t = 0;
    while ((t = time_fma_team(k, 1, rounds, &team)) < seconds / 8 && rounds < (1L << 40))
        rounds *= 2;
    return (long)((double)rounds * seconds / t) + 1;
}

double attn_peak_kernel_pass(const attn_peak_fma_kernel *k, int threads, long rounds)
{
    int team;
    double secs = time_fma_team(k, threads, rounds, &team);
    return (double)team * (double)rounds * 2.0 * k->chains * k->lanes / secs * 1e-9;
}

double attn_peak_measure_kernel(const attn_peak_fma_kernel *k, int threads, int reps,
                                double seconds)
{
    reps = clamp_reps(reps);
    const long rounds = attn_peak_kernel_rounds(k, seconds);
    attn_peak_kernel_pass(k, threads, rounds); /* warm-up of the whole team */
    double rate[MAX_REPS];
    for (int r = 0; r < reps; r++)
        rate[r] = attn_peak_kernel_pass(k, threads, rounds);
    return attn_median(rate, reps);
}

double attn_peak_measure_fma(attn_isa isa, int threads, int reps, double seconds, int *chains)
{
    if (chains)
        *chains = 0;
    if (!attn_isa_available(isa, NULL, 0) || threads < 1)
        return NAN;
    reps = clamp_reps(reps);
    /* The best chain count differs between microarchitectures (latency x
     * ports): every count that fits the register file is measured. */
    double best = NAN;
    for (const attn_peak_fma_kernel *k = attn_peak_fma_kernels_for(isa); k->chains; k++) {
        double g = attn_peak_measure_kernel(k, threads, reps, seconds);
        if (!(g <= best)) {
            best = g;
            if (chains)
                *chains = k->chains;
        }
    }
    return best;
}

static void run_exp(attn_exp_kind kind, const float *x, float *y, size_t n)
{
    switch (kind) {
    case ATTN_EXP_AVX2:
        attn_exp_avx2_array(x, y, n);
        break;
    case ATTN_EXP_AVX512:
        attn_exp_avx512_array(x, y, n);
        break;
    default:
        attn_peak_exp_libm(x, y, n);
        break;
    }
}

/* Each thread its own 16 KiB input and output (L1-resident: throughput of
 * exp itself, not of memory). Inputs span [-20, 0], what a max-shifted
 * softmax feeds exp. Returns elements per second over the team. */
static double time_exp_team(attn_exp_kind kind, int threads, long rounds, int *team)
{
    volatile float sink = 0.0f;
    int got = 1;
    int64_t t0 = 0, t1 = 0;
#pragma omp parallel num_threads(threads)
    {
        float x[EXP_ARRAY], y[EXP_ARRAY];
        for (int i = 0; i < EXP_ARRAY; i++)
            x[i] = -20.0f * (float)i / EXP_ARRAY;
#pragma omp barrier
#pragma omp master
        t0 = attn_now_ns();
        for (long r = 0; r < rounds; r++)
            run_exp(kind, x, y, EXP_ARRAY);
#pragma omp barrier
#pragma omp master
        {
            t1 = attn_now_ns();
            got = omp_get_num_threads();
            sink = y[EXP_ARRAY - 1];
        }
    }
    (void)sink;
    *team = got;
    return (double)got * (double)rounds * EXP_ARRAY / ((double)(t1 - t0) * 1e-9);
}

double attn_peak_measure_exp(attn_exp_kind kind, int threads, int reps, double seconds)
{
    if (!attn_exp_available(kind, NULL, 0) || threads < 1)
        return NAN;
    reps = clamp_reps(reps);
    int team;
    double per_s = time_exp_team(kind, 1, 16, &team);
    long rounds = (long)(seconds * per_s / EXP_ARRAY) + 1;
    time_exp_team(kind, threads, rounds, &team);
    double rate[MAX_REPS];
    for (int r = 0; r < reps; r++)
        rate[r] = time_exp_team(kind, threads, rounds, &team) * 1e-9;
    return attn_median(rate, reps);
}

int attn_peak_measure(attn_peak *pk, const attn_peak_opts *o, FILE *log)
{
    attn_peak_stream arrays;
    if (o->bandwidth) {
        if (attn_peak_stream_alloc(&arrays, o->bw_array_bytes, o->pages) != 0) {
            fprintf(stderr, "peak: cannot allocate 3 arrays of %zu bytes for bandwidth\n",
                    o->bw_array_bytes);
            return -1;
        }
        int most = pk->n_threads ? pk->threads[pk->n_threads - 1] : 1;
        attn_peak_stream_touch(&arrays, most);
        snprintf(pk->pages, sizeof pk->pages, "%s", attn_pages_name(o->pages));
    }
    for (int ti = 0; ti < pk->n_threads; ti++) {
        int t = pk->threads[ti];
        for (int i = 0; o->fma && i < ATTN_ISA_COUNT; i++) {
            char why[128];
            if (!attn_isa_available((attn_isa)i, why, sizeof why)) {
                if (log && ti == 0)
                    fprintf(log, "SKIP fma %s: %s\n", attn_isa_name((attn_isa)i), why);
                continue;
            }
            pk->fma_gflops[i][ti] = attn_peak_measure_fma((attn_isa)i, t, o->repetitions,
                                                          o->seconds, &pk->fma_chains[i][ti]);
            if (log)
                fprintf(log, "fma %-7s threads=%-3d %9.1f GFLOP/s (best of the chain counts: %d)\n",
                        attn_isa_name((attn_isa)i), t, pk->fma_gflops[i][ti],
                        pk->fma_chains[i][ti]);
        }
        for (int b = 0; o->fma && b < ATTN_BF16_COUNT; b++) {
            char why[128];
            if (!attn_bf16_available((attn_bf16_kind)b, why, sizeof why)) {
                if (log && ti == 0)
                    fprintf(log, "SKIP bf16 %s: %s\n", attn_bf16_name((attn_bf16_kind)b), why);
                continue;
            }
            pk->bf16_gflops[b][ti] =
                attn_peak_measure_bf16((attn_bf16_kind)b, t, o->repetitions, o->seconds);
            if (log)
                fprintf(log, "bf16 %-11s threads=%-3d %9.1f GFLOP/s\n",
                        attn_bf16_name((attn_bf16_kind)b), t, pk->bf16_gflops[b][ti]);
        }
        if (o->sgemm) {
            pk->sgemm_gflops[ti] = attn_peak_measure_sgemm(t, o->repetitions);
            attn_peak_sgemm_library(pk->sgemm_library, sizeof pk->sgemm_library);
            if (log)
                fprintf(log, "sgemm %-9s threads=%-3d %9.1f GFLOP/s (%s, %d^3 a thread)\n", "blas",
                        t, pk->sgemm_gflops[ti], pk->sgemm_library, ATTN_PEAK_SGEMM_N);
        }
        for (int e = 0; o->exp && e < ATTN_EXP_COUNT; e++) {
            char why[128];
            if (!attn_exp_available((attn_exp_kind)e, why, sizeof why)) {
                if (log && ti == 0)
                    fprintf(log, "SKIP exp %s: %s\n", attn_exp_name((attn_exp_kind)e), why);
                continue;
            }
            pk->exp_gelem_per_s[e][ti] =
                attn_peak_measure_exp((attn_exp_kind)e, t, o->repetitions, o->seconds);
            if (log)
                fprintf(log, "exp %-7s threads=%-3d %9.3f Gelem/s\n",
                        attn_exp_name((attn_exp_kind)e), t, pk->exp_gelem_per_s[e][ti]);
        }
        if (o->bandwidth) {
            attn_peak_stream_measure(&arrays, t, o->repetitions, &pk->read_gbytes_per_s[ti],
                                     &pk->triad_gbytes_per_s[ti], pk->read_kernel[ti]);
            if (log)
                fprintf(log, "bandwidth threads=%-3d read %7.1f GB/s (%s)  triad %7.1f GB/s\n", t,
                        pk->read_gbytes_per_s[ti], pk->read_kernel[ti], pk->triad_gbytes_per_s[ti]);
        }
        if (log)
            fflush(log);
    }
    if (o->bandwidth)
        attn_peak_stream_free(&arrays);
    return 0;
}

double attn_peak_fma_for(const attn_peak *pk, int threads)
{
    int ti = attn_peak_index(pk, threads);
    if (ti < 0)
        return NAN;
    for (int i = ATTN_ISA_COUNT - 1; i >= 0; i--)
        if (attn_isa_available((attn_isa)i, NULL, 0) && isfinite(pk->fma_gflops[i][ti]))
            return pk->fma_gflops[i][ti];
    return NAN;
}

double attn_peak_roof_for(const attn_peak *pk, attn_roof roof, int threads)
{
    int ti = attn_peak_index(pk, threads);
    switch (roof) {
    case ATTN_ROOF_BF16_AVX512:
        return ti < 0 ? NAN : pk->bf16_gflops[ATTN_BF16_AVX512][ti];
    case ATTN_ROOF_BF16_AMX:
        return ti < 0 ? NAN : pk->bf16_gflops[ATTN_BF16_AMX][ti];
    default:
        return attn_peak_fma_for(pk, threads);
    }
}

attn_roof attn_peak_highest_roof(const attn_peak *pk, int bf16, int threads)
{
    attn_roof best = ATTN_ROOF_FMA;
    static const attn_roof tensor[] = {ATTN_ROOF_BF16_AVX512, ATTN_ROOF_BF16_AMX};
    for (size_t i = 0; bf16 && i < sizeof tensor / sizeof tensor[0]; i++) {
        const double g = attn_peak_roof_for(pk, tensor[i], threads),
                     now = attn_peak_roof_for(pk, best, threads);
        if (isfinite(g) && (!isfinite(now) || g > now))
            best = tensor[i];
    }
    return best;
}

double attn_peak_read_for(const attn_peak *pk, int threads)
{
    int ti = attn_peak_index(pk, threads);
    return ti < 0 ? NAN : pk->read_gbytes_per_s[ti];
}

const char *attn_peak_best_isa(const attn_peak *pk)
{
    for (int i = ATTN_ISA_COUNT - 1; i >= 0; i--) {
        if (!attn_isa_available((attn_isa)i, NULL, 0))
            continue;
        for (int ti = 0; ti < pk->n_threads; ti++)
            if (isfinite(pk->fma_gflops[i][ti]))
                return attn_isa_name((attn_isa)i);
    }
    return "none";
}

static void print_cell(FILE *f, double x, const char *fmt)
{
    if (isfinite(x))
        fprintf(f, fmt, x);
    else
        fprintf(f, "%12s", "-");
}

int attn_peak_any_finite(const attn_peak *pk, const double *x)
{
    for (int ti = 0; ti < pk->n_threads; ti++)
        if (isfinite(x[ti]))
            return 1;
    return 0;
}

double attn_peak_sgemm_pct(const attn_peak *pk, int threads)
{
    const int ti = attn_peak_index(pk, threads);
    const double roof = attn_peak_fma_for(pk, threads);
    if (ti < 0 || !isfinite(pk->sgemm_gflops[ti]) || !(roof > 0.0))
        return NAN;
    return 100.0 * pk->sgemm_gflops[ti] / roof;
}

void attn_peak_print(FILE *f, const attn_peak *pk)
{
    fprintf(f, "%-26s", "threads");
    for (int ti = 0; ti < pk->n_threads; ti++)
        fprintf(f, "%12d", pk->threads[ti]);
    fprintf(f, "\n");
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        char label[64];
        snprintf(label, sizeof label, "fma %s GFLOP/s", attn_isa_name((attn_isa)i));
        fprintf(f, "%-26s", label);
        for (int ti = 0; ti < pk->n_threads; ti++)
            print_cell(f, pk->fma_gflops[i][ti], "%12.1f");
        char why[128] = "";
        if (!attn_isa_available((attn_isa)i, why, sizeof why)) {
            fprintf(f, "  (%s)\n", why);
            continue;
        }
        snprintf(label, sizeof label, "  best of chains");
        fprintf(f, "\n%-26s", label);
        for (int ti = 0; ti < pk->n_threads; ti++)
            print_cell(f, pk->fma_chains[i][ti] ? pk->fma_chains[i][ti] : NAN, "%12.0f");
        fprintf(f, "\n");
    }
    for (int b = 0; b < ATTN_BF16_COUNT; b++) {
        char label[64];
        snprintf(label, sizeof label, "bf16 %s GFLOP/s", attn_bf16_name((attn_bf16_kind)b));
        fprintf(f, "%-26s", label);
        for (int ti = 0; ti < pk->n_threads; ti++)
            print_cell(f, pk->bf16_gflops[b][ti], "%12.1f");
        char why[128] = "";
        if (!attn_bf16_available((attn_bf16_kind)b, why, sizeof why))
            fprintf(f, "  (%s)", why);
        fprintf(f, "\n");
    }
    for (int e = 0; e < ATTN_EXP_COUNT; e++) {
        char label[64];
        snprintf(label, sizeof label, "exp %s Gelem/s", attn_exp_name((attn_exp_kind)e));
        fprintf(f, "%-26s", label);
        for (int ti = 0; ti < pk->n_threads; ti++)
            print_cell(f, pk->exp_gelem_per_s[e][ti], "%12.3f");
        char why[128] = "";
        if (!attn_exp_available((attn_exp_kind)e, why, sizeof why))
            fprintf(f, "  (%s)", why);
        fprintf(f, "\n");
    }
    if (pk->sgemm_library[0] || attn_peak_any_finite(pk, pk->sgemm_gflops)) {
        fprintf(f, "%-26s", "sgemm GFLOP/s");
        for (int ti = 0; ti < pk->n_threads; ti++)
            print_cell(f, pk->sgemm_gflops[ti], "%12.1f");
        fprintf(f, "  (%s, %d^3 a thread: a reference, not a roof)\n%-26s",
                pk->sgemm_library[0] ? pk->sgemm_library : "the BLAS", ATTN_PEAK_SGEMM_N,
                "  % of the FMA roof");
        for (int ti = 0; ti < pk->n_threads; ti++)
            print_cell(f, attn_peak_sgemm_pct(pk, pk->threads[ti]), "%12.1f");
        fprintf(f, "\n");
    }
    fprintf(f, "%-26s", "read GB/s");
    for (int ti = 0; ti < pk->n_threads; ti++)
        print_cell(f, pk->read_gbytes_per_s[ti], "%12.1f");
    fprintf(f, "\n%-26s", "  best read kernel");
    for (int ti = 0; ti < pk->n_threads; ti++)
        fprintf(f, " %s", pk->read_kernel[ti][0] ? pk->read_kernel[ti] : "-");
    fprintf(f, "\n%-26s", "triad GB/s");
    for (int ti = 0; ti < pk->n_threads; ti++)
        print_cell(f, pk->triad_gbytes_per_s[ti], "%12.1f");
    fprintf(f, "\n");
}
