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
#include "matrix.h"
#include "matrix_budget.h"
#include "matrix_peers.h"
#include "matrix_sidecar.h"
#include "peak.h"
#include "perf_cases.h"
#include "perf_cell.h"
#include "perf_targets.h"
#include "progress.h"
#include "results_csv.h"
#include "rss_probe.h"
#include "run_meta.h"
#include "timer.h"

/* Fixed cost per cell (setup, fill, check) for the ETA, in seconds. */
static const double cell_overhead_s = 0.05;

/* Peaks read from `source` judge this run's rows only when measured on
 * the same pages (attn_peak_pages_check): -1 refuses. */
static int pages_agree(const matrix_opts *o, const attn_peak *pk, const char *source)
{
    char msg[400];
    int rc = attn_peak_pages_check(pk, o->pages, source, msg, sizeof msg);
    if (rc != 0)
        fprintf(stderr, "matrix: %s%s\n", rc < 0 ? "" : "note: ", msg);
    return rc < 0 ? -1 : 0;
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
        return pages_agree(o, pk, o->peak_file);
    }
    struct stat st;
    if (o->resume && stat(meta, &st) == 0) {
        if (attn_peak_read_json(meta, pk, err, sizeof err) == 0) {
            fprintf(stderr, "matrix: resuming with the peaks of %s\n", meta);
            *reused_meta = 1;
            /* Its rows were measured on the pages its roof was. */
            return pages_agree(o, pk, meta);
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
    po.pages = o->pages;
    fprintf(stderr, "matrix: measuring the peaks (--peak FILE skips this)\n");
    return attn_peak_measure(pk, &po, stderr);
}

/* Estimated seconds of a cell, for the ETA: its work at a guessed third of
 * the limit that applies, times the repetitions (twice for a cell timed
 * with its twin: the twin's rounds take as long again, about). */
static double cell_weight(const matrix_opts *o, const attn_perf_case *pc, const attn_peak *pk)
{
    double limit_s;
    if (attn_perf_bandwidth_bound(&pc->shape)) {
        double bw = attn_peak_read_for(pk, pc->threads);
        limit_s = attn_perf_bytes(&pc->shape, &pc->types) / ((isfinite(bw) ? bw : 10.0) * 1e9);
    } else {
        double fma = attn_peak_fma_for(pk, pc->threads);
        limit_s = attn_perf_flops(&pc->shape) / ((isfinite(fma) ? fma : 50.0) * 1e9);
    }
    double timed = 3.0 * limit_s * (double)o->repetitions;
    if (timed < o->min_time)
        timed = o->min_time;
    if (timed > o->max_time)
        timed = o->max_time;
    return cell_overhead_s + 3.0 * limit_s + (pc->pair == ATTN_PAIR_NONE ? 1.0 : 2.0) * timed;
}

int matrix_case_list(const matrix_opts *o, int all, attn_perf_case *out, int cap)
{
    const attn_perf_axes axes = {o->threads,  o->n_threads, o->dtypes,
                                 o->n_dtypes, o->shapes,    o->n_shapes};
    return attn_perf_case_list((attn_perf_preset)o->preset, all, &axes, out, cap);
}

const char *matrix_run_name(const matrix_opts *o)
{
    return o->n_shapes ? "shapes" : attn_perf_preset_get((attn_perf_preset)o->preset)->name;
}

/* Variants × cases, minus the filtered-out and (on resume) the done. */
static matrix_cell *build_cells(const matrix_opts *o, const attn_results_file *rf, int all,
                                int *n_out, int *n_done)
{
    int n_cases = matrix_case_list(o, all, NULL, 0);
    attn_perf_case *cases = malloc(sizeof *cases * (size_t)(n_cases + 1));
    /* calloc: a cell's plan is NULL unless --budget sets it */
    matrix_cell *cells = calloc((size_t)(n_cases * o->n_variants + 1), sizeof *cells);
    *n_out = *n_done = 0;
    if (!cases || !cells) {
        free(cases);
        free(cells);
        return NULL;
    }
    matrix_case_list(o, all, cases, n_cases);
    for (int vi = 0; vi < o->n_variants; vi++)
        for (int ci = 0; ci < n_cases; ci++) {
            if (!attn_perf_case_runs(&cases[ci], o->variants[vi]))
                continue;
            matrix_cell *mc = &cells[*n_out];
            mc->variant = o->variants[vi];
            mc->pc = cases[ci];
            attn_perf_case_name(mc->variant->name, &cases[ci].shape, &cases[ci].types, mc->name,
                                sizeof mc->name);
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
    int peer_findings; /* peer rows that failed a rule or a call: shown, not fatal */
} matrix_totals;

/* `budget` (NULL without --budget) holds the plan the cells follow. */
static int run_cells(const matrix_opts *o, matrix_cell *cells, int n, const attn_peak *pk, int all,
                     matrix_roofs *roofs, attn_interrupt *in, attn_results_file *rf,
                     matrix_totals *tot, matrix_budget *budget)
{
    double total_weight = 0;
    for (int i = 0; i < n; i++) {
        if (cells[i].plan) /* the ETA from the plan */
            cells[i].weight = cells[i].plan->skipped ? 0 : cells[i].plan->est_s;
        else
            cells[i].weight = cell_weight(o, &cells[i].pc, pk);
        total_weight += cells[i].weight;
    }
    attn_progress bar;
    attn_progress_init(&bar, n, total_weight);
    for (int i = 0; i < n; i++) {
        char label[300];
        snprintf(label, sizeof label, "threads=%d %s", cells[i].pc.threads, cells[i].name);
        attn_progress_show(&bar, label);
        attn_result_row row;
        matrix_measure_cell(o, &cells[i], pk, all, roofs, &row);
        if (emit_row(in, rf, &row, o->out) != 0)
            return -1;
        attn_progress_clear(&bar);
        matrix_print_row(&row);
        if (row.roof_exceeded)
            matrix_warn_roof(&row);
        if (row.status == ATTN_ROW_OK)
            tot->ok++;
        else if (row.status == ATTN_ROW_SKIPPED)
            tot->skipped++;
        else
            tot->failed++;
        attn_progress_step(&bar, cells[i].weight);
        if (budget) { /* under the row lock: an interrupt saves the plan's state */
            attn_interrupt_lock(in);
            matrix_budget_cell_done(budget, i);
            attn_interrupt_unlock(in);
        }
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
        attn_perf_preset_variants((attn_perf_preset)o->preset, o->variants, MATRIX_MAX_VARIANTS);
}

/* What a peer row needs to be written like any other. */
typedef struct peer_emit_ctx {
    attn_interrupt *in;
    attn_results_file *rf;
    const char *path;
    matrix_totals *tot;
    matrix_sidecar *sidecar;
} peer_emit_ctx;

static int emit_peer_row(void *ctx, const attn_result_row *row)
{
    peer_emit_ctx *pe = ctx;
    if (emit_row(pe->in, pe->rf, row, pe->path) != 0)
        return -1;
    matrix_print_row(row);
    if (row->roof_exceeded)
        matrix_warn_roof(row);
    if (row->status == ATTN_ROW_OK)
        pe->tot->ok++;
    else if (row->status == ATTN_ROW_SKIPPED)
        pe->tot->skipped++;
    else
        pe->tot->peer_findings++;
    return 0;
}

static void peer_started(void *ctx, const char *peer, const char *version)
{
    peer_emit_ctx *pe = ctx;
    attn_interrupt_lock(pe->in);
    matrix_sidecar_peer_started(pe->sidecar, peer, version);
    attn_interrupt_unlock(pe->in);
}

/* Every peer on every (shape, threads) cell of the preset, after the
 * variants (each peer cell is paired with the fastest variant row). */
static int run_peers(const matrix_opts *o, attn_results_file *rf, const attn_peak *pk, int all,
                     matrix_roofs *roofs, int64_t deadline_ns, peer_emit_ctx *pe)
{
    int n = matrix_case_list(o, all, NULL, 0);
    attn_perf_case *cases = malloc(sizeof *cases * (size_t)(n + 1));
    if (!cases)
        return -1;
    matrix_case_list(o, all, cases, n);
    /* Peer rows are appended to rf as they are written, so the pairing
     * must only see variant rows: best_variant() checks the kind. */
    const matrix_peer_sink sink = {emit_peer_row, peer_started, pe};
    int rc = matrix_run_peers(o, &o->peers, cases, n, rf, pk, all, roofs, deadline_ns, &sink);
    free(cases);
    return rc;
}

static int matrix_main(matrix_opts *o, attn_interrupt *in)
{
    const int64_t t_start = attn_now_ns(); /* a budget counts the peaks and the calibration */
    attn_machine m;
    attn_machine_read(&m);
    o->llc_bytes = m.l3_bytes;
    const char *run_name = matrix_run_name(o);
    if (!o->out) {
        snprintf(o->default_out, sizeof o->default_out, "results/%s-%s.csv", m.slug, run_name);
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
    }
    /* The sidecar before this run: a resume keeps its peers' versions. */
    size_t old_len = 0;
    char *old_meta = o->resume ? attn_read_text(meta, &old_len) : NULL;
    matrix_sidecar sidecar = {
        .path = meta, .preset = run_name, .pk = &pk, .rf = &rf, .old_meta = old_meta};
    if (rc == EXIT_OK && !reused_meta && matrix_sidecar_write(&sidecar, err, sizeof err) != 0) {
        fprintf(stderr, "matrix: %s\n", err);
        rc = EXIT_USAGE;
    }
    matrix_budget budget = {0};
    const int budgeted = o->budget_s > 0;
    if (rc == EXIT_OK && budgeted &&
        matrix_budget_plan(&budget, o, cells, n, &pk, m.cores, t_start) != 0)
        rc = EXIT_FAILED;
    if (rc == EXIT_OK) {
        printf("matrix: %s%s, %d cells to run (%d already in %s); each: at least %ld "
               "repetitions and %.3g s, at most %.3g s\n",
               o->n_shapes ? "--shape" : "preset ", o->n_shapes ? "" : run_name, n, n_done, o->out,
               o->repetitions, o->min_time, o->max_time);
        fflush(stdout);
        int64_t t0 = attn_now_ns();
        matrix_totals tot = {0};
        /* Interrupted, the sidecar is written from the rows so far and
         * FILE.plan keeps the time spent, for --resume. */
        attn_interrupt_lock(in);
        sidecar.budget = budgeted ? &budget : NULL;
        attn_interrupt_unlock(in);
        attn_interrupt_before_exit(in, matrix_sidecar_on_interrupt, &sidecar);
        matrix_roofs roofs;
        matrix_roofs_init(&roofs, &pk,
                          o->bw_bytes ? o->bw_bytes : attn_peak_default_opts().bw_array_bytes,
                          o->pages, m.cores);
        matrix_roofs *paired = o->roof_paired ? &roofs : NULL;
        if (run_cells(o, cells, n, &pk, m.cores, paired, in, &rf, &tot,
                      budgeted ? &budget : NULL) != 0)
            rc = EXIT_FAILED;
        if (budgeted) {
            attn_interrupt_lock(in);
            sidecar.budget = NULL; /* the peers' time is not the plan's */
            attn_interrupt_unlock(in);
            matrix_budget_save(&budget);
        }
        if (rc == EXIT_OK && o->peers.n > 0) {
            peer_emit_ctx pe = {in, &rf, o->out, &tot, &sidecar};
            attn_interrupt_lock(in);
            sidecar.peers_ran = 1;
            attn_interrupt_unlock(in);
            if (run_peers(o, &rf, &pk, m.cores, paired, budgeted ? budget.peers_deadline_ns : 0,
                          &pe) != 0)
                rc = EXIT_FAILED;
        }
        attn_interrupt_before_exit(in, NULL, NULL);
        matrix_roofs_free(&roofs);
        printf("matrix: %d rows (%d ok, %d skipped, %d failed",
               tot.ok + tot.skipped + tot.failed + tot.peer_findings, tot.ok, tot.skipped,
               tot.failed);
        if (tot.peer_findings)
            printf(", %d peer rows failed: findings about the peer, see their reason",
                   tot.peer_findings);
        printf(") written to %s in %.1f s; metadata in %s\n", o->out,
               (double)(attn_now_ns() - t0) * 1e-9, meta);
        /* The sidecar lists every row of the file above its roof. */
        if (matrix_sidecar_write(&sidecar, err, sizeof err) != 0) {
            fprintf(stderr, "matrix: %s\n", err);
            rc = EXIT_FAILED;
        }
        int exceeded = 0;
        for (int i = 0; i < rf.n_rows; i++)
            exceeded += rf.rows[i].roof_exceeded;
        if (exceeded)
            fprintf(stderr,
                    "matrix: warning: %d row(s) of %s above 100%% of their roof: the peak "
                    "under-measures this CPU (listed in %s)\n",
                    exceeded, o->out, meta);
        if (o->preset == PERF_TARGETS && !o->n_shapes) {
            attn_perf_targets_report(stdout, rf.rows, rf.n_rows, m.cores, &pk, NULL);
            /* The memory target needs a process per probe (its figure is the
             * process's peak): run unless a --filter leaves out "rss". */
            const char *streaming[MATRIX_MAX_VARIANTS + 1];
            int n_streaming = 0;
            for (int i = 0; i < attn_variant_table_size && n_streaming < MATRIX_MAX_VARIANTS; i++)
                if (attn_variant_table[i]->family == ATTN_FAMILY_ONLINE)
                    streaming[n_streaming++] = attn_variant_table[i]->name;
            streaming[n_streaming] = NULL;
            if (!o->has_filter || regexec(&o->filter, "rss", 0, NULL, 0) == 0)
                attn_rss_targets_report(stdout, streaming, NULL);
        }
        if (tot.failed && rc == EXIT_OK)
            rc = EXIT_FAILED;
    }
    matrix_budget_free(&budget);
    free(old_meta);
    free(cells);
    attn_results_close(&rf);
    return rc;
}

int cmd_matrix(int argc, char **argv)
{
    matrix_opts o = {
        .preset = PERF_QUICK,
        .repetitions = -1,
        .min_time = -1,
        .max_time = -1,
        .roof_paired = 1,
        .peers = {.python = ATTN_PEER_PYTHON, .worker = ATTN_PEER_WORKER, .rounds = 5}};
    int rc = matrix_parse_args(argc, argv, &o);
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
    /* The full preset fits half an hour unless told otherwise: what a user
     * gives a new CPU, not the hours every cell at full repetitions takes. */
    if (o.budget_s == 0 && o.preset == PERF_FULL && o.n_shapes == 0)
        o.budget_s = 30 * 60;
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
