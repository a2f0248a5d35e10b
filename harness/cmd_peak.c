/* attnbench peak: the machine's roofline, measured now, printed as a
 * table and optionally written as JSON (the `peak` object of the sidecar
 * format) for bench/matrix --peak FILE. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "machine.h"
#include "peak.h"
#include "timer.h"

static void peak_help(void)
{
    printf("usage: attnbench peak [--threads N]... [--repetitions N] [--seconds S]\n"
           "                      [--bw-mib N] [--pages huge|base] [--no-bandwidth]\n"
           "                      [--out FILE.json]\n\n"
           "Measures, in this run, the limits every benchmark row is judged against:\n"
           "  fma    fp32 FMA peak in GFLOP/s for each ISA this CPU runs: scalar (portable C,\n"
           "         mulss + addss), avx2 (ymm FMA), avx512 (zmm FMA); per thread the best\n"
           "         of several counts of independent chains (scalar 6-14, avx2 8-14, avx512\n"
           "         8-28). A missing ISA is a visible skip with the reason.\n"
           "  bf16   the bf16 tensor paths' peaks in bf16 GFLOP/s, where the CPU has them:\n"
           "         avx512_bf16 (vdpbf16ps chains), amx_bf16 (tdpbf16ps tiles)\n"
           "  exp    exp throughput in Gelem/s of each variant family's exp: expf (glibc:\n"
           "         naive, blocked, blas, stream; xsmm without AVX2), avx2 and avx512\n"
           "         (impls/exp_avx2.h, exp_avx512.h), over L1-resident inputs in [-20, 0]\n"
           "  read   STREAM-style read bandwidth in GB/s over three arrays: the best of\n"
           "         several read kernels (plain, side by side, software prefetch)\n"
           "  triad  a[i] = b[i] + s*c[i] in GB/s (STREAM's byte count: 3 arrays)\n"
           "  sgemm  the BLAS's own sgemm in GFLOP/s, each thread its own 2048^3 product with\n"
           "         OpenBLAS on one thread, and its %% of the FMA roof: not a roof, what a\n"
           "         tuned GEMM library reaches here when its operands stream through the\n"
           "         caches (OpenBLAS picks its kernel itself; ATTN_CPU_MASK does not reach it)\n"
           "Each figure is the median of --repetitions runs, at 1 thread and all threads\n"
           "unless --threads is given.\n\n"
           "  --threads N       thread count to measure at (repeatable); default 1 and all\n"
           "  --repetitions N   repetitions per figure, median kept (default 5)\n"
           "  --seconds S       length of one FMA/exp repetition (default 0.05)\n"
           "  --bw-mib N        MiB per bandwidth array (default %d; use >= 4x the last-level\n"
           "                    cache so the arrays stream from memory)\n"
           "  --no-bandwidth    skip the bandwidth figures\n"
           "  --out FILE.json   also write the figures as JSON (with the pages: bench and\n"
           "                    matrix --peak FILE refuse a file of other pages)\n",
           ATTN_PEAK_DEFAULT_BW_MIB);
    cli_pages_help(20);
}

int cmd_peak(int argc, char **argv)
{
    attn_peak_opts o = attn_peak_default_opts();
    attn_peak pk;
    attn_peak_init(&pk);
    attn_machine m;
    attn_machine_read(&m);
    const char *out = NULL, *value;
    for (int i = 1; i < argc; i++) {
        int r;
        long x;
        double d;
        if (cli_switch(argv, i, "--help") || cli_switch(argv, i, "-h")) {
            peak_help();
            return EXIT_OK;
        } else if (cli_switch(argv, i, "--no-bandwidth")) {
            o.bandwidth = 0;
        } else if ((r = cli_flag_value(argc, argv, &i, "--threads", &value)) != 0) {
            if (r < 0 || cli_parse_long("peak", "--threads", value, 1, 4096, &x) != 0)
                return EXIT_USAGE;
            if (attn_peak_add_threads(&pk, (int)x) < 0) {
                fprintf(stderr, "peak: at most %d thread counts\n", ATTN_PEAK_MAX_THREAD_COUNTS);
                return EXIT_USAGE;
            }
        } else if ((r = cli_flag_value(argc, argv, &i, "--repetitions", &value)) != 0) {
            if (r < 0 || cli_parse_long("peak", "--repetitions", value, 1, 64, &x) != 0)
                return EXIT_USAGE;
            o.repetitions = (int)x;
        } else if ((r = cli_flag_value(argc, argv, &i, "--seconds", &value)) != 0) {
            if (r < 0 || cli_parse_double("peak", "--seconds", value, 0.001, 10, &d) != 0)
                return EXIT_USAGE;
            o.seconds = d;
        } else if ((r = cli_flag_value(argc, argv, &i, "--bw-mib", &value)) != 0) {
            if (r < 0 || cli_parse_long("peak", "--bw-mib", value, 1, 1 << 20, &x) != 0)
                return EXIT_USAGE;
            o.bw_array_bytes = (size_t)x << 20;
        } else if ((r = cli_flag_value(argc, argv, &i, "--pages", &value)) != 0) {
            if (r < 0 || cli_parse_pages("peak", value, &o.pages) != 0)
                return EXIT_USAGE;
        } else if ((r = cli_flag_value(argc, argv, &i, "--out", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            out = value;
        } else {
            return cli_unknown("peak", argv[i]);
        }
    }
    if (cli_check_cpu_mask("peak") != 0)
        return EXIT_USAGE;
    FILE *f = NULL;
    if (out && !(f = fopen(out, "w"))) {
        fprintf(stderr, "peak: cannot write --out '%s': %s\n", out, strerror(errno));
        return EXIT_USAGE;
    }
    if (pk.n_threads == 0) {
        attn_peak_add_threads(&pk, 1);
        attn_peak_add_threads(&pk, m.cores);
    }
    /* STREAM's rule of thumb: arrays of at least 4x the last-level cache;
     * 1 GiB in all is plenty where the reported cache is a VM's fiction. */
    if (o.bandwidth && o.bw_array_bytes * 3 < ((size_t)1 << 30) && m.l3_bytes > 0 &&
        o.bw_array_bytes * 3 < 4 * (size_t)m.l3_bytes)
        fprintf(stderr,
                "peak: note: 3 x %zu MiB arrays are less than 1 GiB and less than 4x the %ld MiB "
                "last-level cache; bandwidth may be inflated by cache hits (--bw-mib)\n",
                o.bw_array_bytes >> 20, m.l3_bytes >> 20);
    char thp[16];
    attn_thp_policy(thp, sizeof thp);
    printf("peak: %s (%s), %d cores, median of %d repetitions", m.model, m.slug, m.cores,
           o.repetitions);
    if (o.bandwidth)
        printf("; bandwidth arrays on %s pages (the kernel's THP policy: %s)",
               attn_pages_name(o.pages), thp[0] ? thp : "unknown");
    printf("\n");
    fflush(stdout);
    int64_t t0 = attn_now_ns();
    if (attn_peak_measure(&pk, &o, stderr) != 0) {
        if (f)
            fclose(f);
        return EXIT_FAILED;
    }
    attn_peak_print(stdout, &pk);
    printf("peak: best ISA %s; measured in %.1f s\n", attn_peak_best_isa(&pk),
           (double)(attn_now_ns() - t0) * 1e-9);
    if (f) {
        attn_peak_write_json(f, &pk, 0);
        fprintf(f, "\n");
        if (fclose(f) != 0) {
            fprintf(stderr, "peak: error writing '%s': %s\n", out, strerror(errno));
            return EXIT_FAILED;
        }
        printf("peak: wrote %s\n", out);
    }
    return EXIT_OK;
}
