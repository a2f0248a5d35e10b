/* attnbench matrix: its command line. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "matrix.h"
#include "matrix_peers.h"
#include "shape_arg.h"

static void matrix_help(void)
{
    printf("usage: attnbench matrix [--preset NAME] [--shape SHAPE]... [--variant NAME]...\n"
           "                        [--threads N]... [--dtype LIST] [--out FILE.csv]\n"
           "                        [--resume | --overwrite]\n"
           "                        [--repetitions N] [--min-time S] [--max-time S]\n"
           "                        [--budget DUR] [--filter REGEX] [--peak FILE.json]\n"
           "                        [--bw-mib N] [--pages huge|base] [--roof paired|run]\n"
           "                        [--peers LIST] [--peer-python PATH] [--peer-worker PATH]\n"
           "                        [--peer-rounds N]\n"
           "       attnbench matrix --print-columns\n\n"
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
           "  --shape SHAPE      a shape of your own instead of the preset's (repeatable;\n"
           "                     the preset still gives the variants and the repetitions,\n"
           "                     --min-time and --max-time; no budget, no targets report), at\n"
           "                     all threads in f32 unless --threads and --dtype say otherwise,\n"
           "                     default --out results/<cpu slug>-shapes.csv:\n",
           attn_perf_preset_names());
    attn_shape_arg_help(21, 0);
    printf("  --variant NAME     only this variant (repeatable); default: the preset's\n"
           "  --threads N        thread count (repeatable); replaces the preset's\n"
           "  --dtype LIST       element types, comma-separated: f32, bf16, f16 (Q, K/V, O of\n"
           "                     that type), f16kv, bf16kv (f32 Q and O, a narrow K/V cache),\n"
           "                     all; every shape at each, replacing the preset's f32 and its\n"
           "                     own low-precision rows (default: the preset's)\n"
           "  --out FILE.csv     default results/<cpu slug>-<preset>.csv\n"
           "  --overwrite        empty an existing FILE.csv first (without it, or --resume,\n"
           "                     a file that holds rows is refused)\n"
           "  --resume           keep the rows already in FILE.csv (its header must match)\n"
           "                     and its meta.json's peaks; run only what is missing\n"
           "  --repetitions N    minimum timed repetitions (default per preset, 3 for quick)\n"
           "  --min-time S       minimum seconds of timed repetitions (default per preset)\n"
           "  --max-time S       stop repeating a cell after S seconds of timed runs (at\n"
           "                     least one run; default per preset, 1 for quick)\n"
           "  --budget DUR       fit the whole run in DUR (30m, 90s, 1.5h, 2h30m): a short\n"
           "                     calibration, then each cell's repetitions and max time\n"
           "                     shrunk, cells skipped (most expensive first) only when that\n"
           "                     is not enough; FILE.plan keeps the plan for --resume;\n"
           "                     with --peers, an equal share of DUR per variant and peer,\n"
           "                     the peers' after the variants' (a peer cell begun in its\n"
           "                     share stops its rounds at the share's end, one at least)\n"
           "                     (default: none; 30m for the full preset without --shape)\n"
           "  --filter REGEX     only cells whose case name matches (POSIX extended regex)\n"
           "  --peak FILE        take peaks from `attnbench peak --out FILE` (or a meta.json)\n"
           "                     instead of measuring them (~10 s)\n"
           "  --bw-mib N         MiB per bandwidth array when measuring (default %d)\n",
           ATTN_PEAK_DEFAULT_BW_MIB);
    cli_pages_help(21);
    printf(
        "                     (recorded with the peaks: --peak FILE and --resume refuse a\n"
        "                     file whose read roof was measured on other pages)\n"
        "  --roof paired|run  what a row's %% of its roof divides by: paired (default) its\n"
        "                     roof's own kernel timed once per round of the row's calls,\n"
        "                     at its thread count, 3 passes at least (the best of them: a\n"
        "                     neighbour can slow a pass, nothing speeds one up; on a shared\n"
        "                     machine the roofs move by tens of %% within minutes); run:\n"
        "                     the peaks measured at the start (or --peak FILE) for every row\n"
        "  --peers LIST       also time and check the frameworks on every cell: torch,\n"
        "                     onnxruntime, openvino (comma-separated) or all; each in a\n"
        "                     worker process of its own, in alternating rounds with the\n"
        "                     cell's fastest variant, one row per peer (docs/peers.md;\n"
        "                     scripts/setup_peers.sh makes their environment)\n"
        "  --peer-python PATH the peers' Python (default: this checkout's\n"
        "                     .venv-peers/bin/python3)\n"
        "  --peer-worker PATH the worker script (default: this checkout's\n"
        "                     scripts/peers/worker.py; the tests give a stand-in)\n"
        "  --peer-rounds N    alternating rounds per peer and cell, 1 to 100 (default 5)\n"
        "  --print-columns    print the CSV's columns and types and exit\n"
        "With --preset perf-targets, the performance targets are printed after the run with the\n"
        "achieved ratio and a check mark. Exit: 0, 1 when a row failed, 2 on bad usage\n"
        "or an unwritable/foreign --out, 130 when interrupted.\n");
}

int matrix_parse_args(int argc, char **argv, matrix_opts *o)
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
        } else if (cli_switch(argv, i, "--print-columns")) {
            attn_results_print_columns(stdout);
            return 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--preset", &value)) != 0) {
            if (r < 0)
                return -1;
            if ((o->preset = attn_perf_preset_parse(value)) < 0) {
                fprintf(stderr, "matrix: --preset '%s' must be one of %s\n", value,
                        attn_perf_preset_names());
                return -1;
            }
        } else if ((r = cli_flag_value(argc, argv, &i, "--shape", &value)) != 0) {
            if (r < 0 || attn_shape_arg_add("matrix", value, o->shapes, NULL, &o->n_shapes,
                                            MATRIX_MAX_SHAPES) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--variant", &value)) != 0) {
            if (r < 0)
                return -1;
            if (cli_add_variant("matrix", value, o->variants, &o->n_variants,
                                MATRIX_MAX_VARIANTS) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--threads", &value)) != 0) {
            if (r < 0 || cli_parse_long("matrix", "--threads", value, 1, 4096, &x) != 0)
                return -1;
            /* Each count once: a cell twice would be timed twice and its
             * plan file would not read back on --resume. */
            for (int k = 0; k < o->n_threads; k++)
                if (o->threads[k] == (int)x) {
                    fprintf(stderr, "matrix: --threads %ld is given twice\n", x);
                    return -1;
                }
            if (o->n_threads == MATRIX_MAX_THREAD_ARGS) {
                fprintf(stderr,
                        "matrix: --threads %ld is one more than the %d thread counts a run takes\n",
                        x, (int)MATRIX_MAX_THREAD_ARGS);
                return -1;
            }
            o->threads[o->n_threads++] = (int)x;
        } else if ((r = cli_flag_value(argc, argv, &i, "--dtype", &value)) != 0) {
            if (r < 0 || (o->n_dtypes = cli_parse_dtypes("matrix", value, o->dtypes)) < 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--out", &value)) != 0) {
            if (r < 0)
                return -1;
            if (strlen(value) > MATRIX_MAX_OUT_PATH) {
                fprintf(stderr, "matrix: --out '%.40s...' is longer than %d characters\n", value,
                        (int)MATRIX_MAX_OUT_PATH);
                return -1;
            }
            o->out = value;
        } else if ((r = cli_flag_value(argc, argv, &i, "--repetitions", &value)) != 0) {
            if (r < 0 || cli_parse_long("matrix", "--repetitions", value, 1, MATRIX_MAX_REPS,
                                        &o->repetitions))
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--min-time", &value)) != 0) {
            if (r < 0 || cli_parse_double("matrix", "--min-time", value, 0, 3600, &o->min_time))
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--max-time", &value)) != 0) {
            if (r < 0 || cli_parse_double("matrix", "--max-time", value, 0, 36000, &o->max_time))
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--budget", &value)) != 0) {
            char why[300];
            if (r < 0)
                return -1;
            if (matrix_plan_parse_budget("--budget", value, &o->budget_s, why, sizeof why) !=
                MATRIX_PLAN_OK) {
                fprintf(stderr, "matrix: %s\n", why);
                return -1;
            }
        } else if ((r = cli_flag_value(argc, argv, &i, "--filter", &value)) != 0) {
            if (r < 0 || cli_set_filter("matrix", value, &o->filter, &o->has_filter) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--peak", &value)) != 0) {
            if (r < 0)
                return -1;
            o->peak_file = value;
        } else if ((r = cli_flag_value(argc, argv, &i, "--peers", &value)) != 0) {
            if (r < 0 || matrix_peers_parse(value, &o->peers) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--peer-python", &value)) != 0) {
            if (r < 0)
                return -1;
            o->peers.python = value;
        } else if ((r = cli_flag_value(argc, argv, &i, "--peer-worker", &value)) != 0) {
            if (r < 0)
                return -1;
            o->peers.worker = value;
        } else if ((r = cli_flag_value(argc, argv, &i, "--peer-rounds", &value)) != 0) {
            if (r < 0 || cli_parse_long("matrix", "--peer-rounds", value, 1, 100, &x) != 0)
                return -1;
            o->peers.rounds = (int)x;
        } else if ((r = cli_flag_value(argc, argv, &i, "--roof", &value)) != 0) {
            if (r < 0)
                return -1;
            if (strcmp(value, "paired") != 0 && strcmp(value, "run") != 0) {
                fprintf(stderr, "matrix: --roof '%s' must be paired or run\n", value);
                return -1;
            }
            o->roof_paired = strcmp(value, "paired") == 0;
        } else if ((r = cli_flag_value(argc, argv, &i, "--bw-mib", &value)) != 0) {
            if (r < 0 || cli_parse_long("matrix", "--bw-mib", value, 1, 1 << 20, &x) != 0)
                return -1;
            o->bw_bytes = (size_t)x << 20;
        } else if ((r = cli_flag_value(argc, argv, &i, "--pages", &value)) != 0) {
            if (r < 0 || cli_parse_pages("matrix", value, &o->pages) != 0)
                return -1;
        } else {
            cli_unknown("matrix", argv[i]);
            return -1;
        }
    }
    return 0;
}
