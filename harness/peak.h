/* The machine's roofline, measured in this run: fp32 FMA peak per ISA,
 * exp throughput, and STREAM-style read and triad bandwidth, each at a set
 * of thread counts, as medians of several repetitions. Every benchmark row
 * is stated as a fraction of the limit that applies: FMA peak for prefill
 * and for decode whose flops bind, read bandwidth for the rest of decode.
 * Beside them, not a limit, the BLAS's own sgemm (peak_sgemm.c): what a
 * tuned GEMM reaches of the FMA roof here. Also written to and read back
 * from JSON (the `peak` object of docs/results-format.md). */
#ifndef ATTN_PEAK_H
#define ATTN_PEAK_H

#include <stddef.h>
#include <stdio.h>

#include "big_alloc.h"
#include "variant.h" /* attn_roof */

typedef enum attn_isa { ATTN_ISA_SCALAR, ATTN_ISA_AVX2, ATTN_ISA_AVX512, ATTN_ISA_COUNT } attn_isa;

/* The exp implementations the variants use: glibc's expf (naive, blas) and
 * the SIMD exps of impls/simd_avx2.h and impls/simd_avx512.h. */
typedef enum attn_exp_kind {
    ATTN_EXP_LIBM,
    ATTN_EXP_AVX2,
    ATTN_EXP_AVX512,
    ATTN_EXP_COUNT
} attn_exp_kind;

/* bf16 products with f32 accumulation, the roofs of the bf16 tensor paths:
 * vdpbf16ps on zmm (AVX512_BF16) and tdpbf16ps on AMX tiles. */
typedef enum attn_bf16_kind { ATTN_BF16_AVX512, ATTN_BF16_AMX, ATTN_BF16_COUNT } attn_bf16_kind;

enum { ATTN_PEAK_MAX_THREAD_COUNTS = 16 };

typedef struct attn_peak {
    int n_threads;
    int threads[ATTN_PEAK_MAX_THREAD_COUNTS]; /* ascending */
    /* NaN where not measured (ISA missing, not asked for). */
    double fma_gflops[ATTN_ISA_COUNT][ATTN_PEAK_MAX_THREAD_COUNTS];
    double exp_gelem_per_s[ATTN_EXP_COUNT][ATTN_PEAK_MAX_THREAD_COUNTS];
    /* The chain count of the best FMA kernel (0: not measured here). */
    int fma_chains[ATTN_ISA_COUNT][ATTN_PEAK_MAX_THREAD_COUNTS];
    /* The read roof: the best of several read kernels ("" when read back
     * from a file that does not name it). */
    double read_gbytes_per_s[ATTN_PEAK_MAX_THREAD_COUNTS];
    char read_kernel[ATTN_PEAK_MAX_THREAD_COUNTS][32];
    double triad_gbytes_per_s[ATTN_PEAK_MAX_THREAD_COUNTS];
    /* bf16 GFLOP/s (2 per multiply-add of a bf16 pair), best of several
     * kernels; NaN where the CPU lacks the instructions. */
    double bf16_gflops[ATTN_BF16_COUNT][ATTN_PEAK_MAX_THREAD_COUNTS];
    /* The BLAS's own sgemm, each thread its own 2048^3 product (peak_sgemm.c):
     * a reference point beside the FMA roof, not a roof; NaN where not
     * measured. sgemm_library names the BLAS, its version and kernel ("" when
     * not measured). */
    double sgemm_gflops[ATTN_PEAK_MAX_THREAD_COUNTS];
    char sgemm_library[64];
    /* The pages under the bandwidth arrays (attn_pages_name), "" when not
     * measured or read from a file written before runs chose them. */
    char pages[8];
} attn_peak;

typedef struct attn_peak_opts {
    int fma, exp, bandwidth; /* which groups to measure */
    int sgemm;               /* the BLAS's sgemm beside the FMA roof */
    int repetitions;         /* per figure; the median is kept */
    double seconds;          /* target length of one FMA / exp repetition */
    size_t bw_array_bytes;   /* bytes per array; triad uses 3, read reads all 3 */
    attn_pages pages;        /* under the arrays: the rows' pages (big_alloc.h) */
} attn_peak_opts;

/* Default: everything, 5 repetitions, 0.05 s each, 512 MiB arrays on huge
 * pages. */
attn_peak_opts attn_peak_default_opts(void);
enum { ATTN_PEAK_DEFAULT_BW_MIB = 512 };

const char *attn_isa_name(attn_isa isa);
/* "avx512_bf16" (vdpbf16ps), "amx_bf16" (tdpbf16ps). */
const char *attn_bf16_name(attn_bf16_kind kind);
/* 1 when this CPU runs the kind's kernel; else 0 and `why` ("needs
 * avx512_bf16", or the kernel's refusal of AMX tile state). */
int attn_bf16_available(attn_bf16_kind kind, char *why, size_t cap);
/* bf16 GFLOP/s of the team, best of the kind's kernels, median of `reps`. */
double attn_peak_measure_bf16(attn_bf16_kind kind, int threads, int reps, double seconds);
const char *attn_exp_name(attn_exp_kind kind);
/* 1 when this CPU (after ATTN_CPU_MASK) runs the ISA's kernel; otherwise 0
 * and `why` names the missing features ("needs avx512f"). */
int attn_isa_available(attn_isa isa, char *why, size_t cap);
/* Same for an exp kind (the features of the variant it belongs to). */
int attn_exp_available(attn_exp_kind kind, char *why, size_t cap);

/* Empty: no thread counts, every figure NaN. */
void attn_peak_init(attn_peak *pk);
/* Adds a thread count (kept sorted, no duplicates). -1 when full. */
int attn_peak_add_threads(attn_peak *pk, int threads);
/* Index of a thread count, -1 when absent. */
int attn_peak_index(const attn_peak *pk, int threads);

/* Measures what `o` asks for at every thread count of `pk`. `log` (may be
 * NULL) receives one line per figure as it is measured. Returns 0, or -1
 * when the bandwidth arrays cannot be allocated (message on stderr). */
int attn_peak_measure(attn_peak *pk, const attn_peak_opts *o, FILE *log);

/* Single measurements (medians over `reps`). The FMA figure is the best
 * over the ISA's kernels of different chain counts (peak_kernels.h); the
 * winning count goes to *chains when it is not NULL. */
double attn_peak_measure_fma(attn_isa isa, int threads, int reps, double seconds, int *chains);
double attn_peak_measure_exp(attn_exp_kind kind, int threads, int reps, double seconds);
/* The BLAS's sgemm GFLOP/s of the team, each thread its own product with the
 * BLAS on one thread, median of `reps` (NaN when its memory is not there);
 * the BLAS's name, version and kernel ("OpenBLAS 0.3.21 SkylakeX"). */
enum { ATTN_PEAK_SGEMM_N = 2048 }; /* each thread's product: N x N times N x N */
double attn_peak_measure_sgemm(int threads, int reps);
void attn_peak_sgemm_library(char *out, size_t cap);
/* 100 x the sgemm figure over the FMA roof (attn_peak_fma_for) at a thread
 * count; NaN when either was not measured. */
double attn_peak_sgemm_pct(const attn_peak *pk, int threads);
/* 1 when some thread count of pk has a finite figure in x (a row of pk). */
int attn_peak_any_finite(const attn_peak *pk, const double *x);
/* Read and triad GB/s over three arrays of `bytes` each: read is the best
 * of the read kernels (its name to `read_kernel`, cap 32, when not NULL);
 * -1 on allocation failure. */
int attn_peak_measure_bandwidth(size_t bytes, int threads, int reps, double *read_gbs,
                                double *triad_gbs, char *read_kernel);

/* The FMA kernels of an ISA (peak_kernels.h), a list ending with chains 0. */
const struct attn_peak_fma_kernel *attn_peak_fma_kernels_for(attn_isa isa);

/* The FMA peak of the best ISA this CPU runs, and the read bandwidth, at a
 * thread count; NaN when that count was not measured. */
double attn_peak_fma_for(const attn_peak *pk, int threads);
double attn_peak_read_for(const attn_peak *pk, int threads);
/* The compute roof a variant declares (variant.h, attn_roof) at a thread
 * count: the FMA peak above, or a bf16 one; NaN when not measured. */
double attn_peak_roof_for(const attn_peak *pk, attn_roof roof, int threads);

/* The highest compute roof pk holds at `threads` among those a library may
 * run: the FMA peak, and for bf16 tensors also vdpbf16ps and AMX where
 * measured (a peer's row: a framework takes what its GEMMs find; PyTorch's
 * bf16 attention ran at 2.6x the FMA peak on a Sapphire Rapids, on AMX
 * tiles through oneDNN). ATTN_ROOF_FMA when nothing is higher. */
attn_roof attn_peak_highest_roof(const attn_peak *pk, int bf16, int threads);
/* Name of the best ISA the CPU runs that has a figure. */
const char *attn_peak_best_isa(const attn_peak *pk);

/* The table `attnbench peak` prints. */
void attn_peak_print(FILE *f, const attn_peak *pk);

/* JSON: the `peak` object of the sidecar format, written at `indent`
 * spaces (no trailing newline). */
void attn_peak_write_json(FILE *f, const attn_peak *pk, int indent);
/* Reads a file written by `attnbench peak --out` or a matrix .meta.json
 * (its "peak" member) into `pk`. Returns 0, or -1 with `err` set. */
int attn_peak_read_json(const char *path, attn_peak *pk, char *err, size_t cap);
/* Whether peaks read from `source` (a file name) may judge rows measured
 * on `pages`: 0 when their read roof was measured on the same pages; 1
 * (a note in `msg`) when the file does not say; -1 (the refusal in `msg`)
 * when it names other pages, whose roof is no bound for these rows. */
int attn_peak_pages_check(const attn_peak *pk, attn_pages pages, const char *source, char *msg,
                          size_t cap);

/* The JSON reader under attn_peak_read_json, for other small documents
 * (the peer workers' replies): it walks one JSON value and hands every
 * scalar to `visit` with its path of keys ("[]" for an array element).
 * Limits: 8 levels, keys cut at 63 bytes, strings at 1023; escapes decode
 * (\n, \t, \uXXXX below 0x80), a \uXXXX beyond ASCII becomes '?'. */
enum { ATTN_JSON_MAX_DEPTH = 8, ATTN_JSON_MAX_KEY = 64, ATTN_JSON_MAX_TEXT = 1024 };
typedef enum attn_json_kind {
    ATTN_JSON_NUMBER,
    ATTN_JSON_STRING,
    ATTN_JSON_TRUE,
    ATTN_JSON_FALSE,
    ATTN_JSON_NULL
} attn_json_kind;
typedef struct attn_json_value {
    attn_json_kind kind;
    double number;    /* ATTN_JSON_NUMBER */
    const char *text; /* ATTN_JSON_STRING; valid during the call only */
} attn_json_value;
typedef void (*attn_json_visitor)(void *ctx, const char (*path)[ATTN_JSON_MAX_KEY], int depth,
                                  const attn_json_value *v);
/* `s` as a JSON string, quotes included: '"' and '\\' escaped, control
 * characters as \u00XX, so any text a library reports (a version, a kernel
 * name) leaves a document valid. attn_json_quote writes into `out` as
 * snprintf does and returns the length the whole string needs. */
void attn_json_put_string(FILE *f, const char *s);
int attn_json_quote(const char *s, char *out, size_t cap);
/* Returns 0, or -1 with `err` set ("expected ':' at byte 12"). */
int attn_json_walk(const char *text, size_t len, attn_json_visitor visit, void *ctx, char *err,
                   size_t cap);
/* A whole file, NUL-terminated, its length in *len (malloc'd: free it);
 * NULL when it cannot be read. */
char *attn_read_text(const char *path, size_t *len);

#endif
