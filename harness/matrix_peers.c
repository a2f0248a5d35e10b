/* The peers in the matrix (matrix_peers.h). Why it is done this way:
 *  - one worker process per peer, started once and used for every cell, one
 *    peer at a time: two libraries' thread pools in one process (or two
 *    processes busy at once) distort each other by up to a third;
 *  - the peer and the fastest attnbench variant of the cell are timed in
 *    alternating rounds (variant, peer, variant, peer, ...), so a drift of
 *    the machine hits both; the row keeps the peer's median and, beside it,
 *    the variant's median over the same rounds (paired_time_ns_median);
 *    each round ends with a pass of the cell's roof (--roof paired), so
 *    the peer's % of the roof is from the same stretch of time too;
 *  - inputs are the variant's own (N(0,1), seed 1), copied once into the
 *    shared buffer; the peer builds its layout outside any timing, and the
 *    output of its untimed first call is checked against the reference with
 *    the same metrics as a variant's. A peer beyond rule A is a finding (the
 *    row's status is failed, the page shows it), never a crash;
 *  - peers run f32 only: a cell with f16/bf16 types gets a skipped row
 *    saying so. The workers take uniform f16/bf16 buffers (docs/peers.md),
 *    but which precision class a library computes in (P rounded or not,
 *    f32 accumulation or not) is not known to the judge, and mixed types
 *    (an f16 KV cache beside f32 Q) are a skip in every adapter. */
#include "matrix_peers.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accuracy.h"
#include "cases.h"
#include "peer_client.h"
#include "perf_cell.h"
#include "timer.h"

static const char *const known_peers[MATRIX_MAX_PEERS] = {"torch", "onnxruntime", "openvino"};

/* Seconds one round of one side aims at, and the cap on calls per round:
 * short enough that several rounds alternate within a second or two. */
static const double round_seconds = 0.05;
enum { MAX_REPS_PER_ROUND = 50, EMPTY_REPS = 50, SETUP_TIMEOUT_MS = 300000 };

/* Rule A's c_exp and rescale block for a library whose internals we do not
 * know: docs/accuracy.md's default exp error (4 ulps) and a rescale every 16
 * keys (finer than any peer's key block: a bound that is safe, if loose). */
static const attn_variant peer_judge = {.name = "peer",
                                        .description = "a peer library",
                                        .family = ATTN_FAMILY_ONLINE,
                                        .exp_ulps = 4,
                                        .tiles = {.keys = 16}};
/* A peer in bf16 is judged in the class "P rounded to bf16": the
 * frameworks' bf16 attention feeds its weights to P·V in bf16 (PyTorch's
 * CPU flash attention converts them before its second GEMM). */
static const attn_variant peer_judge_bf16 = {.name = "peer",
                                             .description = "a peer library in bf16",
                                             .family = ATTN_FAMILY_ONLINE,
                                             .exp_ulps = 4,
                                             .tiles = {.keys = 16},
                                             .p_rounds = ATTN_DTYPE_BIT(ATTN_BF16)};

/* The cells peers run: f32, or bf16 throughout (the frameworks' attention
 * takes one element type for Q, K, V and O; f16 attention on a CPU is no
 * framework's fast path). */
static int peer_types(const attn_types *t)
{
    return t->q == t->kv && t->kv == t->o && (t->q == ATTN_F32 || t->q == ATTN_BF16);
}

static attn_peer_type peer_type_of(int32_t t)
{
    return t == ATTN_BF16 ? ATTN_PEER_BF16 : t == ATTN_F16 ? ATTN_PEER_F16 : ATTN_PEER_F32;
}

int matrix_peers_parse(const char *list, matrix_peers *p)
{
    p->n = 0;
    if (strcmp(list, "all") == 0) {
        for (int i = 0; i < MATRIX_MAX_PEERS; i++)
            p->names[p->n++] = known_peers[i];
        return 0;
    }
    char copy[128];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < MATRIX_MAX_PEERS; i++)
            if (strcmp(w, known_peers[i]) == 0)
                found = i;
        if (found < 0) {
            fprintf(stderr,
                    "matrix: --peers '%s': '%s' is not a peer (torch, onnxruntime, "
                    "openvino or all)\n",
                    list, w);
            return -1;
        }
        int dup = 0;
        for (int i = 0; i < p->n; i++)
            dup |= p->names[i] == known_peers[found];
        if (!dup)
            p->names[p->n++] = known_peers[found];
    }
    if (p->n == 0) {
        fprintf(stderr, "matrix: --peers '%s' names no peer\n", list);
        return -1;
    }
    return 0;
}

static int same_types(const attn_types *a, const attn_types *b)
{
    return a->q == b->q && a->kv == b->kv && a->o == b->o;
}

/* The fastest ok variant row of the run on this shape, types and thread count. */
static const attn_result_row *best_variant(const attn_results_file *rf, const attn_perf_case *pc)
{
    const attn_result_row *best = NULL;
    for (int i = 0; i < rf->n_rows; i++) {
        const attn_result_row *r = &rf->rows[i];
        if (r->kind != ATTN_ROW_VARIANT || r->status != ATTN_ROW_OK || r->threads != pc->threads ||
            !same_types(&r->types, &pc->types) || !isfinite(r->time_ns_median) ||
            !attn_perf_same_cell(&r->shape, &pc->shape))
            continue;
        if (!best || r->time_ns_median < best->time_ns_median)
            best = r;
    }
    return best;
}

static void peer_row_init(attn_result_row *row, const char *peer, const attn_perf_case *pc,
                          const attn_peak *pk)
{
    attn_result_row_init(row);
    attn_perf_case_name(peer, &pc->shape, &pc->types, row->case_name, sizeof row->case_name);
    snprintf(row->variant, sizeof row->variant, "%s", peer);
    row->kind = ATTN_ROW_PEER;
    row->shape = pc->shape;
    row->types = pc->types;
    row->threads = pc->threads;
    row->peak_gflops = attn_peak_roof_for(
        pk, attn_peak_highest_roof(pk, pc->types.q == ATTN_BF16, pc->threads), pc->threads);
    row->peak_gbytes_per_s = attn_peak_read_for(pk, pc->threads);
    snprintf(row->limit, sizeof row->limit, "%s",
             attn_perf_roofline_bandwidth_bound(&pc->shape, &pc->types, row->peak_gflops,
                                                row->peak_gbytes_per_s)
                 ? "bandwidth"
                 : "fma");
    snprintf(row->roof_source, sizeof row->roof_source, "run");
}

static double median_ns(const int64_t *ns, int n, double *lo, double *hi)
{
    double *x = malloc(sizeof *x * (size_t)(n ? n : 1));
    if (!x)
        return NAN;
    *lo = INFINITY;
    *hi = 0;
    for (int i = 0; i < n; i++) {
        x[i] = (double)ns[i];
        *lo = x[i] < *lo ? x[i] : *lo;
        *hi = x[i] > *hi ? x[i] : *hi;
    }
    double m = attn_median(x, n);
    free(x);
    return m;
}

typedef struct timing {
    int64_t *peer, *variant;
    int n_peer, n_variant;
    double *roof[2]; /* one pass of each of the cell's roofs per round (NULL: none) */
    int n_roof;
    int64_t last_round_ns; /* the last round's wall time */
} timing;

/* Between the two sides: a thread pool that spin-waits after its last call
 * (OpenMP's, TBB's) would steal the cores the other side's threads need;
 * a short untimed pause lets it go to sleep first. */
static void settle(void)
{
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
}

/* Rounds of (variant x k, peer x k, a pass of each roof), k from the
 * variant's time. stop_ns (0: none; --budget, the end of the peer's
 * share): no round starts that the last one's length says would end past
 * it, so a slow cell begun late takes one round, not the whole count. */
static int alternate(attn_peer *peer, attn_perf_cell *cell, const matrix_row_probes *probes,
                     int rounds, double variant_ns, int64_t stop_ns, timing *t, char *err,
                     size_t cap)
{
    const attn_roof_probe *roof[2];
    matrix_probe_list(probes, roof);
    int k = (int)ceil(round_seconds * 1e9 / (variant_ns > 1 ? variant_ns : 1));
    k = k < 1 ? 1 : k > MAX_REPS_PER_ROUND ? MAX_REPS_PER_ROUND : k;
    t->peer = calloc((size_t)(rounds * k), sizeof *t->peer);
    t->variant = calloc((size_t)(rounds * k), sizeof *t->variant);
    for (int j = 0; j < 2; j++)
        t->roof[j] =
            roof[j] ? calloc((size_t)(rounds + MATRIX_PLAN_MIN_ROOF_PASSES), sizeof *t->roof[j])
                    : NULL;
    t->n_peer = t->n_variant = t->n_roof = 0;
    if (!t->peer || !t->variant || (roof[0] && !t->roof[0]) || (roof[1] && !t->roof[1])) {
        snprintf(err, cap, "out of memory for the timings");
        return -1;
    }
    for (int r = 0; r < rounds; r++) {
        const int64_t round_start = attn_now_ns();
        if (r > 0 && stop_ns && round_start + t->last_round_ns > stop_ns)
            break;
        settle();
        for (int i = 0; cell && i < k; i++) {
            int64_t t0 = attn_now_ns();
            if (attn_perf_cell_run(cell) != ATTN_OK) {
                snprintf(err, cap, "the paired variant failed in timing");
                return -1;
            }
            t->variant[t->n_variant++] = attn_now_ns() - t0;
        }
        settle();
        int rc = attn_peer_time(peer, k, SETUP_TIMEOUT_MS, t->peer + t->n_peer, err, cap);
        if (rc != ATTN_PEER_OK)
            return -1;
        t->n_peer += k;
        t->n_roof += matrix_roof_passes(roof, t->roof, t->n_roof, settle);
        t->last_round_ns = attn_now_ns() - round_start;
    }
    return 0;
}

/* One peer on one cell: setup (skip?), accuracy, alternating rounds. */
static void run_peer_cell(const matrix_opts *o, const matrix_peers *peers, attn_peer *peer,
                          const attn_perf_case *pc, const attn_result_row *best, int all,
                          const matrix_row_probes *probes, int64_t stop_ns, attn_result_row *row)
{
    char err[400] = "";
    attn_perf_cell cell;
    const attn_variant *v = best ? attn_find_variant(best->variant) : attn_find_variant("naive");
    if (attn_perf_cell_setup(&cell, v, pc, o->llc_bytes, o->pages, err, sizeof err) != 0) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "inputs: %s", err);
        return;
    }
    attn_peer_buffer buf;
    attn_shape resolved = cell.shape;
    resolved.scale = cell.problem.scale;
    const attn_peer_types types = {peer_type_of(pc->types.q), peer_type_of(pc->types.kv),
                                   peer_type_of(pc->types.o)};
    if (attn_peer_buffer_create(&buf, &resolved, types, NULL, err, sizeof err) != ATTN_PEER_OK) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "shared buffer: %s", err);
        attn_perf_cell_free(&cell);
        return;
    }
    /* The cell's inputs, already in its types (the same values a variant gets). */
    memcpy(buf.q, cell.q, attn_dtype_size(pc->types.q) * attn_q_elems(&cell.shape));
    memcpy(buf.k, cell.k,
           attn_dtype_size(pc->types.kv) * attn_kv_elems(&cell.shape, cell.shape.d_k));
    memcpy(buf.v, cell.v,
           attn_dtype_size(pc->types.kv) * attn_kv_elems(&cell.shape, cell.shape.d_v));
    const attn_peer_run run = {pc->threads, cell.copies, attn_pages_name(o->pages)};
    int rc = attn_peer_setup(peer, &buf, &run, SETUP_TIMEOUT_MS, row->peer_op, sizeof row->peer_op,
                             err, sizeof err);
    timing t = {0};
    if (rc == ATTN_PEER_SKIP) {
        attn_result_row_set(row, ATTN_ROW_SKIPPED, "%s", err);
    } else if (rc != ATTN_PEER_OK) {
        attn_result_row_set(row, ATTN_ROW_FAILED, "setup: %s", err);
    } else {
        /* Its untimed first call's output, judged like a variant's. */
        matrix_check_output(pc->types.q == ATTN_BF16 ? &peer_judge_bf16 : &peer_judge, &cell, buf.o,
                            pc->threads, all, row);
        int64_t empty[EMPTY_REPS];
        double lo, hi;
        if (attn_peer_empty(peer, EMPTY_REPS, SETUP_TIMEOUT_MS, empty, err, sizeof err) ==
            ATTN_PEER_OK)
            row->overhead_ns = median_ns(empty, EMPTY_REPS, &lo, &hi);
        omp_set_num_threads(pc->threads);
        if (alternate(peer, best ? &cell : NULL, probes, peers->rounds,
                      best ? best->time_ns_median : 1e6, stop_ns, &t, err, sizeof err) != 0) {
            attn_result_row_set(row, ATTN_ROW_FAILED, "timing: %s", err);
        } else {
            row->time_ns_median = median_ns(t.peer, t.n_peer, &row->time_ns_min, &row->time_ns_max);
            row->repetitions = t.n_peer;
            if (best && t.n_variant) {
                snprintf(row->paired_variant, sizeof row->paired_variant, "%s", best->variant);
                snprintf(row->paired_case, sizeof row->paired_case, "%s", best->case_name);
                row->paired_threads = pc->threads;
                row->paired_time_ns_median = median_ns(t.variant, t.n_variant, &lo, &hi);
            }
            for (int j = 0; j < 2; j++)
                if (t.roof[j])
                    matrix_set_paired_roof(row, j ? probes->other : probes->limit, t.roof[j],
                                           t.n_roof);
            row->gflops = attn_perf_flops(&pc->shape) / row->time_ns_median;
            row->gbytes_per_s = attn_perf_bytes(&pc->shape, &pc->types) / row->time_ns_median;
            matrix_judge_paired(row, probes);
        }
    }
    free(t.peer);
    free(t.variant);
    free(t.roof[0]);
    free(t.roof[1]);
    attn_peer_buffer_close(&buf, NULL, 0);
    attn_perf_cell_free(&cell);
}

/* The roof probes of a peer's cell: the roof its row is judged against
 * (peer_row_init: the read roof, or the highest compute roof for its
 * types) and, for a decode cell, the other side's (matrix_row_probes).
 * None: --roof run; one that cannot be made here: a note on stderr. */
static matrix_row_probes peer_probes(matrix_roofs *roofs, const attn_peak *pk,
                                     const attn_perf_case *pc, const attn_result_row *row)
{
    matrix_row_probes probes = {0};
    if (!roofs)
        return probes;
    const attn_roof roof = attn_peak_highest_roof(pk, pc->types.q == ATTN_BF16, pc->threads);
    const int bw = strcmp(row->limit, "bandwidth") == 0;
    const char *no_limit, *no_other;
    probes = matrix_roofs_for_row(roofs, bw, roof, pc->threads, &pc->shape, &no_limit, &no_other);
    char note[512];
    if (matrix_unpaired_note(note, sizeof note, row->case_name, pc->threads, bw, no_limit,
                             no_other))
        fprintf(stderr, "%s\n", note);
    return probes;
}

static int wanted(const matrix_opts *o, const attn_result_row *row, const attn_results_file *rf)
{
    if (o->has_filter && regexec(&o->filter, row->case_name, 0, NULL, 0) != 0)
        return 0;
    return !attn_results_has(rf, row->case_name, row->threads);
}

int matrix_run_peers(const matrix_opts *o, const matrix_peers *peers, const attn_perf_case *cases,
                     int n, const attn_results_file *rf, const attn_peak *pk, int all,
                     matrix_roofs *roofs, int64_t deadline_ns, const matrix_peer_sink *sink)
{
    for (int pi = 0; pi < peers->n; pi++) {
        const char *name = peers->names[pi];
        int todo = 0, to_run = 0;
        for (int ci = 0; ci < n; ci++) {
            attn_result_row row;
            peer_row_init(&row, name, &cases[ci], pk);
            int w = wanted(o, &row, rf);
            todo += w;
            to_run += w && peer_types(&cases[ci].types);
        }
        if (!todo)
            continue;
        printf("matrix: peer %s: %d cells (%d in f32 or bf16, run in a process of its own)\n", name,
               todo, to_run);
        fflush(stdout);
        attn_peer_opts po = {peers->python, peers->worker, name, 0};
        attn_peer *peer = NULL;
        char why[400] = "";
        /* --budget: this peer's share of the time to the deadline, from
         * now (none left: share_end is now). */
        const int64_t t0 = attn_now_ns();
        const int64_t share_ns = deadline_ns > t0 ? (deadline_ns - t0) / (peers->n - pi) : 0;
        const int64_t share_end = t0 + share_ns;
        /* No worker for a run whose every cell it would skip. */
        int started = to_run && (!deadline_ns || share_ns > 0)
                          ? attn_peer_start(&po, &peer, why, sizeof why)
                          : ATTN_PEER_SKIP;
        if (started == ATTN_PEER_OK)
            sink->started(sink->ctx, name, attn_peer_version(peer));
        for (int ci = 0; ci < n; ci++) {
            attn_result_row row;
            peer_row_init(&row, name, &cases[ci], pk);
            if (!wanted(o, &row, rf))
                continue;
            if (!peer_types(&cases[ci].types))
                attn_result_row_set(&row, ATTN_ROW_SKIPPED,
                                    "peers run float32 or bfloat16 (Q, K/V and O in one type)");
            else if (deadline_ns && attn_now_ns() >= share_end)
                attn_result_row_set(&row, ATTN_ROW_SKIPPED,
                                    "over budget (the peer's share of --budget, %.0f s, was spent)",
                                    (double)share_ns * 1e-9);
            else if (started != ATTN_PEER_OK)
                attn_result_row_set(&row, ATTN_ROW_SKIPPED, "%s unavailable: %s", name, why);
            else {
                const matrix_row_probes probes = peer_probes(roofs, pk, &cases[ci], &row);
                run_peer_cell(o, peers, peer, &cases[ci], best_variant(rf, &cases[ci]), all,
                              &probes, deadline_ns ? share_end : 0, &row);
            }
            if (sink->emit(sink->ctx, &row) != 0) {
                attn_peer_close(peer, NULL, 0);
                return -1;
            }
        }
        attn_peer_close(peer, NULL, 0);
    }
    return 0;
}
