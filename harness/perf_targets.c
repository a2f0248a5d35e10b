#include "perf_targets.h"

#include "cases.h"
#include "cpu_features.h"
#include "peak.h"
#include "perf_cases.h"
#include "variant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The targets' figures, each named once; README's tables under
 * "Performance" state the same. */
static const double prefill_pct_d128 = 85, prefill_pct_d64 = 80; /* % of the FMA roof */
static const double causal_speedup = 1.9;                        /* non-causal time / causal time */
static const double peaked_speed = 0.9;    /* usual-scale time / peaked (scale 2) time */
static const double threads_speedup = 1.9; /* 1-thread time / 2-thread time */
static const double decode_pct = 90;       /* % of the read roof */
static const double peer_prefill = 1.2, peer_decode = 3.0; /* best peer's time / ours */
static const double low_decode_speedup = 1.8, low_decode_pct = 90, low_prefill_speedup = 1.0;

/* n of the prefill roof, causal and thread targets; the smallest n of the
 * peer targets (below it a call is a few hundred microseconds, where a
 * Python peer's own overhead decides). */
enum { TARGET_N = 4096, PEER_MIN_N = 512, MAX_PREFILL_SHAPES = 64 };

static const int32_t decode_kv[] = {4096, 8192, 16384, 32768};
static const int32_t decode_heads_kv[] = {8, 32}; /* GQA 32/8 and MHA 32/32 */
enum { N_DECODE_KV = sizeof decode_kv / sizeof decode_kv[0], N_DECODE_HEADS = 2 };

static const attn_types F32 = {ATTN_F32, ATTN_F32, ATTN_F32};
/* The low-precision targets' types (and the bf16 tensor paths'). */
static const attn_types F16KV = {ATTN_F32, ATTN_F16, ATTN_F32};
static const attn_types BF16KV = {ATTN_F32, ATTN_BF16, ATTN_F32};
static const attn_types BF16 = {ATTN_BF16, ATTN_BF16, ATTN_BF16};

/* The fused variants: the table's online-softmax family. */
static int is_fused(const char *variant)
{
    const attn_variant *v = attn_find_variant(variant);
    return v && v->family == ATTN_FAMILY_ONLINE;
}

static int same_types(const attn_types *a, const attn_types *b)
{
    return a->q == b->q && a->kv == b->kv && a->o == b->o;
}

static attn_shape mha(int32_t n, int32_t d, int32_t causal)
{
    return (attn_shape){1, 8, 8, n, n, d, d, causal, 0.0f};
}

static attn_shape decode_shape(int32_t heads_kv, int32_t n_kv)
{
    return (attn_shape){1, 32, heads_kv, 1, n_kv, 128, 128, 0, 0.0f};
}

/* The usable variant row of `variant` (NULL: the fastest fused one) on
 * shape s in `types` at `threads`; NULL when there is none. */
static const attn_result_row *find_typed(const attn_result_row *rows, int n, const char *variant,
                                         const attn_shape *s, const attn_types *types, int threads)
{
    const attn_result_row *best = NULL;
    for (int i = 0; i < n; i++) {
        const attn_result_row *r = &rows[i];
        if (r->status != ATTN_ROW_OK || r->kind != ATTN_ROW_VARIANT ||
            !isfinite(r->time_ns_median) || r->threads != threads ||
            !same_types(&r->types, types) || !attn_perf_same_cell(&r->shape, s))
            continue;
        if (variant ? strcmp(r->variant, variant) != 0 : !is_fused(r->variant))
            continue;
        if (!best || r->time_ns_median < best->time_ns_median)
            best = r;
    }
    return best;
}

/* The f32 row (every target but the low-precision ones is about f32). */
static const attn_result_row *find(const attn_result_row *rows, int n, const char *variant,
                                   const attn_shape *s, int threads)
{
    return find_typed(rows, n, variant, s, &F32, threads);
}

/* "n=4096 h8 d128 causal" (prefill) or "1x32768 Hq32/Hkv8 d128" (decode). */
static void shape_label(const attn_shape *s, char *buf, size_t cap)
{
    const char *causal = s->causal ? " causal" : "";
    if (attn_perf_bandwidth_bound(s))
        snprintf(buf, cap, "%dx%d Hq%d/Hkv%d d%d%s", s->n_q, s->n_kv, s->heads_q, s->heads_kv,
                 s->d_k, causal);
    else
        snprintf(buf, cap, "n=%d h%d d%d%s", s->n_q, s->heads_q, s->d_k, causal);
}

static const char *thread_word(int threads)
{
    return threads == 1 ? "thread" : "threads";
}

typedef struct tally {
    FILE *f;
    int met, evaluated, targets;
    /* Some row of this run beat the FMA roof / the read roof: a ratio to
     * that roof proves nothing, so no target judged by it gets a check. */
    int fma_roof_exceeded, read_roof_exceeded;
} tally;

static void verdict(tally *t, int ok, int have, const char *what, const char *achieved,
                    const char *target)
{
    const char *mark = !have ? "-" : ok ? "\u2713" : "\u2717";
    fprintf(t->f, "  %s %-54s %-46s %s\n", mark, what, have ? achieved : "not measured", target);
    t->targets++;
    if (have) {
        t->evaluated++;
        t->met += ok;
    }
}

/* A missed target whose figure, as printed, would read as meeting it
 * (1.197x as "1.20x" against ">= 1.2x", 89.96 % as "90.0%"): the number
 * at the front of `achieved` is printed again with as many more decimals
 * as it takes to read below `want` (up to 6), the rest of the text kept. */
static void unround_miss(char *achieved, size_t cap, double value, double want)
{
    char *end;
    if (!isfinite(value) || value >= want)
        return;
    const double shown = strtod(achieved, &end);
    if (end == achieved || shown < want)
        return;
    const char *dot = memchr(achieved, '.', (size_t)(end - achieved));
    int decimals = dot ? (int)(end - dot - 1) : 0;
    char number[48];
    do
        snprintf(number, sizeof number, "%.*f", ++decimals, value);
    while (decimals < 6 && strtod(number, NULL) >= want);
    const size_t digits = strlen(number), rest = strlen(end);
    if (digits + rest + 1 > cap)
        return;
    memmove(achieved + digits, end, rest + 1);
    memcpy(achieved, number, digits);
}

/* The verdict on a figure that must reach `want`; the figure's text leads
 * `achieved` and never reads as met when it is not. */
static void verdict_at_least(tally *t, double value, double want, int have, const char *what,
                             char *achieved, size_t cap, const char *target)
{
    const int ok = have && isfinite(value) && value >= want;
    if (have && !ok)
        unround_miss(achieved, cap, value, want);
    verdict(t, ok, have, what, achieved, target);
}

/* A target judged against a roof that a row of this run exceeded. */
static void refused(tally *t, const char *what, const char *achieved, const char *roof)
{
    fprintf(t->f,
            "  ! %-54s %-46s no verdict: a row of this run exceeded the %s, so it "
            "under-measures this CPU\n",
            what, achieved, roof);
    t->targets++;
    t->evaluated++;
}

/* The fused row of s in `types` at `threads` nearest its roof (the
 * highest pct_peak; the faster of equals); NULL when none has a figure.
 * Each row's figure is against the roof measured beside it, and that roof
 * moves by half within minutes on a shared machine (README, "Performance
 * targets"): rows timed minutes apart compare by their fractions of their
 * own roofs, not by their times. */
static const attn_result_row *nearest_roof(const attn_result_row *rows, int n, const attn_shape *s,
                                           const attn_types *types, int threads)
{
    const attn_result_row *best = NULL;
    for (int i = 0; i < attn_variant_table_size; i++) {
        const char *name = attn_variant_table[i]->name;
        if (!is_fused(name))
            continue;
        const attn_result_row *r = find_typed(rows, n, name, s, types, threads);
        if (!r || !isfinite(r->pct_peak))
            continue;
        if (!best || r->pct_peak > best->pct_peak ||
            (r->pct_peak == best->pct_peak && r->time_ns_median < best->time_ns_median))
            best = r;
    }
    return best;
}

/* The fused row of s in `types` at `threads` nearest the roof of its limit
 * at that thread count (its pct_peak): the FMA roof for prefill and for
 * decode whose flops bind, else the read roof, bytes at their types'
 * sizes. When another fused row was faster in time, the line names it and
 * its figure too. */
static void roof_target(tally *t, const attn_result_row *rows, int n, const char *what,
                        const attn_shape *s, const attn_types *types, int threads, double want)
{
    const attn_result_row *r = nearest_roof(rows, n, s, types, threads);
    const attn_result_row *fastest = find_typed(rows, n, NULL, s, types, threads);
    /* The roof the row was judged against (the roofline's side: a decode
     * cell whose flops bind is held to the FMA roof), else the shape's. */
    const int bw = r ? strcmp(r->limit, "bandwidth") == 0 : attn_perf_bandwidth_bound(s);
    const char *roof = bw ? "read roof" : "FMA roof";
    char achieved[160] = "", target[64], also[80] = "";
    int have = r != NULL;
    if (have && fastest && fastest != r && isfinite(fastest->pct_peak))
        snprintf(also, sizeof also, "; faster in time: %s at %.1f%% of its roof", fastest->variant,
                 fastest->pct_peak);
    /* "paired": the roof was timed in the row's own rounds (roof_probe.h). */
    if (have)
        snprintf(achieved, sizeof achieved, "%.1f%% of the %d-thread %s (%s%s%s)", r->pct_peak,
                 threads, roof, r->variant, strcmp(r->roof_source, "paired") == 0 ? ", paired" : "",
                 also);
    snprintf(target, sizeof target, "target >= %.0f%% of the %s%s", want, roof,
             attn_types_all_f32(types) || !bw ? "" : ", bytes at their sizes");
    if (have && (bw ? t->read_roof_exceeded : t->fma_roof_exceeded))
        refused(t, what, achieved, roof);
    else
        verdict_at_least(t, have ? r->pct_peak : NAN, want, have, what, achieved, sizeof achieved,
                         target);
}

/* slow's time over fast's; NAN unless both are there. */
static double speedup(const attn_result_row *slow, const attn_result_row *fast)
{
    return slow && fast ? slow->time_ns_median / fast->time_ns_median : NAN;
}

/* The row's ratio to its twin timed in the same alternating rounds
 * (matrix_pair.c): twin's time / the row's when the row was paired with
 * exactly that twin, shape s in `types` at `threads`; NaN when not (a file
 * of an older format, or a cell timed alone), and then the two rows decide. */
static double paired_ratio(const attn_result_row *r, const attn_shape *s, const attn_types *types,
                           int threads)
{
    if (!r || r->paired_threads != threads || !isfinite(r->paired_time_ns_median) ||
        strcmp(r->paired_variant, r->variant) != 0)
        return NAN;
    char twin[sizeof r->paired_case];
    attn_perf_case_name(r->variant, s, types, twin, sizeof twin);
    return strcmp(twin, r->paired_case) == 0 ? r->paired_time_ns_median / r->time_ns_median : NAN;
}

/* The same, the twin of the row's own shape (1 thread, or f32). */
static double paired_speedup(const attn_result_row *r, const attn_types *types, int threads)
{
    return r ? paired_ratio(r, &r->shape, types, threads) : NAN;
}

/* A variant that ran this much slower in a pairing's rounds than in its
 * own row's (or this much faster) was caught by a slow stretch of the
 * machine there, or its row was: the line says so (the ratio stays the
 * one from those rounds, as both sides shared them). */
static const double pairing_drift = 1.15;

/* fast's speed-up over its own twin slow (the same variant at twin_shape
 * and twin_threads, in `types`): from fast's rounds with that twin when it
 * has them, else from the two rows timed apart; NaN when neither. achieved
 * gets the ratio and both times, "<slow_label>" and "<fast_label>" after
 * them. */
static double twin_speedup(const attn_result_row *slow, const attn_result_row *fast,
                           const attn_shape *twin_shape, const attn_types *types, int twin_threads,
                           const char *slow_label, const char *fast_label, char *achieved,
                           size_t cap)
{
    double ratio = paired_ratio(fast, twin_shape, types, twin_threads);
    const double drift =
        isfinite(ratio) && slow ? fast->paired_time_ns_median / slow->time_ns_median : NAN;
    if (isfinite(ratio) && (drift > pairing_drift || drift < 1.0 / pairing_drift))
        snprintf(achieved, cap,
                 "%.2fx (%s: %.4g ms %s, %.4g %s, paired; its twin (%s) took %.2fx its own "
                 "row's time in these rounds; apart %.2fx)",
                 ratio, fast->variant, fast->paired_time_ns_median * 1e-6, slow_label,
                 fast->time_ns_median * 1e-6, fast_label, slow_label, drift,
                 slow->time_ns_median / fast->time_ns_median);
    else if (isfinite(ratio))
        snprintf(achieved, cap, "%.2fx (%s: %.4g ms %s, %.4g %s, paired)", ratio, fast->variant,
                 fast->paired_time_ns_median * 1e-6, slow_label, fast->time_ns_median * 1e-6,
                 fast_label);
    else if (isfinite(ratio = speedup(slow, fast)))
        snprintf(achieved, cap, "%.2fx (%s: %.4g ms %s, %.4g %s, apart)", ratio, fast->variant,
                 slow->time_ns_median * 1e-6, slow_label, fast->time_ns_median * 1e-6, fast_label);
    return ratio;
}

/* Not a target: the BLAS's sgemm at the run's start against the start's
 * FMA roof at 1 and all threads (peak_sgemm.c), the fraction of the roof
 * a tuned GEMM library reaches on this machine, printed under the roof
 * targets it puts in proportion. Nothing when the peak has no sgemm. */
static void sgemm_context(FILE *f, const attn_peak *pk, int all)
{
    if (!pk)
        return;
    const int counts[2] = {1, all};
    char parts[2][80];
    int have = 0;
    for (int k = 0; k < (all > 1 ? 2 : 1); k++) {
        const double pct = attn_peak_sgemm_pct(pk, counts[k]);
        if (!isfinite(pct))
            continue;
        snprintf(parts[have], sizeof parts[0], "%.1f%%%s at %d %s", pct,
                 have ? "" : " of the run start's FMA roof", counts[k], thread_word(counts[k]));
        have++;
    }
    if (!have)
        return;
    fprintf(f, "  (not a target: the BLAS's own sgemm here, %s, %d^3 a thread, ran at %s%s%s)\n",
            pk->sgemm_library[0] ? pk->sgemm_library : "the BLAS", ATTN_PEAK_SGEMM_N, parts[0],
            have > 1 ? ", " : "", have > 1 ? parts[1] : "");
}

static void prefill_roof_targets(tally *t, const attn_result_row *rows, int n, int all,
                                 const attn_peak *pk)
{
    char what[96];
    fprintf(t->f,
            "prefill n=%d h8 against the FMA roof of the row's thread count, the fused "
            "variant nearest it:\n",
            TARGET_N);
    /* all threads, then 1 (once when they are the same) */
    const int thread_counts[2] = {all, 1};
    for (int k = 0; k < (all > 1 ? 2 : 1); k++)
        for (int32_t d = 128; d >= 64; d /= 2) {
            const attn_shape s = mha(TARGET_N, d, 0);
            const int threads = thread_counts[k];
            snprintf(what, sizeof what, "prefill n=%d h8 d%d, %d %s", TARGET_N, d, threads,
                     thread_word(threads));
            roof_target(t, rows, n, what, &s, &F32, threads,
                        d == 128 ? prefill_pct_d128 : prefill_pct_d64);
        }
    sgemm_context(t->f, pk, all);
}

/* One side of a variant's ratio against itself: its row at `shape` and
 * `threads`, named `label` beside its time. */
typedef struct twin_side {
    attn_shape shape;
    int threads;
    const char *label;
} twin_side;

/* `variant`'s speed-up from its row `slow` to its row `fast`, both in
 * `types` (twin_speedup: from fast's rounds with slow when it has them,
 * else apart), judged against `goal`; `what` names the line. */
static void twin_target(tally *t, const attn_result_row *rows, int n, const char *variant,
                        const attn_types *types, twin_side slow, twin_side fast, double goal,
                        const char *what, const char *target)
{
    char achieved[160] = "";
    const attn_result_row *s = find_typed(rows, n, variant, &slow.shape, types, slow.threads);
    const attn_result_row *f = find_typed(rows, n, variant, &fast.shape, types, fast.threads);
    const double ratio = twin_speedup(s, f, &slow.shape, types, slow.threads, slow.label,
                                      fast.label, achieved, sizeof achieved);
    verdict_at_least(t, ratio, goal, isfinite(ratio), what, achieved, sizeof achieved, target);
}

/* ", bf16" after a target's name when the variant is judged in bf16 (it
 * takes no f32), "" in f32. */
static const char *types_suffix(const attn_types *types)
{
    return attn_types_all_f32(types) ? "" : ", bf16";
}

/* Each fused variant's causal row against its own non-causal twin, in the
 * variant's own types (f32, or bf16 for one that takes no f32): the twin
 * timed in the causal row's rounds (perf-targets pairs them), or, from a
 * file without that pair, the two rows timed apart. Every variant, not the
 * fastest: a causal call sees about half the keys, and a variant that
 * skips the hidden blocks but crawls through its diagonal ones (xsmm's,
 * once, in plain C) only shows here. */
static void causal_targets(tally *t, const attn_result_row *rows, int n, int all)
{
    char what[96], target[64];
    fprintf(t->f,
            "causal against non-causal, each fused variant in its own types (n=%d h8, %d %s):\n",
            TARGET_N, all, thread_word(all));
    snprintf(target, sizeof target, "target >= %.1fx", causal_speedup);
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!is_fused(v->name))
            continue;
        const attn_types types = attn_variant_default_types(v);
        for (int32_t d = 128; d >= 64; d /= 2) {
            const twin_side open = {mha(TARGET_N, d, 0), all, "non-causal"},
                            masked = {mha(TARGET_N, d, 1), all, "causal"};
            snprintf(what, sizeof what, "%s causal vs non-causal, n=%d h8 d%d%s", v->name, TARGET_N,
                     d, types_suffix(&types));
            twin_target(t, rows, n, v->name, &types, open, masked, causal_speedup, what, target);
        }
    }
}

/* Each fused variant's peaked-attention row (scale 2: most weights of a
 * row far enough below its max to be subnormal) against its twin at the
 * usual scale, in its own types: the same work, so the same time, unless
 * the variant takes a microcode assist on every subnormal weight (Intel
 * cores: 65-86x, before the exps gave +0 there). */
static void peaked_targets(tally *t, const attn_result_row *rows, int n, int all)
{
    char what[96], target[64];
    fprintf(t->f,
            "peaked attention (scale %g) against the usual scale, each fused variant in its own "
            "types (n=%d h8 d128, %d %s):\n",
            (double)PEAKED_SCALE, (int)PEAKED_N, all, thread_word(all));
    snprintf(target, sizeof target, "target >= %.1fx", peaked_speed);
    twin_side usual = {mha(PEAKED_N, 128, 0), all, "usual"}, peaked = usual;
    peaked.shape.scale = PEAKED_SCALE;
    peaked.label = "peaked";
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!is_fused(v->name))
            continue;
        const attn_types types = attn_variant_default_types(v);
        snprintf(what, sizeof what, "%s peaked vs usual scale, n=%d h8 d128%s", v->name,
                 (int)PEAKED_N, types_suffix(&types));
        twin_target(t, rows, n, v->name, &types, usual, peaked, peaked_speed, what, target);
    }
}

/* Each fused variant of the table against itself: a second thread must
 * nearly double it. The preset has rows at 2 threads only on a machine with
 * 2 or more; elsewhere these are not measured. */
static void thread_targets(tally *t, const attn_result_row *rows, int n)
{
    char what[96], target[64];
    fprintf(t->f,
            "2 threads against 1, each fused variant in its own types (n=%d h8, non-causal):\n",
            TARGET_N);
    snprintf(target, sizeof target, "target >= %.1fx", threads_speedup);
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!is_fused(v->name))
            continue;
        /* f32, or bf16 for a variant that takes no f32 (avx512_bf16). */
        const attn_types types = attn_variant_default_types(v);
        for (int32_t d = 128; d >= 64; d /= 2) {
            const twin_side one = {mha(TARGET_N, d, 0), 1, "at 1"}, two = {one.shape, 2, "at 2"};
            snprintf(what, sizeof what, "%s 2 threads vs 1, n=%d h8 d%d%s", v->name, TARGET_N, d,
                     types_suffix(&types));
            twin_target(t, rows, n, v->name, &types, one, two, threads_speedup, what, target);
        }
    }
}

/* A variant's speed-up over the best f32 one that a tensor path must
 * reach: vdpbf16ps does twice the FMA's multiply-adds per instruction, AMX
 * tiles many times that (the bf16 tensor paths' targets). 0: none. */
static double tensor_speedup(attn_roof roof)
{
    return roof == ATTN_ROOF_BF16_AVX512 ? 1.8 : roof == ATTN_ROOF_BF16_AMX ? 3.0 : 0.0;
}

/* Each variant on a bf16 tensor path, bf16 Q/K/V/O, against the fastest
 * fused variant in f32 on the same shape and threads (two rows, timed
 * apart), with its % of its own roof beside. */
static void tensor_targets(tally *t, const attn_result_row *rows, int n, int all)
{
    int header = 0;
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        const double want = tensor_speedup(v->roof);
        if (!(want > 0))
            continue;
        if (!header++)
            fprintf(t->f,
                    "bf16 tensor paths, bf16 Q/K/V/O against the fastest fused variant in "
                    "f32 (n=%d h8, non-causal):\n",
                    TARGET_N);
        for (int32_t d = 128; d >= 64; d /= 2) {
            const attn_shape s = mha(TARGET_N, d, 0);
            const attn_result_row *mine = find_typed(rows, n, v->name, &s, &BF16, all);
            const attn_result_row *best = find(rows, n, NULL, &s, all);
            const double ratio = speedup(best, mine);
            char what[96], achieved[128] = "", target[128];
            snprintf(what, sizeof what, "%s vs f32, n=%d h8 d%d, %d %s", v->name, TARGET_N, d, all,
                     thread_word(all));
            if (isfinite(ratio))
                snprintf(achieved, sizeof achieved,
                         "%.2fx (%s: %.4g vs %.4g ms, apart; %.0f%% of "
                         "its roof)",
                         ratio, best->variant, mine->time_ns_median * 1e-6,
                         best->time_ns_median * 1e-6, mine->pct_peak);
            /* The most its own roof allows: the roof's GFLOP/s over the
             * best f32 row's (vdpbf16ps runs at half the FMA rate on some
             * CPUs, where 1.8x is out of reach whatever the kernel). */
            const double ceiling = mine && best && best->gflops > 0 && mine->peak_gflops > 0
                                       ? mine->peak_gflops / best->gflops
                                       : INFINITY;
            if (ceiling < want)
                snprintf(target, sizeof target,
                         "target >= %.1fx the best f32 variant: above its roof here (at most "
                         "%.2fx)",
                         want, ceiling);
            else
                snprintf(target, sizeof target, "target >= %.1fx the best f32 variant", want);
            verdict_at_least(t, ratio, want, isfinite(ratio), what, achieved, sizeof achieved,
                             target);
        }
    }
}

/* A tile path (AMX) against PyTorch's own bf16 attention: >= 2x. */
static const double tiles_vs_torch = 2.0;

/* Each variant on AMX tiles, bf16 Q/K/V/O, against the torch peer's bf16
 * row on the same shape and threads: the ratio from the rounds in which
 * the peer alternated with that very variant, else the two rows' medians
 * (apart, said so). */
static void tensor_peer_targets(tally *t, const attn_result_row *rows, int n, int all)
{
    int header = 0;
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (v->roof != ATTN_ROOF_BF16_AMX)
            continue;
        if (!header++)
            fprintf(t->f,
                    "AMX tiles against PyTorch's bf16 scaled_dot_product_attention "
                    "(matrix --peers), bf16 Q/K/V/O (n=%d h8, non-causal):\n",
                    TARGET_N);
        for (int32_t d = 128; d >= 64; d /= 2) {
            const attn_shape s = mha(TARGET_N, d, 0);
            const attn_result_row *mine = find_typed(rows, n, v->name, &s, &BF16, all),
                                  *torch = NULL;
            for (int r = 0; r < n; r++)
                if (rows[r].kind == ATTN_ROW_PEER && strcmp(rows[r].variant, "torch") == 0 &&
                    rows[r].status == ATTN_ROW_OK && rows[r].threads == all &&
                    same_types(&rows[r].types, &BF16) && attn_perf_same_cell(&rows[r].shape, &s))
                    torch = &rows[r];
            const int paired = torch && strcmp(torch->paired_variant, v->name) == 0 &&
                               isfinite(torch->paired_time_ns_median) &&
                               torch->paired_time_ns_median > 0;
            const double ours = paired ? torch->paired_time_ns_median
                                : mine ? mine->time_ns_median
                                       : NAN;
            const double ratio = torch ? torch->time_ns_median / ours : NAN;
            char what[96], achieved[128] = "", target[64];
            snprintf(what, sizeof what, "%s vs torch bf16, n=%d h8 d%d, %d %s", v->name, TARGET_N,
                     d, all, thread_word(all));
            if (isfinite(ratio))
                snprintf(achieved, sizeof achieved, "%.2fx (%.4g vs %.4g ms, %s)", ratio,
                         ours * 1e-6, torch->time_ns_median * 1e-6,
                         paired ? "alternating rounds" : "apart");
            snprintf(target, sizeof target, "target >= %.1fx", tiles_vs_torch);
            verdict_at_least(t, ratio, tiles_vs_torch, isfinite(ratio), what, achieved,
                             sizeof achieved, target);
        }
    }
}

static int by_n_d_causal(const void *pa, const void *pb)
{
    const attn_shape *a = pa, *b = pb;
    if (a->n_q != b->n_q)
        return a->n_q < b->n_q ? -1 : 1;
    if (a->d_k != b->d_k)
        return a->d_k < b->d_k ? -1 : 1;
    if (a->causal != b->causal)
        return a->causal < b->causal ? -1 : 1;
    return a->heads_q < b->heads_q ? -1 : a->heads_q > b->heads_q;
}

/* The shapes of the blas and peer prefill targets: every f32 prefill shape
 * perf-targets and quick time at all threads, each once, by n, d and
 * causal. Read from the presets, so a shape added to quick is judged too. */
static int prefill_shapes(int all, attn_shape out[MAX_PREFILL_SHAPES])
{
    static const attn_perf_preset presets[] = {PERF_TARGETS, PERF_QUICK};
    int n = 0;
    for (int p = 0; p < 2; p++) {
        const int count = attn_perf_case_list(presets[p], all, NULL, NULL, 0);
        attn_perf_case *cases = malloc(sizeof *cases * (size_t)(count > 0 ? count : 1));
        if (!cases)
            continue;
        attn_perf_case_list(presets[p], all, NULL, cases, count);
        for (int i = 0; i < count && n < MAX_PREFILL_SHAPES; i++) {
            const attn_perf_case *c = &cases[i];
            /* (the peaked-attention cell is its own target's, not a shape) */
            if (c->threads != all || !attn_types_all_f32(&c->types) ||
                attn_perf_bandwidth_bound(&c->shape) || c->shape.scale != 0.0f)
                continue;
            int seen = 0;
            for (int j = 0; j < n; j++)
                seen |= attn_perf_same_cell(&out[j], &c->shape);
            if (!seen)
                out[n++] = c->shape;
        }
        free(cases);
    }
    qsort(out, (size_t)n, sizeof *out, by_n_d_causal);
    return n;
}

/* "Faster than blas": strictly, a tie is a miss. */
static void blas_targets(tally *t, const attn_result_row *rows, int n, int all,
                         const attn_shape *shapes, int n_shapes)
{
    char what[96], label[64], achieved[96] = "";
    fprintf(t->f,
            "against blas, the fastest fused variant (every prefill shape of perf-targets and "
            "quick, %d %s):\n",
            all, thread_word(all));
    for (int i = 0; i < n_shapes; i++) {
        const attn_result_row *fast = find(rows, n, NULL, &shapes[i], all);
        const attn_result_row *blas = find(rows, n, "blas", &shapes[i], all);
        double ratio = speedup(blas, fast);
        if (isfinite(ratio))
            snprintf(achieved, sizeof achieved, "%.2fx (%s vs blas)", ratio, fast->variant);
        shape_label(&shapes[i], label, sizeof label);
        snprintf(what, sizeof what, "vs blas %s, %d %s", label, all, thread_word(all));
        verdict(t, ratio > 1.0, isfinite(ratio), what, achieved, "target > 1.0x (faster)");
    }
}

static void decode_targets(tally *t, const attn_result_row *rows, int n, int all)
{
    char what[96], label[64];
    fprintf(t->f, "decode against the read roof, the fused variant nearest it:\n");
    for (int h = 0; h < N_DECODE_HEADS; h++)
        for (int k = 0; k < N_DECODE_KV; k++) {
            const attn_shape s = decode_shape(decode_heads_kv[h], decode_kv[k]);
            shape_label(&s, label, sizeof label);
            snprintf(what, sizeof what, "decode %s, %d %s", label, all, thread_word(all));
            roof_target(t, rows, n, what, &s, &F32, all, decode_pct);
        }
}

/* The narrower ISA family on a CPU that runs both: a fused variant built
 * for AVX2 and not AVX-512 (avx2) when the run's roof is AVX-512's. Its
 * rows' pct_peak is against that roof, the machine's, which it cannot
 * reach; the targets hold it to its own ISA's roof instead, and to the
 * same read roof. */
static int other_family(const attn_variant *v)
{
    return v->family == ATTN_FAMILY_ONLINE && (v->required_features & ATTN_CPU_AVX2) &&
           !(v->required_features & ATTN_CPU_AVX512F);
}

/* The start-of-run FMA roof of `isa` at `threads` in pk; NaN when none. */
static double fma_roof(const attn_peak *pk, attn_isa isa, int threads)
{
    const int at = pk ? attn_peak_index(pk, threads) : -1;
    return at >= 0 && pk->fma_gflops[isa][at] > 0 ? pk->fma_gflops[isa][at] : NAN;
}

/* The AVX2 roof over the AVX-512 one at `threads` in the peak of the
 * run's start: what a row's paired AVX-512 roof scales by to become its
 * AVX2 roof (both FMA ports move together when a neighbour takes the
 * core); NaN when either is missing. */
static double avx2_roof_ratio(const attn_peak *pk, int threads)
{
    return fma_roof(pk, ATTN_ISA_AVX2, threads) / fma_roof(pk, ATTN_ISA_AVX512, threads);
}

/* One row of the other family against its own roof: prefill against its
 * ISA's FMA roof, decode against the read roof (pct_peak as it is). A
 * prefill row's pct_peak is against the roof measured beside it, the
 * machine's widest: divided by `ratio` (AVX2 / AVX-512 at the run's start)
 * unless that roof was AVX2's already (nearer the start's AVX2 roof
 * `narrow` than its AVX-512 one `wide`: a run under an ATTN_CPU_MASK
 * without AVX-512, judged with a peak that has both). A figure over 100 %
 * says its roof under-measures this CPU: no verdict. */
static void other_family_target(tally *t, const attn_result_row *rows, int n, const char *variant,
                                const attn_shape *s, int threads, double ratio, double narrow,
                                double wide, double want)
{
    char what[96], label[64], achieved[160] = "", target[64];
    const int bw = attn_perf_bandwidth_bound(s);
    const attn_result_row *r = find(rows, n, variant, s, threads);
    const int own = !bw && r && isfinite(r->peak_gflops) && r->peak_gflops < sqrt(narrow * wide);
    const double pct = !r || !isfinite(r->pct_peak) ? NAN
                       : bw || own                  ? r->pct_peak
                                                    : r->pct_peak / ratio;
    const char *roof = bw ? "read roof" : "AVX2 FMA roof";
    shape_label(s, label, sizeof label);
    snprintf(what, sizeof what, "%s %s %s, %d %s", variant, bw ? "decode" : "prefill", label,
             threads, thread_word(threads));
    if (isfinite(pct))
        snprintf(achieved, sizeof achieved, "%.1f%% of the %d-thread %s%s", pct, threads, roof,
                 bw    ? ""
                 : own ? " (measured beside it)"
                       : " (its AVX-512 roof scaled)");
    snprintf(target, sizeof target, "target >= %.0f%% of the %s", want, roof);
    if (isfinite(pct) && pct > 100.0)
        refused(t, what, achieved, roof);
    else if (isfinite(pct) && (bw ? t->read_roof_exceeded : t->fma_roof_exceeded))
        refused(t, what, achieved, bw ? "read roof" : "FMA roof");
    else
        verdict_at_least(t, pct, want, isfinite(pct), what, achieved, sizeof achieved, target);
}

/* The roof and decode targets once more for the other ISA family's fused
 * variants, on a CPU that runs both (the "AVX2 and AVX-512
 * alike"): nothing when the run's peak has no AVX-512 and AVX2 roofs. */
static void other_family_targets(tally *t, const attn_result_row *rows, int n, int all,
                                 const attn_peak *pk)
{
    const double ratio_all = avx2_roof_ratio(pk, all), ratio_one = avx2_roof_ratio(pk, 1);
    if (!isfinite(ratio_all) || !isfinite(ratio_one))
        return;
    fprintf(t->f,
            "the other ISA family on this CPU, each against its own roofs (AVX2: the row's "
            "AVX-512 roof times the run start's AVX2 / AVX-512 ratio, %.2f at %d %s):\n",
            ratio_all, all, thread_word(all));
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!other_family(v))
            continue;
        const int thread_counts[2] = {all, 1};
        for (int k = 0; k < (all > 1 ? 2 : 1); k++)
            for (int32_t d = 128; d >= 64; d /= 2) {
                const attn_shape s = mha(TARGET_N, d, 0);
                const int threads = thread_counts[k];
                other_family_target(
                    t, rows, n, v->name, &s, threads, threads == all ? ratio_all : ratio_one,
                    fma_roof(pk, ATTN_ISA_AVX2, threads), fma_roof(pk, ATTN_ISA_AVX512, threads),
                    d == 128 ? prefill_pct_d128 : prefill_pct_d64);
            }
        for (int h = 0; h < N_DECODE_HEADS; h++)
            for (int k = 0; k < N_DECODE_KV; k++) {
                const attn_shape s = decode_shape(decode_heads_kv[h], decode_kv[k]);
                other_family_target(t, rows, n, v->name, &s, all, ratio_all, NAN, NAN, decode_pct);
            }
    }
}

/* The widest vector exp this CPU runs (peak's exp kinds, masks
 * included): what "the ISA's own vector exp" is here; NULL: none. */
static const char *widest_vector_exp(void)
{
    for (int e = ATTN_EXP_COUNT - 1; e > ATTN_EXP_LIBM; e--)
        if (attn_exp_available((attn_exp_kind)e, NULL, 0))
            return attn_exp_name((attn_exp_kind)e);
    return NULL;
}

/* xsmm's exp, from its descriptor: the kernel and the report share the
 * one decision (flash_xsmm.c), so this is true exactly when the kernel
 * calls the widest vector exp this CPU runs. */
static void exp_target(tally *t)
{
    fprintf(t->f, "xsmm's softmax exp on this CPU (its descriptor's exp_in_use):\n");
    const attn_variant *v = attn_find_variant("xsmm");
    const char *exp = v && v->exp_in_use ? v->exp_in_use() : NULL;
    const char *widest = widest_vector_exp();
    const int vector = exp && strcmp(exp, "expf") != 0;
    const int own = vector && widest && strcmp(exp, widest) == 0;
    char achieved[96] = "";
    if (exp && !vector)
        snprintf(achieved, sizeof achieved, "%s (glibc's scalar expf)", exp);
    else if (exp)
        snprintf(achieved, sizeof achieved,
                 own ? "%s (the CPU's widest vector exp)" : "%s (a vector exp; the CPU runs %s's)",
                 exp, widest ? widest : "?");
    verdict(t, own, exp != NULL, "xsmm exp", achieved,
            "target: the ISA's own vector exp, not glibc expf");
}

static const attn_types F16 = {ATTN_F16, ATTN_F16, ATTN_F16};

/* The fastest fused row in `types` whose variant has an f32 row of the
 * same cell too, against that f32 row: f32 time / low-precision time, both
 * times beside it. */
static void low_ratio_target(tally *t, const attn_result_row *rows, int n, const char *what,
                             const attn_types *types, const attn_shape *s, int threads, double want)
{
    const attn_result_row *low = NULL, *f32 = NULL;
    for (int i = 0; i < attn_variant_table_size; i++) {
        const char *name = attn_variant_table[i]->name;
        if (!is_fused(name))
            continue;
        const attn_result_row *l = find_typed(rows, n, name, s, types, threads);
        const attn_result_row *f = find(rows, n, name, s, threads);
        const int have_f32 = f || isfinite(paired_speedup(l, &F32, threads));
        if (l && have_f32 && (!low || l->time_ns_median < low->time_ns_median)) {
            low = l;
            f32 = f;
        }
    }
    char achieved[96] = "", target[64];
    /* The low row's own rounds with its f32 twin when it has them. */
    double ratio = paired_speedup(low, &F32, threads);
    if (isfinite(ratio))
        snprintf(achieved, sizeof achieved, "%.2fx (%s: %.4g vs %.4g ms in f32, paired)", ratio,
                 low->variant, low->time_ns_median * 1e-6, low->paired_time_ns_median * 1e-6);
    else if (low && isfinite(ratio = speedup(f32, low)))
        snprintf(achieved, sizeof achieved, "%.2fx (%s: %.4g vs %.4g ms in f32, apart)", ratio,
                 low->variant, low->time_ns_median * 1e-6, f32->time_ns_median * 1e-6);
    snprintf(target, sizeof target, "target >= %.1fx f32's speed", want);
    verdict_at_least(t, ratio, want, low != NULL, what, achieved, sizeof achieved, target);
}

/* Decode with a half-size KV cache (f16, bf16): >= 1.8x the same variant's
 * f32 speed and >= 90 % of the read roof; prefill with bf16/f16 inputs no
 * slower than f32. */
static void low_precision_targets(tally *t, const attn_result_row *rows, int n, int all)
{
    const attn_types *decode_types[] = {&F16KV, &BF16KV}, *prefill_types[] = {&BF16, &F16};
    const attn_shape dec = decode_shape(8, 32768), pre = mha(TARGET_N, 128, 0);
    char what[96];
    fprintf(t->f, "low precision, the fused variant fastest in the type against its own f32 row, "
                  "the roof lines the one nearest the roof (decode Hq32/Hkv8 d128, prefill h8):\n");
    for (int i = 0; i < 2; i++) {
        const char *name = attn_dtype_axis_name(decode_types[i]);
        snprintf(what, sizeof what, "decode %s 1x32768 vs f32, %d %s", name, all, thread_word(all));
        low_ratio_target(t, rows, n, what, decode_types[i], &dec, all, low_decode_speedup);
        snprintf(what, sizeof what, "decode %s 1x32768, %d %s", name, all, thread_word(all));
        roof_target(t, rows, n, what, &dec, decode_types[i], all, low_decode_pct);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(what, sizeof what, "prefill %s n=%d d128 vs f32, %d %s",
                 attn_dtype_axis_name(prefill_types[i]), TARGET_N, all, thread_word(all));
        low_ratio_target(t, rows, n, what, prefill_types[i], &pre, all, low_prefill_speedup);
    }
}

/* The fastest peer row of a shape that was timed in alternation with an
 * attnbench variant; NULL when there is none. */
static const attn_result_row *best_peer(const attn_result_row *rows, int n, const attn_shape *s,
                                        int threads)
{
    const attn_result_row *best = NULL;
    for (int i = 0; i < n; i++) {
        const attn_result_row *r = &rows[i];
        if (r->kind != ATTN_ROW_PEER || r->status != ATTN_ROW_OK || r->threads != threads ||
            !same_types(&r->types, &F32) || !isfinite(r->time_ns_median) ||
            !isfinite(r->paired_time_ns_median) || !attn_perf_same_cell(&r->shape, s))
            continue;
        if (!best || r->time_ns_median < best->time_ns_median)
            best = r;
    }
    return best;
}

/* attnbench's fastest variant against the fastest peer, from the rounds
 * in which the two alternated. No variant can beat a peer that runs at
 * x % of the roof by more than 100 / x: where the target is above that
 * ceiling, the line says so (the verdict stays what was measured). */
static void peer_target(tally *t, const attn_result_row *rows, int n, const attn_shape *s,
                        int threads, double want)
{
    const attn_result_row *p = best_peer(rows, n, s, threads);
    char what[96], label[64], achieved[160] = "", target[128];
    double ratio = p ? p->time_ns_median / p->paired_time_ns_median : NAN;
    if (p) {
        const attn_result_row *own = find(rows, n, p->paired_variant, s, threads);
        const double drift = own ? p->paired_time_ns_median / own->time_ns_median : NAN;
        if (drift > pairing_drift)
            snprintf(achieved, sizeof achieved,
                     "%.2fx (%s vs %s; %s took %.2fx its own row's time in these rounds)", ratio,
                     p->paired_variant, p->variant, p->paired_variant, drift);
        else
            snprintf(achieved, sizeof achieved, "%.2fx (%s vs %s)", ratio, p->paired_variant,
                     p->variant);
    }
    shape_label(s, label, sizeof label);
    const int bw = attn_perf_bandwidth_bound(s);
    snprintf(what, sizeof what, "vs best peer %s%s, %d %s", bw ? "decode " : "", label, threads,
             thread_word(threads));
    const double ceiling =
        p && isfinite(p->pct_peak) && p->pct_peak > 0 ? 100.0 / p->pct_peak : INFINITY;
    if (ceiling < want)
        snprintf(target, sizeof target,
                 "target >= %.1fx: above the %s roof here (the peer is at %.0f%% of it, so at "
                 "most %.2fx)",
                 want, strcmp(p->limit, "bandwidth") == 0 ? "read" : "FMA", p->pct_peak, ceiling);
    else
        snprintf(target, sizeof target, "target >= %.1fx", want);
    verdict_at_least(t, ratio, want, p != NULL, what, achieved, sizeof achieved, target);
}

static void peer_targets(tally *t, const attn_result_row *rows, int n, int all,
                         const attn_shape *shapes, int n_shapes)
{
    int peer_rows = 0, count = N_DECODE_HEADS * N_DECODE_KV;
    for (int i = 0; i < n; i++)
        peer_rows += rows[i].kind == ATTN_ROW_PEER;
    for (int i = 0; i < n_shapes; i++)
        count += shapes[i].n_q >= PEER_MIN_N;
    fprintf(t->f,
            "against the frameworks (matrix --peers), attnbench's fastest variant vs the "
            "fastest peer in the rounds they alternated: prefill n >= %d, decode:\n",
            PEER_MIN_N);
    if (!peer_rows) {
        char what[64];
        snprintf(what, sizeof what, "vs best peer (%d targets)", count);
        fprintf(t->f, "  - %-54s %-46s target >= %.1fx prefill, >= %.1fx decode\n", what,
                "not measured: the run has no peer rows", peer_prefill, peer_decode);
        t->targets += count;
        return;
    }
    for (int i = 0; i < n_shapes; i++)
        if (shapes[i].n_q >= PEER_MIN_N)
            peer_target(t, rows, n, &shapes[i], all, peer_prefill);
    for (int h = 0; h < N_DECODE_HEADS; h++)
        for (int k = 0; k < N_DECODE_KV; k++) {
            const attn_shape s = decode_shape(decode_heads_kv[h], decode_kv[k]);
            peer_target(t, rows, n, &s, all, peer_decode);
        }
}

int attn_perf_targets_report(FILE *f, const attn_result_row *rows, int n, int all,
                             const attn_peak *pk, int *evaluated)
{
    tally t = {f, 0, 0, 0, 0, 0};
    for (int i = 0; i < n; i++)
        if (rows[i].roof_exceeded) {
            if (strcmp(rows[i].limit, "bandwidth") == 0)
                t.read_roof_exceeded = 1;
            else
                t.fma_roof_exceeded = 1;
        }
    attn_shape shapes[MAX_PREFILL_SHAPES];
    const int n_shapes = prefill_shapes(all, shapes);
    fprintf(f, "perf-targets, %d %s = all; fused: the online-softmax variants:\n", all,
            thread_word(all));
    prefill_roof_targets(&t, rows, n, all, pk);
    causal_targets(&t, rows, n, all);
    peaked_targets(&t, rows, n, all);
    thread_targets(&t, rows, n);
    blas_targets(&t, rows, n, all, shapes, n_shapes);
    decode_targets(&t, rows, n, all);
    other_family_targets(&t, rows, n, all, pk);
    exp_target(&t);
    low_precision_targets(&t, rows, n, all);
    tensor_targets(&t, rows, n, all);
    tensor_peer_targets(&t, rows, n, all);
    peer_targets(&t, rows, n, all, shapes, n_shapes);
    fprintf(f, "perf-targets: %d of %d met (%d not measured)\n", t.met, t.evaluated,
            t.targets - t.evaluated);
    if (evaluated)
        *evaluated = t.evaluated;
    return t.met;
}
