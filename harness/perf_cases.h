/* Performance cases: realistic model shapes for bench and matrix, in named
 * presets. Separate from the correctness cases of cases.h (small, odd,
 * adversarial): a different job. Data is always N(0, 1) (DATA_NORMAL). */
#ifndef ATTN_PERF_CASES_H
#define ATTN_PERF_CASES_H

#include "attn.h"
#include "variant.h"

typedef enum attn_perf_preset {
    PERF_QUICK,   /* minutes: n 128..2048, d 64/128, heads 8, causal on/off, one decode row */
    PERF_FULL,    /* hours: n 128..16384, d 64/80/128, heads 1/8/32, GQA, MQA, decode */
    PERF_DECODE,  /* n_q = 1 (and 4) against KV caches up to 32768 */
    PERF_SCALING, /* every thread count on a few shapes */
    PERF_TARGETS, /* the performance targets' rows */
    PERF_TEST,    /* seconds: tiny shapes for ctest */
    PERF_PRESET_COUNT
} attn_perf_preset;

typedef struct attn_perf_case {
    attn_shape shape;
    int threads; /* resolved: 1 .. all */
} attn_perf_case;

typedef struct attn_perf_preset_info {
    const char *name;
    const char *summary;
    /* Which variants of the table run when no --variant is given (NULL:
     * every one), decided from the descriptor, never from a name. */
    int (*includes)(const attn_variant *v);
    int repetitions; /* default minimum timed repetitions */
    double min_time; /* default minimum seconds of timed repetitions */
    /* Default cap: a cell stops repeating once its timed runs reach this
     * many seconds (after at least one), minimums notwithstanding. */
    double max_time;
} attn_perf_preset_info;

/* The preset's default variants in table order, at most cap; returns how
 * many were written. */
int attn_perf_preset_variants(attn_perf_preset p, const attn_variant **out, int cap);

/* -1 when unknown. */
int attn_perf_preset_parse(const char *name);
const attn_perf_preset_info *attn_perf_preset_get(attn_perf_preset p);
/* "quick|full|decode|scaling|perf-targets|test" */
const char *attn_perf_preset_names(void);

/* Writes up to `cap` cases into `out` and returns how many the preset has
 * (cap = 0 counts). `all` is the machine's thread count ("all threads").
 * Each shape appears once per thread count of its row of the preset; when
 * `threads` (n_threads > 0) is given, those thread counts replace the
 * preset's for every shape. */
int attn_perf_case_list(attn_perf_preset p, int all, const int *threads, int n_threads,
                        attn_perf_case *out, int cap);

/* Work and traffic of one call, as the CSV defines them:
 * flops = 2 (d_k + d_v) sum_rows n_i * heads_q * batch (n_i: keys row i
 * sees, so causal counts only what is computed); bytes = Q, K, V and O
 * each moved once. */
double attn_perf_flops(const attn_shape *s);
double attn_perf_bytes(const attn_shape *s);
/* 1 when the shape is memory-bound (n_q <= 16: decode and small chunks)
 * and judged against bandwidth, 0 when against FMA peak. */
int attn_perf_bandwidth_bound(const attn_shape *s);

#endif
