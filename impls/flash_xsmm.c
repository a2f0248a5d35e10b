/* xsmm — flash-attention-2 forward (online softmax: running max, running
 * sum and a rescaled accumulator per query row) whose two tile products,
 * S = Q·Kᵀ and O += P·V, are libxsmm JIT kernels. The softmax between them
 * is plain C (glibc expf).
 *
 * libxsmm is column-major and its JIT refuses TRANS_A, so the row-major
 * tiles are mapped as follows (a row-major X[r][c] is a column-major c x r):
 *   S  = Q·Kᵀ: column-major S[i + j·TQ] = Σ_t Qt[i + t·TQ]·K[t + j·d_k], i.e.
 *        C(m = rows, n = keys) = A(rows x d_k)·B(d_k x keys) with A the query
 *        block transposed once per block into Qt [d_k][TQ] (amortised over
 *        every key tile) and B the K tile read in place. S comes out
 *        key-major, S[j][i], so the softmax runs over contiguous query rows.
 *   O += P·V: C(m = d_v, n = rows) = A(d_v x keys)·Bᵀ with A the V tile in
 *        place and B = P stored S[j][i] (TRANS_B, which the JIT supports),
 *        C the row-major accumulator acc[i][c].
 * Every kernel shape the call needs (full tiles, the key and row tails, the
 * causal diagonal tile) is dispatched before the parallel region, never in
 * the loops. Across calls the JIT happens once per shape: libxsmm keeps the
 * generated code in its registry and a later dispatch of the same shape is a
 * lookup (at most six per call). attnbench keeps no kernel cache of its own,
 * which would be mutable global state. A NULL kernel (no JIT for this CPU,
 * or LIBXSMM_TARGET=generic: test verify_full_xsmm_no_jit) falls back to a
 * plain C tile product.
 *
 * TQ = TK = 64: a 64 x 64 score tile is 16 KiB and Qt (64 x d_k) 16-32 KiB
 * for d_k <= 128, so both stay in L1 (48 KiB) while each tile is used; the
 * accumulator (64 x d_v) sits in L2. kv_block = TK for accuracy rule A.
 *
 * Causal (bottom-right): for a block of rows i0 .. i0+nr-1 every row sees the
 * keys before i0 + off (off = n_kv - n_q); those are tiled from the start
 * with a leading partial tile of (max(off, 0) mod TK) keys, so all blocks
 * share the same tile shapes. The nr keys from i0 + off form the diagonal
 * tile: its scores come from the same GEMM, the ones a row must not see are
 * set to -inf, and its P·V runs in plain C over exactly the keys each row
 * sees (a GEMM would multiply masked V rows by p = 0, and 0·NaN is NaN).
 *
 * Threads: OpenMP over batch x heads x query blocks. When that gives fewer
 * work items than threads (decode), each item's key tiles are also split
 * across threads (flash-decoding) and the (max, sum, acc) triples are merged
 * in split order afterwards: bitwise reproducible for a given thread count. */
#include <libxsmm.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <string.h>

#include "variant.h"

enum { TQ = 64, TK = 64 };

/* How the call is cut into work. */
typedef struct plan {
    int32_t first;                /* rows before it see no key (causal, n_q > n_kv) */
    int64_t blocks;               /* query blocks per head */
    int64_t items;                /* heads x blocks */
    int32_t splits;               /* key-range pieces per item (flash-decoding) */
    int32_t tail_rows, tail_keys; /* nr of the last block; the partial key tile */
    size_t per_thread;            /* floats */
    size_t per_unit;              /* floats of one split's (max, sum, acc) */
} plan;

static size_t line_floats(size_t n)
{
    return (n + 15) / 16 * 16;
}

static int32_t tiles_of_block(const attn_problem *p, const plan *pl, int32_t i0);

static void make_plan(const attn_problem *p, plan *pl)
{
    const attn_shape *s = &p->shape;
    pl->first = s->causal && s->n_q > s->n_kv ? s->n_q - s->n_kv : 0;
    pl->blocks = ((int64_t)s->n_q - pl->first + TQ - 1) / TQ;
    pl->items = (int64_t)s->batch * s->heads_q * pl->blocks;
    pl->tail_rows = (s->n_q - pl->first) % TQ;
    int32_t off = s->n_kv - s->n_q;
    pl->tail_keys = s->causal ? (off > 0 ? off : 0) % TK : s->n_kv % TK;
    pl->splits = 1;
    if (pl->items < p->threads) {
        /* Enough pieces for every thread, but never more than the smallest
         * block has tiles (the first block of a causal head). */
        int64_t want = (p->threads + pl->items - 1) / pl->items;
        int32_t tiles = tiles_of_block(p, pl, pl->first);
        pl->splits = (int32_t)(want < tiles ? want : tiles);
    }
    pl->per_thread = line_floats((size_t)s->d_k * TQ) + line_floats((size_t)TK * TQ) +
                     5 * line_floats(TQ) + line_floats((size_t)TQ * s->d_v);
    pl->per_unit = 2 * line_floats(TQ) + line_floats((size_t)TQ * s->d_v);
}

static int xsmm_workspace(const attn_problem *p_in, size_t *bytes)
{
    attn_problem f = attn_fold_decode_heads(p_in);
    plan pl;
    make_plan(&f, &pl);
    size_t floats = pl.per_thread * (size_t)f.threads, partial;
    if (pl.splits > 1) {
        if (__builtin_mul_overflow(pl.per_unit, (size_t)pl.items * pl.splits, &partial) ||
            __builtin_add_overflow(floats, partial, &floats))
            return ATTN_ENOMEM;
    }
    if (__builtin_mul_overflow(floats, sizeof(float), bytes))
        return ATTN_ENOMEM;
    return ATTN_OK;
}

/* One column-major tile product C(m x n) = A(m x k)·op(B) (+ C when
 * accumulating): the JIT kernel, or the plain C fallback when fn is NULL. */
typedef struct tile_gemm {
    libxsmm_smmfunction fn;
    int32_t m, n, k, lda, ldb, ldc;
    int accumulate, trans_b;
    int avx; /* fn is AVX or later code: clear the upper state after it */
} tile_gemm;

static tile_gemm make_gemm(int32_t m, int32_t n, int32_t k, int32_t lda, int32_t ldb, int32_t ldc,
                           int accumulate, int trans_b)
{
    tile_gemm g = {NULL, m, n, k, lda, ldb, ldc, accumulate, trans_b, 0};
    if (m <= 0 || n <= 0 || k <= 0)
        return g;
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    const int flags = trans_b ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
    const libxsmm_blasint l_a = lda, l_b = ldb, l_c = ldc;
    g.fn = libxsmm_smmdispatch(m, n, k, &l_a, &l_b, &l_c, &alpha, &beta, &flags, NULL);
    g.avx = g.fn && libxsmm_get_target_archid() >= LIBXSMM_X86_AVX;
    return g;
}

/* libxsmm 1.17's AVX/AVX-512 kernels return without vzeroupper. With the
 * upper register halves left dirty, the SSE-encoded plain C that follows (and
 * glibc's expf) runs ~30x slower: n = 2048, d = 64, 1 thread, 1.9 GFLOP/s
 * without this, 62 with it. Executed only after AVX-or-later JIT code, so
 * the instruction never reaches a CPU without AVX. */
static void clear_upper_state(void)
{
    __asm__ volatile("vzeroupper");
}

static void gemm_fallback(const tile_gemm *g, const float *a, const float *b, float *c)
{
    for (int32_t j = 0; j < g->n; j++) {
        float *cj = c + (size_t)j * g->ldc;
        if (!g->accumulate)
            for (int32_t i = 0; i < g->m; i++)
                cj[i] = 0.0f;
        for (int32_t t = 0; t < g->k; t++) {
            float btj = g->trans_b ? b[j + (size_t)t * g->ldb] : b[t + (size_t)j * g->ldb];
            const float *at = a + (size_t)t * g->lda;
            for (int32_t i = 0; i < g->m; i++)
                cj[i] += at[i] * btj;
        }
    }
}

static void gemm_run(const tile_gemm *g, const float *a, const float *b, float *c)
{
    if (g->fn) {
        g->fn(a, b, c);
        if (g->avx)
            clear_upper_state();
    } else
        gemm_fallback(g, a, b, c);
}

/* Every shape one call uses. Rows: [0] TQ, [1] tail_rows. Keys: [0] TK,
 * [1] tail_keys, [2] the diagonal tile (as many keys as rows). */
typedef struct kernels {
    tile_gemm scores[2][3];
    tile_gemm pv[2][2];
} kernels;

static void make_kernels(const attn_problem *p, const plan *pl, kernels *kn)
{
    const attn_shape *s = &p->shape;
    int32_t rows[2] = {TQ, pl->tail_rows}, keys[2] = {TK, pl->tail_keys};
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 3; c++) {
            int32_t nk = c < 2 ? keys[c] : (s->causal ? rows[r] : 0);
            kn->scores[r][c] = make_gemm(rows[r], nk, s->d_k, TQ, s->d_k, TQ, 0, 0);
        }
        for (int c = 0; c < 2; c++)
            kn->pv[r][c] = make_gemm(s->d_v, rows[r], keys[c], s->d_v, TQ, s->d_v, 1, 1);
    }
}

/* Key tiles of a block starting at row i0, in processing order. */
static int32_t tiles_of_block(const attn_problem *p, const plan *pl, int32_t i0)
{
    const attn_shape *s = &p->shape;
    if (!s->causal)
        return (int32_t)(((int64_t)s->n_kv + TK - 1) / TK);
    int32_t prefix = i0 + (s->n_kv - s->n_q); /* keys every row of the block sees */
    return (pl->tail_keys > 0) + (prefix - pl->tail_keys) / TK + 1;
}

typedef struct key_tile {
    int32_t j0, nk, kind; /* kind: 0 full, 1 partial, 2 diagonal */
} key_tile;

static key_tile tile_at(const attn_problem *p, const plan *pl, int32_t i0, int32_t nr, int32_t t)
{
    const attn_shape *s = &p->shape;
    key_tile kt;
    if (!s->causal) {
        kt.j0 = t * TK;
        kt.nk = s->n_kv - kt.j0 < TK ? s->n_kv - kt.j0 : TK;
        kt.kind = kt.nk == TK ? 0 : 1;
        return kt;
    }
    int32_t prefix = i0 + (s->n_kv - s->n_q);
    int32_t lead = pl->tail_keys > 0;
    if (t == tiles_of_block(p, pl, i0) - 1) {
        kt = (key_tile){prefix, nr, 2};
    } else if (lead && t == 0) {
        kt = (key_tile){0, pl->tail_keys, 1};
    } else {
        kt = (key_tile){pl->tail_keys + (t - lead) * TK, TK, 0};
    }
    return kt;
}

/* Per-thread scratch and the running state of one block. */
typedef struct flash_state {
    float *qt, *s, *mx, *sum, *shift, *alpha, *tile_max, *acc;
} flash_state;

static flash_state carve(float *ws, const attn_shape *sh)
{
    flash_state st;
    st.qt = ws;
    st.s = st.qt + line_floats((size_t)sh->d_k * TQ);
    st.mx = st.s + line_floats((size_t)TK * TQ);
    st.sum = st.mx + line_floats(TQ);
    st.shift = st.sum + line_floats(TQ);
    st.alpha = st.shift + line_floats(TQ);
    st.tile_max = st.alpha + line_floats(TQ);
    st.acc = st.tile_max + line_floats(TQ);
    return st;
}

/* Online-softmax update for one score tile S[j][i] (nk keys x nr rows). */
static void softmax_tile(const flash_state *st, int32_t nr, int32_t nk, int diagonal, float scale)
{
    float *restrict tmax = st->tile_max;
    for (int32_t i = 0; i < nr; i++)
        tmax[i] = -INFINITY;
    for (int32_t j = 0; j < nk; j++) {
        float *restrict row = st->s + (size_t)j * TQ;
        /* Diagonal tile: row i sees key j iff j <= i; the rest get -inf. */
        int32_t lo = diagonal ? (j < nr ? j : nr) : 0;
        for (int32_t i = 0; i < lo; i++)
            row[i] = -INFINITY;
        for (int32_t i = lo; i < nr; i++) {
            float t = row[i] * scale;
            row[i] = t;
            tmax[i] = t > tmax[i] ? t : tmax[i]; /* NaN: reaches the sum via expf */
        }
    }
    for (int32_t i = 0; i < nr; i++) {
        float m = tmax[i] > st->mx[i] ? tmax[i] : st->mx[i];
        /* While a row has seen only -inf scores, shift by 0: exp(-inf) = 0
         * instead of exp(-inf - -inf) = NaN. */
        st->shift[i] = m == -INFINITY ? 0.0f : m;
        st->alpha[i] = expf(st->mx[i] - st->shift[i]);
        st->mx[i] = m;
        st->sum[i] *= st->alpha[i];
    }
    for (int32_t j = 0; j < nk; j++) {
        float *restrict row = st->s + (size_t)j * TQ;
        for (int32_t i = 0; i < nr; i++)
            row[i] = expf(row[i] - st->shift[i]);
    }
    for (int32_t j = 0; j < nk; j++) {
        const float *restrict row = st->s + (size_t)j * TQ;
        for (int32_t i = 0; i < nr; i++)
            st->sum[i] += row[i];
    }
}

static void rescale_acc(const flash_state *st, int32_t nr, int32_t d_v)
{
    for (int32_t i = 0; i < nr; i++) {
        float *restrict a = st->acc + (size_t)i * d_v;
        float f = st->alpha[i];
        for (int32_t c = 0; c < d_v; c++)
            a[c] *= f;
    }
}

/* P·V of the diagonal tile over exactly the keys each row sees. */
static void diagonal_pv(const flash_state *st, int32_t nr, const float *v, int32_t d_v)
{
    for (int32_t i = 0; i < nr; i++) {
        float *restrict a = st->acc + (size_t)i * d_v;
        for (int32_t j = 0; j <= i; j++) {
            float pj = st->s[(size_t)j * TQ + i];
            const float *restrict vj = v + (size_t)j * d_v;
            for (int32_t c = 0; c < d_v; c++)
                a[c] += pj * vj[c];
        }
    }
}

/* One work unit: key tiles [t0, t1) of the block at row i0 of one head. */
typedef struct unit {
    const float *q, *k, *v; /* Q rows from i0; the head's K and V */
    int32_t i0, nr, t0, t1;
} unit;

static void run_unit(const attn_problem *p, const plan *pl, const kernels *kn, const unit *u,
                     const flash_state *st)
{
    const attn_shape *s = &p->shape;
    int32_t d_k = s->d_k, d_v = s->d_v, nr = u->nr, rc = nr == TQ ? 0 : 1;
    for (int32_t i = 0; i < nr; i++)
        for (int32_t t = 0; t < d_k; t++)
            st->qt[(size_t)t * TQ + i] = u->q[(size_t)i * d_k + t];
    for (int32_t i = 0; i < nr; i++) {
        st->mx[i] = -INFINITY;
        st->sum[i] = 0.0f;
    }
    memset(st->acc, 0, sizeof(float) * (size_t)nr * d_v);
    for (int32_t t = u->t0; t < u->t1; t++) {
        key_tile kt = tile_at(p, pl, u->i0, nr, t);
        gemm_run(&kn->scores[rc][kt.kind], st->qt, u->k + (size_t)kt.j0 * d_k, st->s);
        softmax_tile(st, nr, kt.nk, kt.kind == 2, p->scale);
        rescale_acc(st, nr, d_v);
        if (kt.kind == 2)
            diagonal_pv(st, nr, u->v + (size_t)kt.j0 * d_v, d_v);
        else
            gemm_run(&kn->pv[rc][kt.kind], u->v + (size_t)kt.j0 * d_v, st->s, st->acc);
    }
}

static void finish_rows(const float *acc, const float *sum, int32_t nr, int32_t d_v, float *o)
{
    for (int32_t i = 0; i < nr; i++) {
        const float *restrict a = acc + (size_t)i * d_v;
        float *restrict out = o + (size_t)i * d_v;
        float l = sum[i];
        for (int32_t c = 0; c < d_v; c++)
            out[c] = a[c] / l;
    }
}

/* Merges the splits of one item in split order: O = Σ w_s·acc_s / Σ w_s·l_s
 * with w_s = exp(m_s - max_s m_s). */
static void merge_splits(const float *parts, const plan *pl, int32_t nr, int32_t d_v, float *o,
                         float *scratch)
{
    float *restrict acc = scratch;
    for (int32_t i = 0; i < nr; i++) {
        float m = -INFINITY;
        for (int32_t sp = 0; sp < pl->splits; sp++) {
            float ms = parts[(size_t)sp * pl->per_unit + i];
            m = ms > m ? ms : m;
        }
        float shift = m == -INFINITY ? 0.0f : m, l = 0.0f;
        float *restrict a = acc + (size_t)i * d_v;
        for (int32_t c = 0; c < d_v; c++)
            a[c] = 0.0f;
        for (int32_t sp = 0; sp < pl->splits; sp++) {
            const float *part = parts + (size_t)sp * pl->per_unit;
            float w = expf(part[i] - shift);
            l += w * part[line_floats(TQ) + i];
            const float *restrict pa = part + 2 * line_floats(TQ) + (size_t)i * d_v;
            for (int32_t c = 0; c < d_v; c++)
                a[c] += w * pa[c];
        }
        float *restrict out = o + (size_t)i * d_v;
        for (int32_t c = 0; c < d_v; c++)
            out[c] = a[c] / l;
    }
}

static int xsmm_run(const attn_problem *p_in, void *workspace)
{
    attn_problem f = attn_fold_decode_heads(p_in);
    const attn_problem *p = &f;
    const attn_shape *s = &p->shape;
    plan pl;
    make_plan(p, &pl);
    libxsmm_init(); /* idempotent; JIT code is cached inside libxsmm */
    kernels kn;
    make_kernels(p, &pl, &kn);
    float *partials = (float *)workspace + pl.per_thread * (size_t)p->threads;
    int64_t heads = (int64_t)s->batch * s->heads_q, units = pl.items * pl.splits;

#pragma omp parallel num_threads(p->threads)
    {
        flash_state st =
            carve((float *)workspace + pl.per_thread * (size_t)omp_get_thread_num(), s);
        if (pl.first > 0) {
#pragma omp for schedule(static)
            for (int64_t bh = 0; bh < heads; bh++)
                memset(attn_o_head(p, (int32_t)(bh / s->heads_q), (int32_t)(bh % s->heads_q)), 0,
                       sizeof(float) * (size_t)pl.first * s->d_v);
        }
        /* Round-robin: causal blocks grow in cost along the sequence. */
#pragma omp for schedule(static, 1)
        for (int64_t un = 0; un < units; un++) {
            int64_t it = un / pl.splits;
            int32_t sp = (int32_t)(un % pl.splits);
            int32_t b = (int32_t)(it / pl.blocks / s->heads_q);
            int32_t h = (int32_t)(it / pl.blocks % s->heads_q);
            int32_t i0 = pl.first + (int32_t)(it % pl.blocks) * TQ;
            int32_t nr = s->n_q - i0 < TQ ? s->n_q - i0 : TQ;
            int32_t tiles = tiles_of_block(p, &pl, i0);
            unit u = {
                .q = attn_q_head(p, b, h) + (size_t)i0 * s->d_k,
                .k = attn_k_head(p, b, h),
                .v = attn_v_head(p, b, h),
                .i0 = i0,
                .nr = nr,
                .t0 = (int32_t)((int64_t)tiles * sp / pl.splits),
                .t1 = (int32_t)((int64_t)tiles * (sp + 1) / pl.splits),
            };
            run_unit(p, &pl, &kn, &u, &st);
            float *o = attn_o_head(p, b, h) + (size_t)i0 * s->d_v;
            if (pl.splits == 1) {
                finish_rows(st.acc, st.sum, nr, s->d_v, o);
            } else {
                float *part = partials + (size_t)un * pl.per_unit;
                memcpy(part, st.mx, sizeof(float) * (size_t)nr);
                memcpy(part + line_floats(TQ), st.sum, sizeof(float) * (size_t)nr);
                memcpy(part + 2 * line_floats(TQ), st.acc, sizeof(float) * (size_t)nr * s->d_v);
            }
        }
        if (pl.splits > 1) {
#pragma omp for schedule(static)
            for (int64_t it = 0; it < pl.items; it++) {
                int32_t b = (int32_t)(it / pl.blocks / s->heads_q);
                int32_t h = (int32_t)(it / pl.blocks % s->heads_q);
                int32_t i0 = pl.first + (int32_t)(it % pl.blocks) * TQ;
                int32_t nr = s->n_q - i0 < TQ ? s->n_q - i0 : TQ;
                merge_splits(partials + (size_t)it * pl.splits * pl.per_unit, &pl, nr, s->d_v,
                             attn_o_head(p, b, h) + (size_t)i0 * s->d_v, st.acc);
            }
        }
    }
    return ATTN_OK;
}

static const char *xsmm_library_version(void)
{
    return LIBXSMM_CONFIG_VERSION;
}

const attn_variant attn_variant_xsmm = {
    .name = "xsmm",
    .required_features = 0, /* libxsmm JITs for the CPU it finds; plain C if it cannot */
    .description = "flash-attention-2 online softmax, Q.K^T and P.V tiles as libxsmm JIT GEMMs",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 1, /* glibc expf: < 1 ulp */
    .tiles = {.keys = TK, .rows = TQ},
    .library = "libxsmm",
    .library_version = xsmm_library_version,
    .workspace_size = xsmm_workspace,
    .run = xsmm_run,
};
