/* The perf-targets report gives no verdict against a roof a row of the
 * same run exceeded: with every row the same, a target met against an
 * honest roof gets its check mark, and loses it (to "!", no verdict) as
 * soon as any row of the run is above 100 % of that roof; targets judged
 * by the other roof, or by ratios between rows, keep theirs.
 *
 * The low-precision targets: a narrow KV cache decode against the same
 * variant's f32 row (>= 1.8x) and the read roof (>= 90 %), bf16/f16
 * prefill no slower than f32; the f32 targets never read a low-precision
 * row, however fast. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "perf_targets.h"

static attn_result_row row(const char *variant, int hq, int hkv, int n_q, int n_kv, int d,
                           int causal, int threads, double ns, double pct, const char *limit)
{
    attn_result_row r;
    attn_result_row_init(&r);
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    snprintf(r.case_name, sizeof r.case_name, "impl=%s", variant);
    snprintf(r.limit, sizeof r.limit, "%s", limit);
    r.shape = (attn_shape){1, hq, hkv, n_q, n_kv, d, d, causal, 0.0f};
    r.threads = threads;
    r.time_ns_median = ns;
    r.pct_peak = pct;
    return r;
}

static const attn_types F16KV = {ATTN_F32, ATTN_F16, ATTN_F32};
static const attn_types BF16KV = {ATTN_F32, ATTN_BF16, ATTN_F32};
static const attn_types BF16 = {ATTN_BF16, ATTN_BF16, ATTN_BF16};
static const attn_types F16 = {ATTN_F16, ATTN_F16, ATTN_F16};

static attn_result_row typed(attn_result_row r, const attn_types *t)
{
    r.types = *t;
    return r;
}

/* The report for `rows`, as text (caller frees). */
static char *report(const attn_result_row *rows, int n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    attn_perf_targets_report(f, rows, n, 2, NULL);
    fclose(f);
    return text;
}

/* The report's line for target `what`. */
static int line_has(const char *text, const char *what, const char *mark)
{
    const char *at = strstr(text, what);
    if (!at)
        return 0;
    const char *start = at;
    while (start > text && start[-1] != '\n')
        start--;
    return strncmp(start + 2, mark, strlen(mark)) == 0;
}

int main(void)
{
    check_tally t = {0, 0};
    attn_result_row rows[12];
    int n = 0;
    rows[n++] = row("avx2", 8, 8, 4096, 4096, 128, 0, 2, 1e8, 90.0, "fma");
    rows[n++] = row("blas", 8, 8, 4096, 4096, 128, 0, 2, 3e8, 30.0, "fma");
    rows[n++] = row("avx2", 32, 8, 1, 32768, 128, 0, 2, 1e6, 95.0, "bandwidth");
    char *honest = report(rows, n);
    CHECK(&t, line_has(honest, "prefill n=4096 h8 d128, 2 threads", "\u2713"),
          "an honest roof: the prefill target is met\n%s", honest);
    CHECK(&t, line_has(honest, "decode 1x32768", "\u2713"), "decode met\n%s", honest);

    /* One more row of the same run, above the FMA roof. */
    rows[n] = row("avx2", 8, 8, 128, 128, 64, 0, 1, 1e5, 131.0, "fma");
    rows[n++].roof_exceeded = 1;
    char *low = report(rows, n);
    CHECK(&t, line_has(low, "prefill n=4096 h8 d128, 2 threads", "!"),
          "FMA roof exceeded: no check mark for the prefill target\n%s", low);
    CHECK(&t, strstr(low, "no verdict") != NULL, "the refusal says why\n%s", low);
    CHECK(&t, line_has(low, "decode 1x32768", "\u2713"), "the read roof was not exceeded\n%s", low);
    CHECK(&t, line_has(low, "vs blas n=4096 h8 d128", "\u2713"),
          "a ratio between rows needs no roof\n%s", low);

    /* And above the read roof. */
    rows[n] = row("avx2", 32, 8, 1, 4096, 128, 0, 1, 1e5, 112.0, "bandwidth");
    rows[n++].roof_exceeded = 1;
    char *both = report(rows, n);
    CHECK(&t, line_has(both, "decode 1x32768", "!"), "read roof exceeded: no verdict\n%s", both);
    CHECK(&t, strstr(both, "vs best peer") == NULL, "no peer rows: no peer targets\n%s", both);

    /* Peers: the fastest peer against the variant timed in the same rounds. */
    rows[n] = row("torch", 8, 8, 4096, 4096, 128, 0, 2, 1.5e8, 60.0, "fma");
    rows[n].kind = ATTN_ROW_PEER;
    rows[n].paired_time_ns_median = 1.0e8; /* attnbench 1.5x faster */
    snprintf(rows[n++].paired_variant, 32, "avx2");
    rows[n] = row("openvino", 8, 8, 4096, 4096, 128, 1, 2, 0.9e8, 60.0, "fma");
    rows[n].kind = ATTN_ROW_PEER;
    rows[n].paired_time_ns_median = 1.0e8; /* the peer wins */
    snprintf(rows[n++].paired_variant, 32, "avx2");
    char *peers = report(rows, n);
    CHECK(&t, line_has(peers, "vs best peer n=4096 h8 d128, 2 threads", "\u2713"),
          "1.5x the best peer meets 1.2x\n%s", peers);
    CHECK(&t, strstr(peers, "1.50x (avx2 vs torch)") != NULL, "the ratio and who\n%s", peers);
    CHECK(&t, line_has(peers, "vs best peer n=4096 h8 d128 causal", "\u2717"),
          "a peer that wins is a miss\n%s", peers);
    free(peers);
    free(honest);
    free(low);
    free(both);

    /* Low precision, each beside its f32 row. */
    attn_result_row lp[16];
    int m = 0;
    lp[m++] = row("avx2", 32, 8, 1, 32768, 128, 0, 2, 10e6, 70.0, "bandwidth");
    lp[m++] = typed(row("avx2", 32, 8, 1, 32768, 128, 0, 2, 5e6, 95.0, "bandwidth"), &F16KV);
    lp[m++] = typed(row("avx2", 32, 8, 1, 32768, 128, 0, 2, 6e6, 92.0, "bandwidth"), &BF16KV);
    /* Faster still, but with no f32 row to be a ratio of: the roof line's
     * row, never the ratio's. */
    lp[m++] = typed(row("stream", 32, 8, 1, 32768, 128, 0, 2, 4e6, 88.0, "bandwidth"), &BF16KV);
    lp[m++] = row("avx2", 8, 8, 4096, 4096, 128, 0, 2, 1e8, 60.0, "fma");
    lp[m++] = typed(row("avx2", 8, 8, 4096, 4096, 128, 0, 2, 0.95e8, 99.0, "fma"), &BF16);
    lp[m++] = typed(row("avx2", 8, 8, 4096, 4096, 128, 0, 2, 1.1e8, 55.0, "fma"), &F16);
    char *typed_report = report(lp, m);
    const char *r = typed_report;
    CHECK(&t, line_has(r, "decode f16kv 1x32768 vs f32, 2 threads", "\u2713"),
          "f16kv at 2x the f32 speed meets 1.8x\n%s", r);
    CHECK(&t, strstr(r, "2.00x (avx2: 5 vs 10 ms)") != NULL, "the ratio with both times\n%s", r);
    CHECK(&t, line_has(r, "decode f16kv 1x32768, 2 threads", "\u2713"),
          "95%% of the read roof meets 90%%\n%s", r);
    CHECK(&t, line_has(r, "decode bf16kv 1x32768 vs f32, 2 threads", "\u2717"),
          "bf16kv at 1.67x the same variant's f32 speed misses 1.8x (stream, faster, has no "
          "f32 row)\n%s",
          r);
    CHECK(&t,
          line_has(r, "decode bf16kv 1x32768, 2 threads", "\u2717") &&
              strstr(r, "88.0% of read bandwidth (stream)") != NULL,
          "the roof line takes the fastest bf16kv row: stream's 88%% misses 90%%\n%s", r);
    CHECK(&t, line_has(r, "prefill bf16 n=4096 d128 vs f32, 2 threads", "\u2713"),
          "bf16 prefill 1.05x f32 is no slower\n%s", r);
    CHECK(&t, line_has(r, "prefill f16 n=4096 d128 vs f32, 2 threads", "\u2717"),
          "f16 prefill at 0.91x f32 is slower: a miss\n%s", r);
    CHECK(&t,
          line_has(r, "decode 1x32768 Hq32/Hkv8 d128, 2 threads", "\u2717") &&
              strstr(r, "70.0% of read bandwidth (avx2)") != NULL,
          "the f32 decode target reads the f32 row only (70%%), not the faster f16kv one\n%s", r);
    CHECK(&t,
          line_has(r, "prefill n=4096 h8 d128, 2 threads", "\u2717") &&
              strstr(r, "60.0% of FMA peak (avx2)") != NULL,
          "the f32 prefill target reads the f32 row only (60%%), not bf16's 99%%\n%s", r);
    free(typed_report);

    /* Without the f32 decode row there is no ratio to judge. */
    char *no_f32 = report(lp + 1, m - 1);
    CHECK(&t, line_has(no_f32, "decode f16kv 1x32768 vs f32, 2 threads", "-"),
          "no f32 row: not measured\n%s", no_f32);
    free(no_f32);

    /* A read roof exceeded: the narrow-KV roof lines give no verdict, their
     * ratios to f32 keep theirs. */
    lp[m] = row("avx2", 32, 8, 1, 4096, 128, 0, 1, 1e5, 112.0, "bandwidth");
    lp[m++].roof_exceeded = 1;
    char *over = report(lp, m);
    CHECK(&t, line_has(over, "decode f16kv 1x32768, 2 threads", "!"),
          "read roof exceeded: no verdict on %% of it\n%s", over);
    CHECK(&t, line_has(over, "decode f16kv 1x32768 vs f32, 2 threads", "\u2713"),
          "a ratio between rows needs no roof\n%s", over);
    free(over);
    return check_report("perf_targets", &t);
}
