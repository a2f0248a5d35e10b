/* attnbench rss: the peak resident memory of one call, in a process of its
 * own (see rss_probe.h). */
#include <stdio.h>

#include "attn.h"
#include "cli.h"
#include "rss_probe.h"
#include "variant.h"

static void rss_help(void)
{
    printf("usage: attnbench rss --variant NAME [--n N] [--d D] [--causal]\n\n"
           "Runs one call of the variant on one head, n_q = n_kv = N (default 65536),\n"
           "d_k = d_v = D (default 64), N(0,1) data, and prints the process's peak\n"
           "resident memory beside the bytes of Q, K, V and O. Exit 1 when the peak\n"
           "exceeds the inputs by more than 64 MiB (the memory target for the streaming\n"
           "variants), 2 on bad usage; a variant this CPU cannot run is a SKIP line.\n"
           "--causal does the same memory in half the time.\n");
}

int cmd_rss(int argc, char **argv)
{
    const attn_variant *variants[1];
    int n_variants = 0, causal = 0, r;
    long n = 65536, d = 64;
    const char *value;
    for (int i = 1; i < argc; i++) {
        if (cli_switch(argv, i, "--help") || cli_switch(argv, i, "-h")) {
            rss_help();
            return EXIT_OK;
        } else if (cli_switch(argv, i, "--causal")) {
            causal = 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--variant", &value)) != 0) {
            n_variants = 0;
            if (r < 0 || cli_add_variant("rss", value, variants, &n_variants, 1) != 0)
                return EXIT_USAGE;
        } else if ((r = cli_flag_value(argc, argv, &i, "--n", &value)) != 0) {
            if (r < 0 || cli_parse_long("rss", "--n", value, 1, 1 << 20, &n) != 0)
                return EXIT_USAGE;
        } else if ((r = cli_flag_value(argc, argv, &i, "--d", &value)) != 0) {
            if (r < 0 || cli_parse_long("rss", "--d", value, 1, 4096, &d) != 0)
                return EXIT_USAGE;
        } else {
            return cli_unknown("rss", argv[i]);
        }
    }
    if (cli_check_cpu_mask("rss") != 0)
        return EXIT_USAGE;
    if (n_variants == 0) {
        fprintf(stderr, "rss: --variant is required\n");
        return EXIT_USAGE;
    }
    if (!attn_variant_runnable(variants[0])) {
        char missing[128];
        attn_variant_missing(variants[0], missing, sizeof missing);
        printf("SKIP rss %s: skipped: needs %s\n", variants[0]->name, missing);
        return EXIT_OK;
    }
    attn_rss_result res;
    int rc = attn_rss_probe_run(variants[0]->name, (int32_t)n, (int32_t)d, causal, &res);
    if (rc != ATTN_OK) {
        fprintf(stderr, "rss: %s: %s\n", variants[0]->name, attn_strerror(rc));
        return EXIT_USAGE;
    }
    printf("rss: variant=%s n=%ld d=%ld causal=%d\n", variants[0]->name, n, d, causal);
    printf("input_bytes=%zu peak_rss_bytes=%zu workspace_bytes=%zu seconds=%.3f\n", res.input_bytes,
           res.peak_rss_bytes, res.workspace_bytes, res.seconds);
    double over = ((double)res.peak_rss_bytes - (double)res.input_bytes) / (1 << 20);
    int ok = res.peak_rss_bytes <= res.input_bytes + ATTN_RSS_ALLOWANCE;
    printf("rss: peak - inputs = %.1f MiB (allowed 64 MiB): %s\n", over, ok ? "ok" : "OVER");
    return ok ? EXIT_OK : EXIT_FAILED;
}
