/* attnbench bench: Google Benchmark (through gbench_shim.h) over variant x
 * performance case x thread count, with GFLOP/s, GB/s and pct_peak
 * counters, so --benchmark_out=FILE.json works with compare.py. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "cli.h"
#include "gbench_shim.h"
#include "machine.h"
#include "peak.h"
#include "perf_cases.h"
#include "perf_cell.h"
#include "shape_arg.h"
#include "variant.h"

enum { MAX_VARIANTS = 32, MAX_THREAD_ARGS = 16, MAX_SHAPES = 64, NAME_CAP = 320 };

typedef struct bench_run bench_run;

/* One registered benchmark: what it runs and the inputs, set up lazily. */
typedef struct bench_item {
    bench_run *run;
    const attn_variant *variant;
    attn_perf_case pc; /* shape, threads, element types */
    attn_perf_cell cell;
    int ready;
} bench_item;

/* The whole command's state: the items and which one holds its inputs now
 * (one at a time, so a preset's inputs never all sit in memory at once). */
struct bench_run {
    bench_item *items;
    int n_items;
    bench_item *current;
    long llc_bytes;   /* memory-bound cells rotate inputs past it */
    attn_pages pages; /* under the inputs and the workspace */
};

static void bench_help(void)
{
    printf("usage: attnbench bench [--variant NAME]... [--preset NAME] [--shape SHAPE]...\n"
           "                       [--threads N]... [--dtype LIST] [--peak FILE.json]\n"
           "                       [--bw-mib N] [--pages huge|base]\n"
           "                       [Google Benchmark flags]\n\n"
           "Times each variant on the performance shapes of a preset with Google Benchmark\n"
           "(real time). Benchmark names are the canonical case name plus /threads:N, e.g.\n"
           "  impl=naive,B=1,Hq=8,Hkv=8,nq=512,nkv=512,dk=64,dv=64,causal=1/threads:2\n"
           "(Google Benchmark appends /real_time), so one regex means the same in verify,\n"
           "bench and the matrix CSV; cells not all f32 add ,q=..,kv=..,o=.. before /threads.\n"
           "Counters:\n"
           "  GFLOP/s   2(d_k+d_v) x keys seen, summed over rows, heads and batch, per call\n"
           "  GB/s      Q, K, V and O moved once per call, at their types' sizes\n"
           "  pct_peak  %% of the roof that binds at that thread count: the measured FMA\n"
           "            peak (prefill); for n_q <= 16 the read bandwidth, or the FMA peak\n"
           "            when the flops take longer there (many query heads a K/V head)\n"
           "A variant this CPU cannot run is a visible SKIP line, not registered. What is\n"
           "timed is the variant's typed call on a workspace allocated once; inputs are\n"
           "N(0,1), rounded to nearest even into the cell's types, set up outside the\n"
           "timed loop.\n\n"
           "  --variant NAME   only this variant (repeatable); default: the preset's\n"
           "  --preset NAME    %s (default quick)\n"
           "  --shape SHAPE    a shape of your own instead of the preset's (repeatable;\n"
           "                   the preset still names the default variants), at all\n"
           "                   threads in f32 unless --threads and --dtype say otherwise:\n",
           attn_perf_preset_names());
    attn_shape_arg_help(19, 0);
    printf("  --threads N      thread count (repeatable); replaces the preset's\n"
           "  --dtype LIST     element types, comma-separated: f32, bf16, f16 (Q, K/V, O of\n"
           "                   that type), f16kv, bf16kv (f32 Q and O, a narrow K/V cache),\n"
           "                   all; every shape at each, replacing the preset's own types\n"
           "                   (default: the preset's, f32 but for its low-precision rows)\n"
           "  --peak FILE      take peaks from `attnbench peak --out FILE` or a matrix\n"
           "                   .meta.json instead of measuring them at start (~3 s)\n"
           "  --bw-mib N       MiB per bandwidth array when measuring (default %d)\n",
           ATTN_PEAK_DEFAULT_BW_MIB);
    cli_pages_help(19);
    printf("Google Benchmark flags are passed through, e.g. --benchmark_filter=REGEX,\n"
           "--benchmark_repetitions=N, --benchmark_min_time=S, --benchmark_out=FILE\n"
           "--benchmark_out_format=json|csv, --benchmark_list_tests. Anything else is an\n"
           "error.\n");
}

static void bench_fn(void *ctx)
{
    bench_item *it = ctx;
    attn_perf_cell_run(&it->cell);
}

/* Sets up this item's inputs (freeing the previous item's) and runs it
 * once untimed: a warm-up, and a check that run() succeeds at all. */
static int bench_setup(void *ctx, char *msg, size_t cap)
{
    bench_item *it = ctx;
    bench_run *run = it->run;
    if (it->ready)
        return 0;
    if (run->current) {
        attn_perf_cell_free(&run->current->cell);
        run->current->ready = 0;
        run->current = NULL;
    }
    if (attn_perf_cell_setup(&it->cell, it->variant, &it->pc, run->llc_bytes, run->pages, msg,
                             cap) != 0)
        return -1;
    int rc = attn_perf_cell_run(&it->cell);
    if (rc != ATTN_OK) {
        snprintf(msg, cap, "run() returned %d: %s", rc, attn_strerror(rc));
        attn_perf_cell_free(&it->cell);
        return -1;
    }
    it->ready = 1;
    run->current = it;
    return 0;
}

typedef struct bench_opts {
    const attn_variant *variants[MAX_VARIANTS];
    int n_variants;
    int preset;
    int threads[MAX_THREAD_ARGS];
    int n_threads;
    attn_types dtypes[ATTN_DTYPE_AXIS_MAX]; /* --dtype; n_dtypes = 0: the preset's */
    int n_dtypes;
    attn_shape shapes[MAX_SHAPES]; /* --shape; n_shapes = 0: the preset's */
    int n_shapes;
    const char *peak_file;
    size_t bw_bytes;
    attn_pages pages;
    /* What is left for Google Benchmark, argv[0] first. */
    char **gb_argv;
    int gb_argc;
} bench_opts;

/* Our flags out of argv; everything else goes to Google Benchmark, which
 * refuses what it does not know. */
static int parse_bench_args(int argc, char **argv, bench_opts *o)
{
    const char *value;
    int r;
    long x;
    o->gb_argv[o->gb_argc++] = "attnbench bench";
    for (int i = 1; i < argc; i++) {
        if (cli_switch(argv, i, "--help") || cli_switch(argv, i, "-h")) {
            bench_help();
            return 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--variant", &value)) != 0) {
            if (r < 0)
                return -1;
            if (cli_add_variant("bench", value, o->variants, &o->n_variants, MAX_VARIANTS) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--preset", &value)) != 0) {
            if (r < 0)
                return -1;
            if ((o->preset = attn_perf_preset_parse(value)) < 0) {
                fprintf(stderr, "bench: --preset '%s' must be one of %s\n", value,
                        attn_perf_preset_names());
                return -1;
            }
        } else if ((r = cli_flag_value(argc, argv, &i, "--shape", &value)) != 0) {
            if (r < 0 ||
                attn_shape_arg_add("bench", value, o->shapes, NULL, &o->n_shapes, MAX_SHAPES) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--threads", &value)) != 0) {
            if (r < 0 || cli_parse_long("bench", "--threads", value, 1, 4096, &x) != 0)
                return -1;
            if (o->n_threads < MAX_THREAD_ARGS)
                o->threads[o->n_threads++] = (int)x;
        } else if ((r = cli_flag_value(argc, argv, &i, "--dtype", &value)) != 0) {
            if (r < 0 || (o->n_dtypes = cli_parse_dtypes("bench", value, o->dtypes)) < 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--peak", &value)) != 0) {
            if (r < 0)
                return -1;
            o->peak_file = value;
        } else if ((r = cli_flag_value(argc, argv, &i, "--bw-mib", &value)) != 0) {
            if (r < 0 || cli_parse_long("bench", "--bw-mib", value, 1, 1 << 20, &x) != 0)
                return -1;
            o->bw_bytes = (size_t)x << 20;
        } else if ((r = cli_flag_value(argc, argv, &i, "--pages", &value)) != 0) {
            if (r < 0 || cli_parse_pages("bench", value, &o->pages) != 0)
                return -1;
        } else if (strncmp(argv[i], "--benchmark_", 12) == 0 || strncmp(argv[i], "--v=", 4) == 0) {
            o->gb_argv[o->gb_argc++] = argv[i];
        } else {
            cli_unknown("bench", argv[i]);
            return -1;
        }
    }
    o->gb_argv[o->gb_argc] = NULL;
    return 0;
}

/* The peaks pct_peak is judged against: read from --peak, or measured now
 * (FMA per ISA and read bandwidth; 3 repetitions) at every thread count. */
static int bench_peaks(const bench_opts *o, const attn_perf_case *cases, int n_cases, attn_peak *pk)
{
    if (o->peak_file) {
        char err[600];
        if (attn_peak_read_json(o->peak_file, pk, err, sizeof err) != 0) {
            fprintf(stderr, "bench: --peak: %s\n", err);
            return -1;
        }
        /* Its read roof bounds these rows only when it read the same pages. */
        int agree = attn_peak_pages_check(pk, o->pages, o->peak_file, err, sizeof err);
        if (agree != 0)
            fprintf(stderr, "bench: %s%s\n", agree < 0 ? "--peak: " : "note: ", err);
        return agree < 0 ? -1 : 0;
    }
    attn_peak_init(pk);
    int bandwidth = 0;
    for (int i = 0; i < n_cases; i++) {
        attn_peak_add_threads(pk, cases[i].threads);
        bandwidth |= attn_perf_bandwidth_bound(&cases[i].shape);
    }
    attn_peak_opts po = attn_peak_default_opts();
    po.exp = 0;
    po.sgemm = 0; /* a reference for the perf-targets report, not a bench counter */
    po.bandwidth = bandwidth;
    po.repetitions = 3;
    po.seconds = 0.02;
    if (o->bw_bytes)
        po.bw_array_bytes = o->bw_bytes;
    po.pages = o->pages;
    fprintf(stderr, "bench: measuring the FMA peak%s (--peak FILE skips this)\n",
            bandwidth ? " and read bandwidth" : "");
    if (attn_peak_measure(pk, &po, NULL) != 0)
        return -1;
    for (int ti = 0; ti < pk->n_threads; ti++) {
        fprintf(stderr, "bench: peak at %d threads: %.1f GFLOP/s (%s)", pk->threads[ti],
                attn_peak_fma_for(pk, pk->threads[ti]), attn_peak_best_isa(pk));
        if (bandwidth)
            fprintf(stderr, ", %.1f GB/s read", pk->read_gbytes_per_s[ti]);
        fprintf(stderr, "\n");
    }
    return 0;
}

/* Registers one item; prints why when it is not registered. */
static void register_item(bench_item *it, const attn_peak *pk)
{
    char name[NAME_CAP], why[300];
    const attn_shape *s = &it->pc.shape;
    attn_case c = {.shape = *s, .data = DATA_NORMAL, .types = it->pc.types};
    attn_case_name(it->variant->name, &c, name, sizeof name);
    size_t len = strlen(name);
    snprintf(name + len, sizeof name - len, "/threads:%d", it->pc.threads);
    size_t ws;
    if (attn_perf_skip_reason(it->variant, &it->pc, &ws, why, sizeof why)) {
        printf("SKIP %s: skipped: %s\n", name, why);
        return;
    }
    attn_gb_benchmark *b = attn_gb_register(name, bench_fn, it);
    if (!b) {
        printf("SKIP %s: Google Benchmark refused the registration\n", name);
        return;
    }
    attn_gb_setup(b, bench_setup);
    attn_gb_use_real_time(b);
    const double flops = attn_perf_flops(s), bytes = attn_perf_bytes(s, &it->pc.types);
    attn_gb_rate_counter(b, "GFLOP/s", flops * 1e-9);
    attn_gb_rate_counter(b, "GB/s", bytes * 1e-9);
    /* The roofline's side: decode against the read roof unless its flops
     * at the compute roof take longer (many query heads per K/V head). */
    const double roof = attn_peak_roof_for(pk, it->variant->roof, it->pc.threads);
    const double read = attn_peak_read_for(pk, it->pc.threads);
    if (attn_perf_roofline_bandwidth_bound(s, &it->pc.types, roof, read)) {
        if (isfinite(read))
            attn_gb_percent_counter(b, "pct_peak", bytes, read * 1e9);
    } else if (isfinite(roof)) {
        attn_gb_percent_counter(b, "pct_peak", flops, roof * 1e9);
    }
}

int cmd_bench(int argc, char **argv)
{
    char **gb_argv = calloc((size_t)argc + 2, sizeof *gb_argv);
    if (!gb_argv)
        return EXIT_FAILED;
    bench_opts o = {.preset = PERF_QUICK, .gb_argv = gb_argv};
    int rc = parse_bench_args(argc, argv, &o);
    if (rc != 0) {
        free(gb_argv);
        return rc > 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (cli_check_cpu_mask("bench") != 0 || attn_gb_initialize(&o.gb_argc, o.gb_argv) != 0) {
        free(gb_argv);
        return EXIT_USAGE;
    }
    if (o.n_variants == 0)
        o.n_variants =
            attn_perf_preset_variants((attn_perf_preset)o.preset, o.variants, MAX_VARIANTS);
    attn_machine m;
    attn_machine_read(&m);
    const attn_perf_axes axes = {o.threads,  o.n_threads, o.dtypes,
                                 o.n_dtypes, o.shapes,    o.n_shapes};
    int n_cases = attn_perf_case_list((attn_perf_preset)o.preset, m.cores, &axes, NULL, 0);
    attn_perf_case *cases = malloc(sizeof *cases * (size_t)n_cases);
    bench_item *items = calloc((size_t)n_cases * (size_t)o.n_variants + 1, sizeof *items);
    attn_peak pk;
    if (!cases || !items) {
        fprintf(stderr, "bench: out of memory\n");
        rc = EXIT_FAILED;
        goto done;
    }
    attn_perf_case_list((attn_perf_preset)o.preset, m.cores, &axes, cases, n_cases);
    if (bench_peaks(&o, cases, n_cases, &pk) != 0) {
        rc = EXIT_USAGE;
        goto done;
    }
    bench_run run = {items, 0, NULL, m.l3_bytes, o.pages};
    for (int vi = 0; vi < o.n_variants; vi++) {
        const attn_variant *v = o.variants[vi];
        if (!attn_variant_runnable(v)) {
            char missing[128];
            attn_variant_missing(v, missing, sizeof missing);
            printf("SKIP impl=%s (every case): needs %s\n", v->name, missing);
            continue;
        }
        for (int ci = 0; ci < n_cases; ci++) {
            if (!attn_perf_case_runs(&cases[ci], v))
                continue;
            bench_item *it = &items[run.n_items++];
            *it = (bench_item){.run = &run, .variant = v, .pc = cases[ci]};
            register_item(it, &pk);
        }
    }
    fflush(stdout);
    size_t ran = attn_gb_run();
    if (run.current)
        attn_perf_cell_free(&run.current->cell);
    attn_gb_shutdown();
    rc = EXIT_OK;
    if (ran == 0) {
        fprintf(stderr, "bench: no benchmark ran (check --benchmark_filter and --variant)\n");
        rc = EXIT_FAILED;
    }
done:
    free(cases);
    free(items);
    free(gb_argv);
    return rc;
}
