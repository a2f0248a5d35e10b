/* blocked — cache-blocked attention in plain C with an exact two-pass
 * softmax. A block of query rows keeps its full score rows in workspace:
 *   pass 1  S = Q·Kᵀ for the block, key tile by key tile (register-tiled);
 *   pass 2  per row: max, then p = expf(s - max) and the sum, in key order;
 *   pass 3  O = P·V tile by tile, then each row divided by its sum.
 * No intrinsics: the compiler vectorises the inner loops for baseline
 * x86-64 (SSE2), so the variant runs on any CPU.
 *
 * Layouts, chosen so that every inner loop runs over independent outputs
 * (without -ffast-math the compiler may not reorder a dot product's sum):
 *   Qt [d_k][bq]      the query block transposed, packed once per block;
 *   S  [n_kv][bq]     scores key-major: pass 1 broadcasts K, loads Qt rows;
 *                     pass 2 runs over query rows (max, sum per row in
 *                     registers); pass 3 broadcasts P, loads V rows.
 * K and V are read in place; only Q is packed.
 *
 * Sizes (why):
 *   MR x NR = 4 x 8   register tile: 8 SSE accumulators, 2 loads and a
 *                     broadcast fit the 16 xmm registers without spills;
 *   KEY_TILE = 64     keys per tile: a K or V tile of 64 rows x d <= 128
 *                     floats is <= 32 KiB, resident in L1 while it is
 *                     reused by every row chunk of the block;
 *   bq <= 64 rows     query rows per block, as many as let the score block
 *                     (n_kv x bq floats) fit SCORE_BUDGET = 512 KiB (half of
 *                     a 1 MiB L2), so it stays in L2 across the three
 *                     passes; more rows reuse each K/V tile more (n = 4096,
 *                     d = 64, 1 thread: 22.1 / 23.8 / 24.4 GFLOP/s at 16 /
 *                     32 / 64 rows). Long sequences fall back to fewer rows
 *                     (down to NR), so the workspace only runs out
 *                     (ATTN_ENOMEM) when n_kv x 8 floats per thread exceed
 *                     the limit.
 *
 * Causal: a block reads only the keys its last row sees; pass 2 and 3 use
 * exactly the keys each row sees, so masked V rows are never multiplied
 * (0·NaN would poison the row). Threads: OpenMP over batch x heads x query
 * blocks, static round-robin; each output row is computed by one thread in
 * a fixed order, so results do not depend on the thread count at all. */
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <string.h>

#include "variant.h"

enum {
    MR = 4,
    NR = 8,
    KEY_TILE = 64,
    BQ_MAX = 64,
    SCORE_BUDGET = 512 * 1024,
};

_Static_assert(MR == 4, "tile_full spells out four rows");

/* Query rows per block for this problem: a multiple of NR in [NR, BQ_MAX]. */
static int32_t block_rows(const attn_shape *s)
{
    size_t rows = SCORE_BUDGET / (sizeof(float) * (size_t)s->n_kv);
    rows = rows / NR * NR;
    if (rows < NR)
        rows = NR;
    if (rows > BQ_MAX)
        rows = BQ_MAX;
    return (int32_t)rows;
}

/* Per-thread workspace layout, in floats. */
typedef struct block_layout {
    size_t qt, scores, max, sum, total;
} block_layout;

static int layout(const attn_shape *s, int32_t bq, block_layout *l)
{
    size_t scores;
    if (__builtin_mul_overflow((size_t)s->n_kv, (size_t)bq, &scores))
        return -1;
    l->qt = 0;
    l->scores = l->qt + attn_line_floats((size_t)s->d_k * bq);
    l->max = l->scores + attn_line_floats(scores);
    l->sum = l->max + attn_line_floats((size_t)bq);
    l->total = l->sum + attn_line_floats((size_t)bq);
    return l->total < scores ? -1 : 0;
}

static int blocked_workspace(const attn_problem *p, size_t *bytes)
{
    attn_problem f = attn_fold_decode_heads(p);
    block_layout l;
    if (layout(&f.shape, block_rows(&f.shape), &l) ||
        __builtin_mul_overflow(l.total, sizeof(float), bytes) ||
        __builtin_mul_overflow(*bytes, (size_t)p->threads, bytes))
        return ATTN_ENOMEM;
    return ATTN_OK;
}

/* C[MR][NR] += A·B over kc steps: A(r, k) = a[r·a_rs + k·a_ks] (broadcast),
 * B row k = b + k·ldb (NR contiguous floats), C row r = c + r·ldc. The sum
 * over k runs in order for every element, as a plain dot product would.
 * Spelled out for MR = 4 with `omp simd` on the column loop: left to itself,
 * GCC vectorises across k instead and shuffles every step (2.2x slower). */
static void tile_full(int32_t kc, const float *restrict a, ptrdiff_t a_rs, ptrdiff_t a_ks,
                      const float *restrict b, ptrdiff_t ldb, float *restrict c, ptrdiff_t ldc)
{
    float acc[MR][NR];
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR; j++)
            acc[r][j] = c[r * ldc + j];
#pragma GCC unroll 1
    for (int32_t k = 0; k < kc; k++) {
        const float *restrict bk = b + k * ldb;
        const float *ak = a + k * a_ks;
        float a0 = ak[0], a1 = ak[a_rs], a2 = ak[2 * a_rs], a3 = ak[3 * a_rs];
#pragma omp simd
        for (int j = 0; j < NR; j++) {
            float bj = bk[j];
            acc[0][j] += a0 * bj;
            acc[1][j] += a1 * bj;
            acc[2][j] += a2 * bj;
            acc[3][j] += a3 * bj;
        }
    }
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < NR; j++)
            c[r * ldc + j] = acc[r][j];
}

/* The same for an m x n edge tile (m <= MR, n <= NR). */
static void tile_edge(int32_t m, int32_t n, int32_t kc, const float *restrict a, ptrdiff_t a_rs,
                      ptrdiff_t a_ks, const float *restrict b, ptrdiff_t ldb, float *restrict c,
                      ptrdiff_t ldc)
{
    for (int32_t r = 0; r < m; r++)
        for (int32_t j = 0; j < n; j++) {
            float acc = c[r * ldc + j];
            for (int32_t k = 0; k < kc; k++)
                acc += a[r * a_rs + k * a_ks] * b[k * ldb + j];
            c[r * ldc + j] = acc;
        }
}

/* C[m][n] += A·B for any m, n: full register tiles plus edges. */
static void tile_gemm(int32_t m, int32_t n, int32_t kc, const float *a, ptrdiff_t a_rs,
                      ptrdiff_t a_ks, const float *b, ptrdiff_t ldb, float *c, ptrdiff_t ldc)
{
    if (kc <= 0)
        return;
    int32_t r = 0;
    for (; r + MR <= m; r += MR) {
        int32_t j = 0;
        for (; j + NR <= n; j += NR)
            tile_full(kc, a + r * a_rs, a_rs, a_ks, b + j, ldb, c + r * ldc + j, ldc);
        if (j < n)
            tile_edge(MR, n - j, kc, a + r * a_rs, a_rs, a_ks, b + j, ldb, c + r * ldc + j, ldc);
    }
    if (r < m)
        tile_edge(m - r, n, kc, a + r * a_rs, a_rs, a_ks, b, ldb, c + r * ldc, ldc);
}

/* One query block: rows i0 .. i0+nr-1 of one head, every one seeing >= 1
 * key; its scores and packed queries have a row stride of bq (>= nr). */
typedef attn_row_block block_job;

/* The first block row that sees key j. */
static int32_t first_row_seeing(const block_job *jb, int32_t j)
{
    const attn_shape *s = &jb->p->shape;
    if (!s->causal)
        return 0;
    int64_t r = (int64_t)j - ((int64_t)s->n_kv - s->n_q) - jb->i0;
    return r < 0 ? 0 : (int32_t)r;
}

static void scores_pass(const block_job *jb, int32_t bq, float *qt, float *sc, int32_t n_keys)
{
    const attn_shape *s = &jb->p->shape;
    int32_t d_k = s->d_k, nr = jb->nr;
    for (int32_t r = 0; r < nr; r++)
        for (int32_t t = 0; t < d_k; t++)
            qt[(size_t)t * bq + r] = jb->q[(size_t)r * d_k + t];
    for (int32_t j0 = 0; j0 < n_keys; j0 += KEY_TILE) {
        int32_t nk = n_keys - j0 < KEY_TILE ? n_keys - j0 : KEY_TILE;
        float *st = sc + (size_t)j0 * bq;
        memset(st, 0, sizeof(float) * (size_t)nk * bq);
        for (int32_t c0 = 0; c0 < nr; c0 += NR) {
            int32_t nc = nr - c0 < NR ? nr - c0 : NR;
            /* rows: keys (broadcast from K in place); columns: query rows */
            tile_gemm(nk, nc, d_k, jb->k + (size_t)j0 * d_k, d_k, 1, qt + c0, bq, st + c0, bq);
        }
    }
}

/* Pass 2: scale, row max, p = expf(s - max), row sums — in key order. */
static void softmax_pass(const block_job *jb, int32_t bq, float *sc, float *mx, float *sum,
                         int32_t n_keys)
{
    int32_t nr = jb->nr;
    float scale = jb->p->scale;
    for (int32_t r = 0; r < nr; r++) {
        mx[r] = -INFINITY;
        sum[r] = 0.0f;
    }
    for (int32_t j = 0; j < n_keys; j++) {
        float *restrict row = sc + (size_t)j * bq;
        /* A NaN score leaves the max alone and reaches the sum via expf. */
        for (int32_t r = first_row_seeing(jb, j); r < nr; r++) {
            float t = row[r] * scale;
            row[r] = t;
            mx[r] = t > mx[r] ? t : mx[r];
        }
    }
    for (int32_t j = 0; j < n_keys; j++) {
        float *restrict row = sc + (size_t)j * bq;
        for (int32_t r = first_row_seeing(jb, j); r < nr; r++) {
            float e = expf(row[r] - mx[r]);
            row[r] = e;
            sum[r] += e;
        }
    }
}

/* Pass 3: O = P·V over exactly the keys each row sees, then / sum. */
static void output_pass(const block_job *jb, int32_t bq, const float *sc, const float *sum,
                        int32_t n_keys)
{
    const attn_shape *s = &jb->p->shape;
    int32_t d_v = s->d_v, nr = jb->nr;
    memset(jb->o, 0, sizeof(float) * (size_t)nr * d_v);
    /* Key tile outer, so a V tile stays in L1 while every row group uses it;
     * a group of MR rows takes the keys its first row sees ... */
    for (int32_t j0 = 0; j0 < n_keys; j0 += KEY_TILE) {
        for (int32_t r0 = 0; r0 < nr; r0 += MR) {
            int32_t mr = nr - r0 < MR ? nr - r0 : MR;
            int32_t common = attn_row_block_seen(jb, r0);
            int32_t end = common < j0 + KEY_TILE ? common : j0 + KEY_TILE;
            /* A(r, k) = P[j0 + k][r0 + r]: broadcast; B = V rows in place. */
            tile_gemm(mr, d_v, end - j0, sc + (size_t)j0 * bq + r0, 1, bq, jb->v + (size_t)j0 * d_v,
                      d_v, jb->o + (size_t)r0 * d_v, d_v);
        }
    }
    /* ... and its other rows add the few keys beyond that, one by one. */
    for (int32_t r0 = 0; r0 < nr; r0 += MR) {
        int32_t mr = nr - r0 < MR ? nr - r0 : MR;
        int32_t common = attn_row_block_seen(jb, r0);
        for (int32_t r = r0 + 1; r < r0 + mr; r++)
            tile_gemm(1, d_v, attn_row_block_seen(jb, r) - common, sc + (size_t)common * bq + r, 1,
                      bq, jb->v + (size_t)common * d_v, d_v, jb->o + (size_t)r * d_v, d_v);
    }
    for (int32_t r = 0; r < nr; r++) {
        float *restrict out = jb->o + (size_t)r * d_v;
        float l = sum[r];
        for (int32_t c = 0; c < d_v; c++)
            out[c] = out[c] / l;
    }
}

/* Item it of the run: one query block of bq rows (the last of a head may
 * have fewer) of one head, on workspace ws. */
static void run_item(const attn_problem *p, const block_layout *l, int64_t it, int64_t blocks,
                     int32_t first, int32_t bq, float *ws)
{
    const block_job jb = attn_row_block_at(p, it, blocks, first, bq);
    int32_t n_keys = attn_row_block_seen(&jb, jb.nr - 1); /* the block's last row sees the most */
    scores_pass(&jb, bq, ws + l->qt, ws + l->scores, n_keys);
    softmax_pass(&jb, bq, ws + l->scores, ws + l->max, ws + l->sum, n_keys);
    output_pass(&jb, bq, ws + l->scores, ws + l->sum, n_keys);
}

static int blocked_run(const attn_problem *p_in, void *workspace)
{
    attn_problem f = attn_fold_decode_heads(p_in);
    const attn_problem *p = &f;
    const attn_shape *s = &p->shape;
    int32_t bq = block_rows(s);
    block_layout l;
    if (layout(s, bq, &l))
        return ATTN_ENOMEM;
    /* Bottom-right causal with n_q > n_kv: the first rows see no key. */
    const int32_t first = attn_first_seeing_row(s);
    int64_t blocks = ((int64_t)s->n_q - first + bq - 1) / bq;
    int64_t heads = (int64_t)s->batch * s->heads_q;
    int64_t items = heads * blocks;

    /* No more threads than items, and no team for one (as flash_run): a
     * libgomp team allocates and frees its descriptor and ends with a futex
     * syscall, even a team of one. */
    const int team = items < p->threads ? (int)items : p->threads;
    if (team <= 1) {
        attn_zero_rows_before(p, first);
        for (int64_t it = 0; it < items; it++)
            run_item(p, &l, it, blocks, first, bq, workspace);
        return ATTN_OK;
    }
#pragma omp parallel num_threads(team)
    {
        float *ws = (float *)workspace + (size_t)omp_get_thread_num() * l.total;
        attn_zero_rows_before(p, first);
        /* Round-robin: causal blocks grow in cost along the sequence. */
#pragma omp for schedule(static, 1)
        for (int64_t it = 0; it < items; it++)
            run_item(p, &l, it, blocks, first, bq, ws);
    }
    return ATTN_OK;
}

const attn_variant attn_variant_blocked = {
    .name = "blocked",
    .required_features = 0,
    .description = "cache-blocked plain C: query block's score rows in L2, two-pass softmax",
    .family = ATTN_FAMILY_TWO_PASS,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 1, /* glibc expf: < 1 ulp */
    .tiles = {.keys = KEY_TILE, .rows = BQ_MAX, .reg_rows = MR, .reg_cols = NR},
    .workspace_size = blocked_workspace,
    .run = blocked_run,
};
