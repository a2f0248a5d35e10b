/* attnbench matrix: every variant x performance shape x thread count of a
 * preset, timed by our own loop and checked for accuracy on the same
 * shape, as one tidy CSV row each (docs/results-format.md) plus a sidecar
 * FILE.meta.json. Rows are flushed as they finish; --resume continues an
 * interrupted run without duplicates. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "accuracy.h"
#include "cases.h"
#include "cli.h"
#include "interrupt.h"
#include "machine.h"
#include "peak.h"
#include "perf_cases.h"
#include "perf_cell.h"
#include "perf_targets.h"
#include "progress.h"
#include "results_csv.h"
#include "rss_probe.h"
#include "run_meta.h"
#include "timer.h"

enum { MAX_VARIANTS = 32, MAX_THREAD_ARGS = 16, MAX_REPS = 1000 };

/* The reference check runs on every row_stride-th query row, the stride
 * chosen so the double-precision reference does about this many flops:
 * well under a second on two cores. */
static const double check_budget_flops = 2e8;
/* Fixed cost per cell (setup, fill, check) for the ETA, in seconds. */
static const double cell_overhead_s = 0.05;

typedef struct matrix_opts {
    int preset;
    const attn_variant *variants[MAX_VARIANTS];
    int n_variants;
    int threads[MAX_THREAD_ARGS];
    int n_threads;
    const char *out;
    char default_out[300];
    int resume;
    int overwrite;
    long repetitions;
    double min_time, max_time;
    const char *peak_file;
    size_t bw_bytes;
    regex_t filter;
    int has_filter;
    long llc_bytes; /* memory-bound cells rotate inputs past it */
} matrix_opts;

/* One cell to run: a variant on a case. */
typedef struct matrix_cell {
    const attn_variant *variant;
    attn_perf_case pc;
    char name[256];
    double weight; /* estimated seconds, for the ETA */
} matrix_cell;

static void matrix_help(void)
{
    printf("usage: attnbench matrix [--preset NAME] [--variant NAME]... [--threads N]...\n"
           "                        [--out FILE.csv] [--resume | --overwrite] [--repetitions N]\n"
           "                        [--min-time S]\n"
           "                        [--max-time S] [--filter REGEX] [--peak FILE.json] [--bw-mib "
           "N]\n\n"
           "Runs every variant on every shape x thread count of a preset and writes one CSV\n"
           "row each, with exactly the columns of docs/results-format.md, plus FILE.meta.json\n"
           "(machine, build, library versions, date, and the peaks measured at the start).\n"
           "Timing: our own loop (CLOCK_MONOTONIC) around the variant's run() on a workspace\n"
           "allocated once: one untimed checked run, then repetitions until both --repetitions\n"
           "and --min-time are reached (or --max-time is); median, min and max. Accuracy:\n"
           "that checked run's output against the double reference on sampled rows (E_M, E_D,\n"
           "rule A's bound, NMSE); a rule-A violation makes the row's status 'failed: ...'.\n"
           "Each finished row is written at once with a single write(); Ctrl-C or a kill\n"
           "leaves only whole rows (exit 130) and --resume skips rows already there.\n\n"
           "  --preset NAME      %s (default quick)\n"
           "  --variant NAME     only this variant (repeatable); default: the preset's\n"
           "  --threads N        thread count (repeatable); replaces the preset's\n"
           "  --out FILE.csv     default results/<cpu slug>-<preset>.csv\n"
           "  --overwrite        empty an existing FILE.csv first (without it, or --resume,\n"
           "                     a file that holds rows is refused)\n"
           "  --resume           keep the rows already in FILE.csv (its header must match)\n"
           "                     and its meta.json's peaks; run only what is missing\n"
           "  --repetitions N    minimum timed repetitions (default per preset, 3 for quick)\n"
           "  --min-time S       minimum seconds of timed repetitions (default per preset)\n"
           "  --max-time S       stop repeating a cell after S seconds of timed runs (at\n"
           "                     least one run; default per preset, 1 for quick)\n"
           "  --filter REGEX     only cells whose case name matches (POSIX extended regex)\n"
           "  --peak FILE        take peaks from `attnbench peak --out FILE` (or a meta.json)\n"
           "                     instead of measuring them (~10 s)\n"
           "  --bw-mib N         MiB per bandwidth array when measuring (default %d)\n"
           "With --preset perf-targets, issue 6's targets are printed after the run with the\n"
           "achieved ratio and a check mark. Exit: 0, 1 when a row failed, 2 on bad usage\n"
           "or an unwritable/foreign --out, 130 when interrupted.\n",
           attn_perf_preset_names(), ATTN_PEAK_DEFAULT_BW_MIB);
}

static int parse_matrix_args(int argc, char **argv, matrix_opts *o)
{
    const char *value;
    int r;
    long x;
    for (int i = 1; i < argc; i++) {
        if (cli_switch(argv, i, "--help") || cli_switch(argv, i, "-h")) {
            matrix_help();
            return 1;
        } else if (cli_switch(argv, i, "--resume")) {
            o->resume = 1;
        } else if (cli_switch(argv, i, "--overwrite")) {
            o->overwrite = 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--preset", &value)) != 0) {
            if (r < 0)
                return -1;
            if ((o->preset = attn_perf_preset_parse(value)) < 0) {
                fprintf(stderr, "matrix: --preset '%s' must be one of %s\n", value,
                        attn_perf_preset_names());
                return -1;
            }
        } else if ((r = cli_flag_value(argc, argv, &i, "--variant", &value)) != 0) {
            if (r < 0)
                return -1;
            if (cli_add_variant("matrix", value, o->variants, &o->n_variants, MAX_VARIANTS) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--threads", &value)) != 0) {
            if (r < 0 || cli_parse_long("matrix", "--threads", value, 1, 4096, &x) != 0)
                return -1;
            if (o->n_threads < MAX_THREAD_ARGS)
                o->threads[o->n_threads++] = (int)x;
        } else if ((r = cli_flag_value(argc, argv, &i, "--out", &value)) != 0) {
            if (r < 0)
                return -1;
            o->out = value;
        } else if ((r = cli_flag_value(argc, argv, &i, "--repetitions", &value)) != 0) {
            if (r < 0 ||
                cli_parse_long("matrix", "--repetitions", value, 1, MAX_REPS, &o->repetitions))
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--min-time", &value)) != 0) {
            if (r < 0 || cli_parse_double("matrix", "--min-time", value, 0, 3600, &o->min_time))
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--max-time", &value)) != 0) {
            if (r < 0 || cli_parse_double("matrix", "--max-time", value, 0, 36000, &o->max_time))
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--filter", &value)) != 0) {
            if (r < 0 || cli_set_filter("matrix", value, &o->filter, &o->has_filter) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--peak", &value)) != 0) {
            if (r < 0)
                return -1;
            o->peak_file = value;
        } else if ((r = cli_flag_value(argc, argv, &i, "--bw-mib", &value)) != 0) {
            if (r < 0 || cli_parse_long("matrix", "--bw-mib", value, 1, 1 << 20, &x) != 0)
                return -1;
            o->bw_bytes = (size_t)x << 20;
        } else {
            cli_unknown("matrix", argv[i]);
            return -1;
        }
    }
    return 0;
}

/* Odd, so the sampled rows walk through different i in successive heads
 * rather than hitting the same ones (n_q is usually a power of two). */
static int64_t check_row_stride(const attn_shape *s)
{
    double cost = attn_perf_flops(s);
    int64_t stride = (int64_t)ceil(cost / check_budget_flops);
    if (stride <= 1)
        return 1;
    return stride | 1;
}

/* The untimed checked run through the public dispatcher (guards around the
 * workspace), then its output against the reference on sampled rows. */
static void check_cell(attn_perf_cell *c, int all, attn_result_row *row)
{
    attn_run_report report;
    char msg[300];
    omp_set_num_threads(c->threads);
    int rc =
        attn_run_variant(c->variant, &c->shape, c->q, c->k, c->v, c->o, &report, msg, sizeof msg);
    if (rc != ATTN_OK) {
        snprintf(row->status, sizeof row->status, "failed: attn_run returned %d: %s", rc, msg);
        return;
    }
    if (!report.workspace_guard_ok) {
        snprintf(row->status, sizeof row->status,
                 "failed: guard bytes around the workspace overwritten");
        return;
    }
    attn_problem p = attn_problem_make(&c->shape, c->q, c->k, c->v, NULL);
    p.threads = c->threads;   /* rule A's r counts the run's threads */
    omp_set_num_threads(all); /* the reference itself may use every core */
    attn_err_stats st;
    if (attn_check_output(c->variant, &p, c->o, check_row_stride(&c->shape), &st) != ATTN_OK) {
        snprintf(row->status, sizeof row->status, "failed: out of memory for the reference");
        return;
    }
    row->max_err_u = st.e_m;
    row->max_err_d_u = st.e_d;
    row->bound_u = st.bound_u;
    row->nmse = attn_err_nmse(&st);
    if (st.failures)
        snprintf(row->status, sizeof row->status, "failed: %s", st.first_failure);
}

static void time_cell(attn_perf_cell *c, const matrix_opts *o, attn_result_row *row)
{
    static const int max_reps = MAX_REPS;
    double *t = malloc(sizeof *t * (size_t)max_reps);
    if (!t) {
        snprintf(row->status, sizeof row->status, "failed: out of memory for the timings");
        return;
    }
    int n = 0;
    double total = 0, lo = INFINITY, hi = 0;
    while (n < max_reps && (n < o->repetitions || total < o->min_time) &&
           !(n >= 1 && total >= o->max_time)) {
        int64_t t0 = attn_now_ns();
        int rc = attn_perf_cell_run(c);
        double ns = (double)(attn_now_ns() - t0);
        if (rc != ATTN_OK) {
            snprintf(row->status, sizeof row->status, "failed: run() returned %d in timing", rc);
            free(t);
            return;
        }
        t[n++] = ns;
        total += ns * 1e-9;
        lo = ns < lo ? ns : lo;
        hi = ns > hi ? ns : hi;
    }
    row->time_ns_median = attn_median(t, n);
    row->time_ns_min = lo;
    row->time_ns_max = hi;
    row->repetitions = n;
    free(t);
}

/* Fills a row for one cell: skip reason, or checked run plus timings. */
static void measure_cell(const matrix_opts *o, const matrix_cell *mc, const attn_peak *pk, int all,
                         attn_result_row *row)
{
    const attn_variant *v = mc->variant;
    const attn_shape *s = &mc->pc.shape;
    const int threads = mc->pc.threads;
    attn_result_row_init(row);
    snprintf(row->case_name, sizeof row->case_name, "%s", mc->name);
    snprintf(row->variant, sizeof row->variant, "%s", v->name);
    row->shape = *s;
    row->threads = threads;
    const int bw_bound = attn_perf_bandwidth_bound(s);
    snprintf(row->limit, sizeof row->limit, "%s", bw_bound ? "bandwidth" : "fma");
    row->peak_gflops = attn_peak_fma_for(pk, threads);
    row->peak_gbytes_per_s = attn_peak_read_for(pk, threads);
    snprintf(row->status, sizeof row->status, "ok");
    size_t ws = 0;
    int skip = attn_perf_skip_reason(v, s, threads, &ws, row->status, sizeof row->status);
    row->workspace_bytes = (int64_t)ws;
    if (skip)
        return;
    attn_perf_cell cell;
    if (attn_perf_cell_setup(&cell, v, s, threads, o->llc_bytes, row->status, sizeof row->status) !=
        0)
        return;
    check_cell(&cell, all, row);
    if (strncmp(row->status, "failed: attn_run", 16) != 0 &&
        strncmp(row->status, "failed: guard", 13) != 0)
        time_cell(&cell, o, row);
    attn_perf_cell_free(&cell);
    if (isfinite(row->time_ns_median)) {
        row->gflops = attn_perf_flops(s) / row->time_ns_median;
        row->gbytes_per_s = attn_perf_bytes(s) / row->time_ns_median;
        row->pct_peak = bw_bound ? 100.0 * row->gbytes_per_s / row->peak_gbytes_per_s
                                 : 100.0 * row->gflops / row->peak_gflops;
    }
}

/* The peaks the rows are judged against: --peak FILE, the meta.json of the
 * run being resumed, or measured now at every thread count the cells use.
 * A thread count the figures lack leaves pct_peak empty. */
static int matrix_peaks(const matrix_opts *o, const char *meta, const matrix_cell *cells, int n,
                        int all, attn_peak *pk, int *reused_meta)
{
    char err[400];
    *reused_meta = 0;
    if (o->peak_file) {
        if (attn_peak_read_json(o->peak_file, pk, err, sizeof err) != 0) {
            fprintf(stderr, "matrix: --peak: %s\n", err);
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (o->resume && stat(meta, &st) == 0) {
        if (attn_peak_read_json(meta, pk, err, sizeof err) == 0) {
            fprintf(stderr, "matrix: resuming with the peaks of %s\n", meta);
            *reused_meta = 1;
            return 0;
        }
        fprintf(stderr, "matrix: note: %s; measuring the peaks again\n", err);
    }
    attn_peak_init(pk);
    /* 1 and all threads always, so the sidecar describes the machine. */
    attn_peak_add_threads(pk, 1);
    attn_peak_add_threads(pk, all);
    for (int i = 0; i < n; i++)
        attn_peak_add_threads(pk, cells[i].pc.threads);
    attn_peak_opts po = attn_peak_default_opts();
    if (o->bw_bytes)
        po.bw_array_bytes = o->bw_bytes;
    fprintf(stderr, "matrix: measuring the peaks (--peak FILE skips this)\n");
    return attn_peak_measure(pk, &po, stderr);
}

/* Estimated seconds of a cell, for the ETA: its work at a guessed third of
 * the limit that applies, times the repetitions. */
static double cell_weight(const matrix_opts *o, const attn_perf_case *pc, const attn_peak *pk)
{
    double limit_s;
    if (attn_perf_bandwidth_bound(&pc->shape)) {
        double bw = attn_peak_read_for(pk, pc->threads);
        limit_s = attn_perf_bytes(&pc->shape) / ((isfinite(bw) ? bw : 10.0) * 1e9);
    } else {
        double fma = attn_peak_fma_for(pk, pc->threads);
        limit_s = attn_perf_flops(&pc->shape) / ((isfinite(fma) ? fma : 50.0) * 1e9);
    }
    double timed = 3.0 * limit_s * (double)o->repetitions;
    if (timed < o->min_time)
        timed = o->min_time;
    if (timed > o->max_time)
        timed = o->max_time;
    return cell_overhead_s + 3.0 * limit_s + timed;
}

/* Variants × cases, minus the filtered-out and (on resume) the done. */
static matrix_cell *build_cells(const matrix_opts *o, const attn_results_file *rf, int all,
                                int *n_out, int *n_done)
{
    int n_cases =
        attn_perf_case_list((attn_perf_preset)o->preset, all, o->threads, o->n_threads, NULL, 0);
    attn_perf_case *cases = malloc(sizeof *cases * (size_t)(n_cases + 1));
    matrix_cell *cells = malloc(sizeof *cells * (size_t)(n_cases * o->n_variants + 1));
    *n_out = *n_done = 0;
    if (!cases || !cells) {
        free(cases);
        free(cells);
        return NULL;
    }
    attn_perf_case_list((attn_perf_preset)o->preset, all, o->threads, o->n_threads, cases, n_cases);
    for (int vi = 0; vi < o->n_variants; vi++)
        for (int ci = 0; ci < n_cases; ci++) {
            matrix_cell *mc = &cells[*n_out];
            mc->variant = o->variants[vi];
            mc->pc = cases[ci];
            attn_case c = {cases[ci].shape, DATA_NORMAL};
            attn_case_name(mc->variant->name, &c, mc->name, sizeof mc->name);
            if (o->has_filter && regexec(&o->filter, mc->name, 0, NULL, 0) != 0)
                continue;
            if (attn_results_has(rf, mc->name, mc->pc.threads)) {
                (*n_done)++;
                continue;
            }
            (*n_out)++;
        }
    free(cases);
    return cells;
}

static void print_row(const attn_result_row *r)
{
    char time[32] = "-", rate[48] = "";
    if (isfinite(r->time_ns_median)) {
        double ns = r->time_ns_median;
        snprintf(time, sizeof time,
                 ns >= 1e9   ? "%.2f s"
                 : ns >= 1e6 ? "%.2f ms"
                             : "%.1f us",
                 ns >= 1e9   ? ns * 1e-9
                 : ns >= 1e6 ? ns * 1e-6
                             : ns * 1e-3);
        snprintf(rate, sizeof rate, "%.1f GFLOP/s %.1f GB/s %.1f%% %s", r->gflops, r->gbytes_per_s,
                 r->pct_peak, r->limit);
    }
    printf("%-6s %s threads=%d %s %s",
           strncmp(r->status, "ok", 2) == 0        ? "ok"
           : strncmp(r->status, "skipped", 7) == 0 ? "SKIP"
                                                   : "FAIL",
           r->case_name, r->threads, time, rate);
    if (isfinite(r->max_err_u))
        printf(" E_M=%.2fu", r->max_err_u);
    if (strcmp(r->status, "ok") != 0)
        printf("  %s", r->status);
    printf("\n");
    fflush(stdout);
}

/* Writes a row under the interrupt lock, so Ctrl-C never cuts it. */
static int emit_row(attn_interrupt *in, attn_results_file *rf, const attn_result_row *row,
                    const char *path)
{
    char err[300];
    attn_interrupt_lock(in);
    int rc = attn_results_append(rf, row, err, sizeof err);
    attn_interrupt_unlock(in);
    if (rc != 0)
        fprintf(stderr, "matrix: %s: %s\n", path, err);
    return rc;
}

typedef struct matrix_totals {
    int ok, skipped, failed;
} matrix_totals;

static int run_cells(const matrix_opts *o, matrix_cell *cells, int n, const attn_peak *pk, int all,
                     attn_interrupt *in, attn_results_file *rf, matrix_totals *tot)
{
    double total_weight = 0;
    for (int i = 0; i < n; i++)
        total_weight += (cells[i].weight = cell_weight(o, &cells[i].pc, pk));
    attn_progress bar;
    attn_progress_init(&bar, n, total_weight);
    for (int i = 0; i < n; i++) {
        char label[300];
        snprintf(label, sizeof label, "threads=%d %s", cells[i].pc.threads, cells[i].name);
        attn_progress_show(&bar, label);
        attn_result_row row;
        measure_cell(o, &cells[i], pk, all, &row);
        if (emit_row(in, rf, &row, o->out) != 0)
            return -1;
        attn_progress_clear(&bar);
        print_row(&row);
        if (strcmp(row.status, "ok") == 0)
            tot->ok++;
        else if (strncmp(row.status, "skipped", 7) == 0)
            tot->skipped++;
        else
            tot->failed++;
        attn_progress_step(&bar, cells[i].weight);
    }
    attn_progress_clear(&bar);
    return 0;
}

/* Fills the variant list from the preset when --variant was not given. */
static void default_variants(matrix_opts *o)
{
    if (o->n_variants > 0)
        return;
    o->n_variants =
        attn_perf_preset_variants((attn_perf_preset)o->preset, o->variants, MAX_VARIANTS);
}

static int matrix_main(matrix_opts *o, attn_interrupt *in)
{
    attn_machine m;
    attn_machine_read(&m);
    o->llc_bytes = m.l3_bytes;
    const attn_perf_preset_info *info = attn_perf_preset_get((attn_perf_preset)o->preset);
    if (!o->out) {
        snprintf(o->default_out, sizeof o->default_out, "results/%s-%s.csv", m.slug, info->name);
        mkdir("results", 0755); /* the default's directory; an error shows at open */
        o->out = o->default_out;
    }
    char err[600], meta[400];
    attn_meta_path(o->out, meta, sizeof meta);
    attn_results_file rf;
    if (attn_results_open(&rf, o->out,
                          o->resume      ? ATTN_RESULTS_RESUME
                          : o->overwrite ? ATTN_RESULTS_OVERWRITE
                                         : ATTN_RESULTS_NEW,
                          err, sizeof err) != 0) {
        fprintf(stderr, "matrix: --out: %s\n", err);
        return EXIT_USAGE;
    }
    if (rf.dropped_partial)
        fprintf(stderr, "matrix: dropped a partial last line of %s\n", o->out);
    int n = 0, n_done = 0, rc = EXIT_OK;
    matrix_cell *cells = build_cells(o, &rf, m.cores, &n, &n_done);
    attn_peak pk;
    int reused_meta = 0;
    if (!cells) {
        fprintf(stderr, "matrix: out of memory\n");
        rc = EXIT_FAILED;
    } else if (matrix_peaks(o, meta, cells, n, m.cores, &pk, &reused_meta) != 0) {
        rc = EXIT_USAGE;
    } else if (!reused_meta && attn_meta_write(meta, info->name, &pk, err, sizeof err) != 0) {
        fprintf(stderr, "matrix: %s\n", err);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK) {
        printf("matrix: preset %s, %d cells to run (%d already in %s); each: at least %ld "
               "repetitions and %.3g s, at most %.3g s\n",
               info->name, n, n_done, o->out, o->repetitions, o->min_time, o->max_time);
        fflush(stdout);
        int64_t t0 = attn_now_ns();
        matrix_totals tot = {0};
        if (run_cells(o, cells, n, &pk, m.cores, in, &rf, &tot) != 0)
            rc = EXIT_FAILED;
        printf("matrix: %d rows (%d ok, %d skipped, %d failed) written to %s in %.1f s; "
               "metadata in %s\n",
               tot.ok + tot.skipped + tot.failed, tot.ok, tot.skipped, tot.failed, o->out,
               (double)(attn_now_ns() - t0) * 1e-9, meta);
        if (o->preset == PERF_TARGETS) {
            attn_perf_targets_report(stdout, rf.rows, rf.n_rows, m.cores, NULL);
            /* The memory target needs a process per probe (its figure is the
             * process's peak): run unless a --filter leaves out "rss". */
            static const char *const streaming[] = {"stream", "avx2", "avx512", "xsmm", NULL};
            if (!o->has_filter || regexec(&o->filter, "rss", 0, NULL, 0) == 0)
                attn_rss_targets_report(stdout, streaming, NULL);
        }
        if (tot.failed && rc == EXIT_OK)
            rc = EXIT_FAILED;
    }
    free(cells);
    attn_results_close(&rf);
    return rc;
}

int cmd_matrix(int argc, char **argv)
{
    matrix_opts o = {.preset = PERF_QUICK, .repetitions = -1, .min_time = -1, .max_time = -1};
    int rc = parse_matrix_args(argc, argv, &o);
    if (rc == 0 && cli_check_cpu_mask("matrix") != 0)
        rc = -1;
    if (rc != 0) {
        if (o.has_filter)
            regfree(&o.filter);
        return rc > 0 ? EXIT_OK : EXIT_USAGE;
    }
    const attn_perf_preset_info *info = attn_perf_preset_get((attn_perf_preset)o.preset);
    if (o.repetitions < 0)
        o.repetitions = info->repetitions;
    if (o.min_time < 0)
        o.min_time = info->min_time;
    if (o.max_time < 0)
        o.max_time = info->max_time;
    default_variants(&o);
    attn_interrupt in;
    if (attn_interrupt_start(&in, "\nmatrix: interrupted; the CSV holds whole rows only, "
                                  "--resume continues\n") != 0) {
        fprintf(stderr, "matrix: cannot set up the interrupt handling thread\n");
        return EXIT_FAILED;
    }
    rc = matrix_main(&o, &in);
    attn_interrupt_stop(&in);
    if (o.has_filter)
        regfree(&o.filter);
    return rc;
}
