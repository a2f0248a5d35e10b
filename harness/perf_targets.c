#include "perf_targets.h"

#include "cases.h"
#include "variant.h"

#include <math.h>
#include <string.h>

/* The fused variants: the table's online-softmax family. */
static int is_fused(const char *variant)
{
    const attn_variant *v = attn_find_variant(variant);
    return v && v->family == ATTN_FAMILY_ONLINE;
}

static const attn_types F32 = {ATTN_F32, ATTN_F32, ATTN_F32};

static int same_types(const attn_types *a, const attn_types *b)
{
    return a->q == b->q && a->kv == b->kv && a->o == b->o;
}

/* The usable row of `variant` ("*fused" for the fastest fused one) on the
 * prefill/decode shape in `types` at `threads`; NULL when there is none. */
static const attn_result_row *find_typed(const attn_result_row *rows, int n, const char *variant,
                                         const attn_types *types, int heads_q, int heads_kv,
                                         int n_q, int n_kv, int d, int causal, int threads)
{
    const attn_result_row *best = NULL;
    int any_fused = strcmp(variant, "*fused") == 0;
    for (int i = 0; i < n; i++) {
        const attn_result_row *r = &rows[i];
        const attn_shape *s = &r->shape;
        if (r->status != ATTN_ROW_OK || r->kind != ATTN_ROW_VARIANT ||
            !isfinite(r->time_ns_median) || r->threads != threads ||
            !same_types(&r->types, types) || s->batch != 1 || s->heads_q != heads_q ||
            s->heads_kv != heads_kv || s->n_q != n_q || s->n_kv != n_kv || s->d_k != d ||
            s->d_v != d || s->causal != causal)
            continue;
        if (any_fused ? !is_fused(r->variant) : strcmp(r->variant, variant) != 0)
            continue;
        if (!best || r->time_ns_median < best->time_ns_median)
            best = r;
    }
    return best;
}

/* The f32 row (every target but the low-precision ones is about f32). */
static const attn_result_row *find(const attn_result_row *rows, int n, const char *variant,
                                   int heads_q, int heads_kv, int n_q, int n_kv, int d, int causal,
                                   int threads)
{
    return find_typed(rows, n, variant, &F32, heads_q, heads_kv, n_q, n_kv, d, causal, threads);
}

typedef struct tally {
    FILE *f;
    int met, evaluated;
    /* Some row of this run beat the FMA roof / the read roof: a ratio to
     * that roof proves nothing, so no target judged by it gets a check. */
    int fma_roof_exceeded, read_roof_exceeded;
} tally;

static void verdict(tally *t, int ok, int have, const char *what, const char *achieved,
                    const char *target)
{
    const char *mark = !have ? "-" : ok ? "\u2713" : "\u2717";
    fprintf(t->f, "  %s %-44s %-34s %s\n", mark, what, have ? achieved : "not measured", target);
    if (have) {
        t->evaluated++;
        t->met += ok;
    }
}

/* A target judged against a roof that a row of this run exceeded. */
static void refused(tally *t, const char *what, const char *achieved, const char *roof)
{
    fprintf(t->f,
            "  ! %-44s %-34s no verdict: a row of this run exceeded the %s, so it "
            "under-measures this CPU\n",
            what, achieved, roof);
    t->evaluated++;
}

static void pct_target(tally *t, const attn_result_row *rows, int n, const char *what, int heads_q,
                       int heads_kv, int n_q, int d, int threads, double want, const char *unit)
{
    const attn_result_row *r =
        find(rows, n, "*fused", heads_q, heads_kv, n_q, n_q == 1 ? 32768 : n_q, d, 0, threads);
    char achieved[96] = "", target[64];
    int have = r && isfinite(r->pct_peak);
    if (have)
        snprintf(achieved, sizeof achieved, "%.1f%% of %s (%s)", r->pct_peak, unit, r->variant);
    snprintf(target, sizeof target, "target >= %.0f%%", want);
    int bw = n_q == 1;
    if (have && (bw ? t->read_roof_exceeded : t->fma_roof_exceeded))
        refused(t, what, achieved, bw ? "read roof" : "FMA roof");
    else
        verdict(t, have && r->pct_peak >= want, have, what, achieved, target);
}

static void ratio_target(tally *t, const char *what, const attn_result_row *slow,
                         const attn_result_row *fast, double want)
{
    char achieved[96] = "", target[64];
    int have = slow && fast;
    double ratio = have ? slow->time_ns_median / fast->time_ns_median : NAN;
    if (have)
        snprintf(achieved, sizeof achieved, "%.2fx (%s vs %s)", ratio, fast->variant,
                 slow->variant);
    snprintf(target, sizeof target, "target >= %.1fx", want);
    verdict(t, have && ratio >= want, have, what, achieved, target);
}

/* A shape of the low-precision targets, at all threads. */
typedef struct low_shape {
    int heads_q, heads_kv, n_q, n_kv, d;
} low_shape;

/* The fastest fused row in `types` whose variant has an f32 row of the
 * same cell too, against that f32 row: f32 time / low-precision time, both
 * times beside it. */
static void low_ratio_target(tally *t, const attn_result_row *rows, int n, const char *what,
                             const attn_types *types, const low_shape *s, int threads, double want)
{
    const attn_result_row *low = NULL, *f32 = NULL;
    for (int i = 0; i < attn_variant_table_size; i++) {
        const char *name = attn_variant_table[i]->name;
        if (!is_fused(name))
            continue;
        const attn_result_row *l = find_typed(rows, n, name, types, s->heads_q, s->heads_kv, s->n_q,
                                              s->n_kv, s->d, 0, threads);
        const attn_result_row *f =
            find(rows, n, name, s->heads_q, s->heads_kv, s->n_q, s->n_kv, s->d, 0, threads);
        if (l && f && (!low || l->time_ns_median < low->time_ns_median)) {
            low = l;
            f32 = f;
        }
    }
    char achieved[96] = "", target[64];
    int have = low != NULL;
    double ratio = have ? f32->time_ns_median / low->time_ns_median : NAN;
    if (have)
        snprintf(achieved, sizeof achieved, "%.2fx (%s: %.3g vs %.3g ms)", ratio, low->variant,
                 low->time_ns_median * 1e-6, f32->time_ns_median * 1e-6);
    snprintf(target, sizeof target, "target >= %.1fx f32's speed", want);
    verdict(t, have && ratio >= want, have, what, achieved, target);
}

/* The fastest fused row in `types` against the read roof, its bytes
 * counted at their types' sizes (what the row's pct_peak holds). */
static void low_roof_target(tally *t, const attn_result_row *rows, int n, const char *what,
                            const attn_types *types, const low_shape *s, int threads, double want)
{
    const attn_result_row *r = find_typed(rows, n, "*fused", types, s->heads_q, s->heads_kv, s->n_q,
                                          s->n_kv, s->d, 0, threads);
    char achieved[96] = "", target[64];
    int have = r && isfinite(r->pct_peak);
    if (have)
        snprintf(achieved, sizeof achieved, "%.1f%% of read bandwidth (%s)", r->pct_peak,
                 r->variant);
    snprintf(target, sizeof target, "target >= %.0f%% (bytes at their types' sizes)", want);
    if (have && t->read_roof_exceeded)
        refused(t, what, achieved, "read roof");
    else
        verdict(t, have && r->pct_peak >= want, have, what, achieved, target);
}

/* Decode with a half-size KV cache (f16, bf16): >= 1.8x the same variant's
 * f32 speed and >= 90 % of the read roof; prefill with bf16/f16 inputs no
 * slower than f32. Returns how many targets it printed. */
static int low_precision_targets(tally *t, const attn_result_row *rows, int n, int all)
{
    static const attn_types decode_types[] = {{ATTN_F32, ATTN_F16, ATTN_F32},
                                              {ATTN_F32, ATTN_BF16, ATTN_F32}};
    static const attn_types prefill_types[] = {{ATTN_BF16, ATTN_BF16, ATTN_BF16},
                                               {ATTN_F16, ATTN_F16, ATTN_F16}};
    const low_shape decode = {32, 8, 1, 32768, 128}, prefill = {8, 8, 4096, 4096, 128};
    char what[96];
    fprintf(t->f, "low precision, the fused variant fastest in the type against its own f32 row "
                  "(decode Hq32/Hkv8 d128, prefill h8):\n");
    for (int i = 0; i < 2; i++) {
        const char *name = attn_dtype_axis_name(&decode_types[i]);
        snprintf(what, sizeof what, "decode %s 1x32768 vs f32, %d threads", name, all);
        low_ratio_target(t, rows, n, what, &decode_types[i], &decode, all, 1.8);
        snprintf(what, sizeof what, "decode %s 1x32768, %d threads", name, all);
        low_roof_target(t, rows, n, what, &decode_types[i], &decode, all, 90);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(what, sizeof what, "prefill %s n=4096 d128 vs f32, %d threads",
                 attn_dtype_axis_name(&prefill_types[i]), all);
        low_ratio_target(t, rows, n, what, &prefill_types[i], &prefill, all, 1.0);
    }
    return 6;
}

/* The fastest peer row of a shape that was timed in alternation with an
 * attnbench variant; NULL when the run had no peers. */
static const attn_result_row *best_peer(const attn_result_row *rows, int n, int heads_q,
                                        int heads_kv, int n_q, int n_kv, int d, int causal,
                                        int threads)
{
    const attn_result_row *best = NULL;
    for (int i = 0; i < n; i++) {
        const attn_result_row *r = &rows[i];
        const attn_shape *s = &r->shape;
        if (r->kind != ATTN_ROW_PEER || r->status != ATTN_ROW_OK || r->threads != threads ||
            !same_types(&r->types, &F32) || !isfinite(r->time_ns_median) ||
            !isfinite(r->paired_time_ns_median) || s->heads_q != heads_q ||
            s->heads_kv != heads_kv || s->n_q != n_q || s->n_kv != n_kv || s->d_k != d ||
            s->d_v != d || s->causal != causal)
            continue;
        if (!best || r->time_ns_median < best->time_ns_median)
            best = r;
    }
    return best;
}

/* attnbench's fastest variant against the fastest peer, from the rounds
 * in which the two alternated. */
static void peer_target(tally *t, const attn_result_row *rows, int n, const char *what, int heads_q,
                        int heads_kv, int n_q, int n_kv, int d, int causal, int threads,
                        double want)
{
    const attn_result_row *p = best_peer(rows, n, heads_q, heads_kv, n_q, n_kv, d, causal, threads);
    char achieved[96] = "", target[64];
    double ratio = p ? p->time_ns_median / p->paired_time_ns_median : NAN;
    if (p)
        snprintf(achieved, sizeof achieved, "%.2fx (%s vs %s)", ratio, p->paired_variant,
                 p->variant);
    snprintf(target, sizeof target, "target >= %.1fx", want);
    verdict(t, p && ratio >= want, p != NULL, what, achieved, target);
}

int attn_perf_targets_report(FILE *f, const attn_result_row *rows, int n, int all, int *evaluated)
{
    tally t = {f, 0, 0, 0, 0};
    for (int i = 0; i < n; i++)
        if (rows[i].roof_exceeded) {
            if (strcmp(rows[i].limit, "bandwidth") == 0)
                t.read_roof_exceeded = 1;
            else
                t.fma_roof_exceeded = 1;
        }
    char what[96];
    fprintf(f, "perf-targets, best of the online-softmax (fused) variants per row:\n");
    for (int d = 128; d >= 64; d /= 2) {
        double want = d == 128 ? 80 : 70;
        snprintf(what, sizeof what, "prefill n=4096 h8 d%d, %d threads", d, all);
        pct_target(&t, rows, n, what, 8, 8, 4096, d, all, want, "FMA peak");
    }
    for (int d = 64; d <= 128; d *= 2) {
        snprintf(what, sizeof what, "vs blas n=4096 h8 d%d, %d threads", d, all);
        ratio_target(&t, what, find(rows, n, "blas", 8, 8, 4096, 4096, d, 0, all),
                     find(rows, n, "*fused", 8, 8, 4096, 4096, d, 0, all), d == 64 ? 2.5 : 1.8);
    }
    for (int d = 128; d >= 64; d /= 2) {
        snprintf(what, sizeof what, "causal vs non-causal n=4096 h8 d%d", d);
        ratio_target(&t, what, find(rows, n, "*fused", 8, 8, 4096, 4096, d, 0, all),
                     find(rows, n, "*fused", 8, 8, 4096, 4096, d, 1, all), 1.8);
    }
    snprintf(what, sizeof what, "decode 1x32768 Hq32/Hkv8 d128, %d threads", all);
    pct_target(&t, rows, n, what, 32, 8, 1, 128, all, 80, "read bandwidth");
    for (int d = 128; d >= 64; d /= 2) {
        snprintf(what, sizeof what, "prefill n=4096 h8 d%d, 1 thread", d);
        pct_target(&t, rows, n, what, 8, 8, 4096, d, 1, d == 128 ? 80 : 70, "1-thread peak");
    }
    /* Against the frameworks (rows of matrix --peers): the best peer per shape. */
    int peer_rows = 0;
    for (int i = 0; i < n; i++)
        peer_rows += rows[i].kind == ATTN_ROW_PEER;
    int targets = 9 + low_precision_targets(&t, rows, n, all);
    if (peer_rows) {
        for (int d = 128; d >= 64; d /= 2)
            for (int causal = 0; causal <= 1; causal++) {
                snprintf(what, sizeof what, "vs best peer n=4096 h8 d%d%s, %d threads", d,
                         causal ? " causal" : "", all);
                peer_target(&t, rows, n, what, 8, 8, 4096, 4096, d, causal, all, 1.2);
                targets++;
            }
        snprintf(what, sizeof what, "vs best peer decode 1x32768 Hq32/Hkv8 d128");
        peer_target(&t, rows, n, what, 32, 8, 1, 32768, 128, 0, all, 3.0);
        targets++;
    }
    fprintf(f, "perf-targets: %d of %d met (%d not measured)\n", t.met, t.evaluated,
            targets - t.evaluated);
    if (evaluated)
        *evaluated = t.evaluated;
    return t.met;
}
