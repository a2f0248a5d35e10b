/* The perf-targets report gives no verdict against a roof a row of the
 * same run exceeded: with every row the same, a target met against an
 * honest roof gets its check mark, and loses it (to "!", no verdict) as
 * soon as any row of the run is above 100 % of that roof; targets judged
 * by the other roof, or by ratios between rows, keep theirs. */
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
    return check_report("perf_targets", &t);
}
