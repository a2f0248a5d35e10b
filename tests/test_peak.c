/* The roofline measurements give positive, plausible numbers that can
 * fail: every available ISA's FMA peak is finite and positive and ordered
 * (avx512 >= avx2 >= scalar, within noise), below what any core can do,
 * exp and bandwidth are positive, a missing ISA is reported with the
 * reason, and the JSON form round-trips. Short runs: about two seconds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cpu_features.h"
#include "peak.h"
#include "peak_kernels.h"

/* Another process can steal a core for a repetition; the median of three
 * absorbs one, this factor the rest. */
static const double noise = 0.8;
/* 2 x 512-bit FMA x 16 lanes x 2 flops at 6 GHz: beyond any core today. */
static const double max_gflops_per_thread = 2 * 16 * 2 * 6.0;

/* The JSON walker's one string, or its error. */
static void walk_string(void *ctx, const char (*path)[ATTN_JSON_MAX_KEY], int depth,
                        const attn_json_value *v)
{
    (void)path;
    (void)depth;
    if (v->kind == ATTN_JSON_STRING)
        snprintf(ctx, 64, "%s", v->text);
}

static void check_json_strings(check_tally *t)
{
    static const struct {
        const char *json, *want; /* want NULL: refused */
    } cases[] = {
        {"\"a\\\"b\\\\c\\/d\"", "a\"b\\c/d"},
        {"\"\\n\\t\\r\\b\\f\"", "\n\t\r\b\f"},
        {"\"\\u0041\\u004a\\u00e9\\u20AC\"", "AJ??"},
        {"\"\\x\"", NULL},
        {"\"\\u12\"", NULL},
        {"\"\\u12", NULL},
        {"\"\\u00zz\"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[64] = "", err[120] = "";
        int rc =
            attn_json_walk(cases[i].json, strlen(cases[i].json), walk_string, got, err, sizeof err);
        if (cases[i].want)
            CHECK(t, rc == 0 && strcmp(got, cases[i].want) == 0, "%s reads as '%s': '%s' (%s)",
                  cases[i].json, cases[i].want, got, err);
        else
            CHECK(t, rc != 0 && err[0], "%s is refused: %s", cases[i].json, err);
    }
    /* Quoting into a buffer: the length it needs, whole escapes when cut. */
    char out[32];
    int n = attn_json_quote("a\"b\n", out, sizeof out);
    CHECK(t, n == 12 && strcmp(out, "\"a\\\"b\\u000a\"") == 0, "quoted: %s (%d)", out, n);
    n = attn_json_quote("a\"b", out, 4);
    CHECK(t, n == 6 && strcmp(out, "\"a") == 0, "cut before the escape: %s (%d)", out, n);
    char round[64] = "", err[120] = "";
    attn_json_quote("tab\there \"q\" \\", out, sizeof out);
    CHECK(t,
          attn_json_walk(out, strlen(out), walk_string, round, err, sizeof err) == 0 &&
              strcmp(round, "tab\there \"q\" \\") == 0,
          "quoted text reads back: %s -> '%s' %s", out, round, err);
}

int main(void)
{
    check_tally t = {0, 0};
    check_json_strings(&t);
    double fma[ATTN_ISA_COUNT];
    for (int i = 0; i < ATTN_ISA_COUNT; i++) {
        char why[128] = "";
        int have = attn_isa_available((attn_isa)i, why, sizeof why);
        fma[i] = attn_peak_measure_fma((attn_isa)i, 1, 3, 0.02, NULL);
        if (!have) {
            CHECK(&t, isnan(fma[i]), "%s is unavailable but measured %g", attn_isa_name(i), fma[i]);
            CHECK(&t, strncmp(why, "needs ", 6) == 0, "%s unavailable without a reason: '%s'",
                  attn_isa_name(i), why);
            printf("fma %-7s skipped: %s\n", attn_isa_name(i), why);
            continue;
        }
        printf("fma %-7s %8.1f GFLOP/s at 1 thread\n", attn_isa_name(i), fma[i]);
        CHECK(&t, fma[i] > 0.1 && fma[i] < max_gflops_per_thread, "%s: %g GFLOP/s",
              attn_isa_name(i), fma[i]);
    }
    if (!isnan(fma[ATTN_ISA_AVX2]))
        CHECK(&t, fma[ATTN_ISA_AVX2] >= noise * fma[ATTN_ISA_SCALAR], "avx2 %g < scalar %g GFLOP/s",
              fma[ATTN_ISA_AVX2], fma[ATTN_ISA_SCALAR]);
    if (!isnan(fma[ATTN_ISA_AVX512]))
        CHECK(&t, fma[ATTN_ISA_AVX512] >= noise * fma[ATTN_ISA_AVX2], "avx512 %g < avx2 %g GFLOP/s",
              fma[ATTN_ISA_AVX512], fma[ATTN_ISA_AVX2]);

    double e = attn_peak_measure_exp(ATTN_EXP_LIBM, 1, 3, 0.02);
    printf("exp expf    %8.3f Gelem/s\n", e);
    CHECK(&t, e > 0.01 && e < 100, "expf: %g Gelem/s", e);

    double read = NAN, triad = NAN;
    CHECK(&t, attn_peak_measure_bandwidth((size_t)48 << 20, 1, 3, &read, &triad, NULL) == 0,
          "bandwidth arrays not allocated");
    printf("read %.1f GB/s, triad %.1f GB/s (48 MiB arrays: may be cache-assisted)\n", read, triad);
    CHECK(&t, read > 0.5 && read < 10000, "read %g GB/s", read);
    CHECK(&t, triad > 0.5 && triad < 10000, "triad %g GB/s", triad);

    /* The BLAS's sgemm beside the roof: a team of 2, each its own product. */
    const double sgemm = attn_peak_measure_sgemm(2, 1);
    printf("sgemm %.1f GFLOP/s (2 threads)\n", sgemm);
    CHECK(&t, sgemm > 0.5 && sgemm < 100000, "sgemm %g GFLOP/s", sgemm);
    CHECK(&t, isnan(attn_peak_measure_sgemm(0, 1)), "sgemm with no thread: NaN");
    char library[64];
    attn_peak_sgemm_library(library, sizeof library);
    CHECK(&t, strncmp(library, "OpenBLAS ", 9) == 0 && strlen(library) > 10,
          "sgemm names its BLAS: '%s'", library);

    /* The block-by-block read kernel reads what the plain prefetching one
     * reads, whatever the tail: both return lane 0 of the same 16-float
     * chunks' sums plus the same scalar tail (small integers: exact). */
    const uint32_t avx2_fma = ATTN_CPU_AVX2 | ATTN_CPU_FMA;
    if ((attn_cpu()->features & avx2_fma) == avx2_fma) {
        enum { N = 3 * 6144 + 37 };
        static float a[N] __attribute__((aligned(64))), b[N] __attribute__((aligned(64))),
            c[N] __attribute__((aligned(64)));
        for (int i = 0; i < N; i++) {
            a[i] = (float)(i % 7);
            b[i] = (float)(i % 5 + 1);
            c[i] = (float)(i % 3 + 2);
        }
        const float *arrays[3] = {a, b, c};
        const size_t sizes[] = {0, 15, 16, 6143, 6144, 6160, 2 * 6144 + 48, N};
        const size_t blocks[] = {16, 6144};
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t bi = 0; bi < 2; bi++) {
                float want = attn_peak_read_avx2_prefetch(arrays, 3, sizes[si], 4096);
                float got = attn_peak_read_avx2_blocks(arrays, 3, sizes[si], blocks[bi], 8192);
                CHECK(&t, got == want, "blocks read %zu floats in blocks of %zu: %g, want %g",
                      sizes[si], blocks[bi], got, want);
            }
    }

    /* Thread bookkeeping and the JSON round trip. */
    attn_peak pk, back;
    attn_peak_init(&pk);
    CHECK(&t, attn_peak_add_threads(&pk, 4) == 0, "first thread count at 0");
    CHECK(&t, attn_peak_add_threads(&pk, 1) == 0, "1 sorts before 4");
    CHECK(&t, attn_peak_add_threads(&pk, 4) == 1 && pk.n_threads == 2, "no duplicates");
    pk.fma_gflops[ATTN_ISA_SCALAR][0] = 3.5;
    pk.fma_gflops[ATTN_ISA_AVX2][1] = 120.25;
    pk.exp_gelem_per_s[ATTN_EXP_LIBM][0] = 0.5;
    pk.read_gbytes_per_s[0] = 9.5;
    pk.read_gbytes_per_s[1] = 20.0;
    pk.triad_gbytes_per_s[1] = 18.0;
    pk.sgemm_gflops[1] = 310.5;
    /* Any text a library reports leaves the document valid and reads back. */
    snprintf(pk.sgemm_library, sizeof pk.sgemm_library, "Open\"BLAS\\ 0.3.21\nSkylakeX\t");
    /* A thread count added later moves the columns after it, sgemm's too. */
    CHECK(&t, attn_peak_add_threads(&pk, 2) == 1 && pk.threads[2] == 4, "2 sorts between");
    CHECK(&t, pk.sgemm_gflops[2] == 310.5 && isnan(pk.sgemm_gflops[1]),
          "sgemm moves with its thread count: %g at 4, %g at 2", pk.sgemm_gflops[2],
          pk.sgemm_gflops[1]);
    snprintf(pk.pages, sizeof pk.pages, "base");
    /* The read kernel of each roof travels with it (a paired read roof
     * after --resume races that one); a name this build lacks does not. */
    const char *kernel = attn_peak_read_kernel_name(attn_peak_read_kernel_next(-1));
    snprintf(pk.read_kernel[2], sizeof pk.read_kernel[2], "%s", kernel);
    snprintf(pk.read_kernel[0], sizeof pk.read_kernel[0], "no_such_kernel");
    const char *path = "test_peak_roundtrip.json";
    FILE *f = fopen(path, "w");
    CHECK(&t, f != NULL, "cannot write %s", path);
    if (f) {
        fprintf(f, "{\"cpu_model\": \"x\", \"cache\": {\"l1d_bytes\": 1}, \"peak\": ");
        attn_peak_write_json(f, &pk, 0);
        fprintf(f, "}\n");
        fclose(f);
        char err[300];
        int rc = attn_peak_read_json(path, &back, err, sizeof err);
        CHECK(&t, rc == 0, "read back: %s", err);
        /* (the thread count 2 has no figure: not written) */
        CHECK(&t, back.n_threads == 2 && back.threads[0] == 1 && back.threads[1] == 4,
              "threads read back: %d", back.n_threads);
        CHECK(&t, back.sgemm_gflops[1] == 310.5 && isnan(back.sgemm_gflops[0]),
              "sgemm read back: %g", back.sgemm_gflops[1]);
        CHECK(&t, strcmp(back.sgemm_library, pk.sgemm_library) == 0,
              "sgemm library read back: '%s'", back.sgemm_library);
        CHECK(&t, strcmp(back.read_kernel[1], kernel) == 0 && back.read_kernel[0][0] == '\0',
              "read kernels read back: '%s' at 4 threads (want %s), '%s' at 1 (want none)",
              back.read_kernel[1], kernel, back.read_kernel[0]);
        CHECK(&t, back.fma_gflops[ATTN_ISA_SCALAR][0] == 3.5, "scalar fma read back %g",
              back.fma_gflops[ATTN_ISA_SCALAR][0]);
        CHECK(&t, back.fma_gflops[ATTN_ISA_AVX2][1] == 120.25, "avx2 fma read back %g",
              back.fma_gflops[ATTN_ISA_AVX2][1]);
        CHECK(&t, isnan(back.fma_gflops[ATTN_ISA_AVX2][0]), "unmeasured stays NaN");
        CHECK(&t, back.exp_gelem_per_s[ATTN_EXP_LIBM][0] == 0.5, "exp read back");
        CHECK(&t, back.read_gbytes_per_s[1] == 20.0 && back.triad_gbytes_per_s[1] == 18.0,
              "bandwidth read back");
        /* The pages its read roof was measured on travel with it, and only
         * rows on the same pages may be judged against it. */
        CHECK(&t, strcmp(back.pages, "base") == 0, "pages read back: '%s'", back.pages);
        char msg[400];
        CHECK(&t, attn_peak_pages_check(&back, ATTN_PAGES_BASE, path, msg, sizeof msg) == 0,
              "same pages agree: %s", msg);
        CHECK(&t,
              attn_peak_pages_check(&back, ATTN_PAGES_HUGE, path, msg, sizeof msg) == -1 &&
                  strstr(msg, "measured on base pages") && strstr(msg, "--pages base"),
              "other pages refused, saying how to match: %s", msg);
        back.pages[0] = '\0'; /* a file from before runs chose pages */
        CHECK(&t,
              attn_peak_pages_check(&back, ATTN_PAGES_HUGE, path, msg, sizeof msg) == 1 &&
                  strstr(msg, "does not say"),
              "unknown pages a note: %s", msg);
        remove(path);
    }
    char err[300];
    CHECK(&t, attn_peak_read_json("no/such/file.json", &back, err, sizeof err) != 0,
          "a missing file is an error");
    f = fopen(path, "w");
    if (f) {
        fprintf(f, "{\"peak\": {\"fma_gflops\": {\"avx2\": {\"1\": 3,}}}}");
        fclose(f);
        CHECK(&t,
              attn_peak_read_json(path, &back, err, sizeof err) != 0 &&
                  strstr(err, "not valid JSON") != NULL,
              "malformed JSON accepted: %s", err);
        remove(path);
    }
    /* A peer's roof: FMA in f32; in bf16 the highest measured. */
    attn_peak fake;
    memset(&fake, 0, sizeof fake);
    fake.n_threads = 1;
    fake.threads[0] = 2;
    for (int i = 0; i < ATTN_ISA_COUNT; i++)
        fake.fma_gflops[i][0] = 490.0;
    fake.bf16_gflops[ATTN_BF16_AVX512][0] = 246.0; /* half the FMA rate */
    fake.bf16_gflops[ATTN_BF16_AMX][0] = 7500.0;
    CHECK(&t, attn_peak_highest_roof(&fake, 0, 2) == ATTN_ROOF_FMA, "f32: the FMA roof");
    CHECK(&t, attn_peak_highest_roof(&fake, 1, 2) == ATTN_ROOF_BF16_AMX,
          "bf16: AMX's, the highest");
    fake.bf16_gflops[ATTN_BF16_AMX][0] = NAN; /* no AMX */
    CHECK(&t, attn_peak_highest_roof(&fake, 1, 2) == ATTN_ROOF_FMA,
          "bf16 without AMX, vdpbf16ps below the FMA peak: the FMA roof");
    fake.bf16_gflops[ATTN_BF16_AVX512][0] = 980.0; /* Zen 4: twice the FMA rate */
    CHECK(&t, attn_peak_highest_roof(&fake, 1, 2) == ATTN_ROOF_BF16_AVX512,
          "vdpbf16ps above the FMA peak: its roof");
    return check_report("peak", &t);
}
