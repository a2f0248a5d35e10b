/* avx2 — online softmax (FlashAttention-2 forward) with AVX2+FMA
 * intrinsics. Same plan as flash_avx512.c (rows are vector lanes; per key
 * block: Q·Kᵀ register tiles with mask and row max fused into the store,
 * exp(S·scale - m) in place, then P·V register tiles with alpha applied on
 * load),
 * fitted to 16 ymm registers and no mask registers:
 *   - the register tiles cover at most 2 row vectors (16 rows) at a time
 *     and a tile of up to 4 row vectors is walked in groups of 2;
 *   - the causal mask is a blend: -inf into masked scores, and in P·V the
 *     FMA result is blended back only into the rows that see the key (so a
 *     hidden NaN/Inf V row never reaches a row as 0·v). */
#include <immintrin.h>
#include <math.h>

#include "cpu_features.h"
#include "flash_driver.h"
#include "simd_avx2.h"

/* 8 lanes; up to 4 row vectors = 32 rows per tile, so each K/V element from
 * L2/L3 feeds 32 query rows. Register tiles of 12 accumulators: RT = 6 keys
 * x 2 row vectors for Q·Kᵀ and RC = 6 columns x 2 row vectors for P·V, plus
 * 2 operand vectors and one broadcast (AVX2 FMA cannot broadcast from
 * memory): 15 of 16 ymm. With one row vector, 8 keys or 12 columns. 64 keys
 * per block: the block's scores (64 x 32 floats = 8 KiB) and the queries
 * (d_k x 32 floats, 16 KiB at d_k = 128) stay in L1 (32-48 KiB). */
enum { LANES = 8, MAX_VECTORS = 4, GROUP = 2, KV_BLOCK = 64, MAX_RT = 8, MAX_RC = 12 };

static const flash_geometry avx2_geometry = {
    .lanes = LANES,
    .max_rows = LANES * MAX_VECTORS,
    .kv_block = KV_BLOCK,
};

static inline int keys_per_tile(int ng)
{
    return ng == 2 ? 6 : 8;
}

static inline int cols_per_tile(int ng)
{
    return ng == 2 ? 6 : 12;
}

static inline int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* A run of cache lines to prefetch into L2, one per step of an inner loop
 * (see fold_block). */
typedef struct prefetch_run {
    const char *at;
    int32_t lines;
} prefetch_run;

static inline prefetch_run prefetch_rows(const float *first, int32_t n_rows, int32_t d)
{
    int64_t floats = n_rows > 0 ? (int64_t)n_rows * d : 0;
    return (prefetch_run){(const char *)first, (int32_t)((floats + 15) / 16)};
}

FLASH_INLINE void prefetch_step(prefetch_run *r)
{
    if (r->lines > 0) {
        _mm_prefetch(r->at, _MM_HINT_T1);
        r->at += 64;
        r->lines--;
    }
}

/* All-ones in the lanes (rows) that see key j. */
static inline __m256 sees(__m256i seen, int32_t j)
{
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(seen, _mm256_set1_epi32(j)));
}

/* Unscaled scores q_r · k_j of row vectors [v0, v0 + ng) for the block,
 * -inf where the row does not see the key; folds the block's row max of
 * score·scale into bmax (NaN scores skipped: VMAXPS returns its second
 * operand when either is NaN). The softmax applies scale and shift in one
 * FMA, as flash_avx512.c does. */
FLASH_INLINE void group_scores(const flash_tile *t, int32_t j0, int32_t nb, int v0, const int ng,
                               const int masked, __m256 *bmax, prefetch_run *pf)
{
    const int rt = keys_per_tile(ng);
    const int32_t rows = t->rows, d_k = t->d_k;
    const __m256 scale = _mm256_set1_ps(t->scale), minus_inf = _mm256_set1_ps(-INFINITY);
    __m256i seen[GROUP];
    for (int v = 0; v < ng; v++)
        seen[v] = masked ? _mm256_load_si256((const __m256i *)(t->seen + LANES * (v0 + v)))
                         : _mm256_setzero_si256();
    for (int32_t jj = 0; jj < nb; jj += rt) {
        /* A short last group repeats its last key: reads stay inside the
         * block, the extra results are dropped. */
        const float *k[MAX_RT];
        for (int i = 0; i < rt; i++)
            k[i] = t->k + (size_t)(j0 + min32(jj + i, nb - 1)) * d_k;
        __m256 acc[MAX_RT][GROUP];
        for (int i = 0; i < rt; i++)
            for (int v = 0; v < ng; v++)
                acc[i][v] = _mm256_setzero_ps();
        const float *q = t->qt + LANES * v0;
        for (int32_t c = 0; c < d_k; c++, q += rows) {
            prefetch_step(pf);
            __m256 qv[GROUP];
            for (int v = 0; v < ng; v++)
                qv[v] = _mm256_load_ps(q + LANES * v);
            for (int i = 0; i < rt; i++) {
                __m256 kb = _mm256_broadcast_ss(k[i] + c);
                for (int v = 0; v < ng; v++)
                    acc[i][v] = _mm256_fmadd_ps(qv[v], kb, acc[i][v]);
            }
        }
        for (int i = 0; i < rt && jj + i < nb; i++) {
            float *s = t->scores + (size_t)(jj + i) * rows + LANES * v0;
            for (int v = 0; v < ng; v++) {
                __m256 x = acc[i][v];
                if (masked)
                    x = _mm256_blendv_ps(minus_inf, x, sees(seen[v], j0 + jj + i));
                bmax[v0 + v] = _mm256_max_ps(_mm256_mul_ps(x, scale), bmax[v0 + v]);
                _mm256_store_ps(s + LANES * v, x);
            }
        }
    }
}

FLASH_INLINE void block_scores(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                               const int masked, __m256 *bmax, prefetch_run *pf)
{
    for (int v = 0; v < nv; v++)
        bmax[v] = _mm256_set1_ps(-INFINITY);
    int v0 = 0;
    for (; v0 + GROUP <= nv; v0 += GROUP)
        group_scores(t, j0, nb, v0, GROUP, masked, bmax, pf);
    if (v0 < nv)
        group_scores(t, j0, nb, v0, 1, masked, bmax, pf);
}

/* Scores to weights in place; updates m and l, sets alpha = exp(m - m').
 * Returns nonzero when some row's max moved (alpha != 1). */
FLASH_INLINE int block_softmax(const flash_tile *t, int32_t nb, const int nv, const __m256 *bmax,
                               __m256 *alpha)
{
    const int32_t rows = t->rows;
    const __m256 minus_inf = _mm256_set1_ps(-INFINITY), one = _mm256_set1_ps(1.0f);
    const __m256 scale = _mm256_set1_ps(t->scale);
    __m256 shift[MAX_VECTORS], sum[MAX_VECTORS];
    int moved = 0;
    for (int v = 0; v < nv; v++) {
        __m256 m = _mm256_load_ps(t->m + LANES * v);
        __m256 m_new = _mm256_max_ps(bmax[v], m);
        /* A row that has seen nothing yet shifts by 0: exp(-inf - 0) = 0. */
        shift[v] = _mm256_andnot_ps(_mm256_cmp_ps(m_new, minus_inf, _CMP_EQ_OQ), m_new);
        alpha[v] = attn_exp_avx2(_mm256_sub_ps(m, shift[v]));
        moved |= _mm256_movemask_ps(_mm256_cmp_ps(alpha[v], one, _CMP_NEQ_UQ));
        _mm256_store_ps(t->m + LANES * v, m_new);
        sum[v] = _mm256_setzero_ps();
    }
    float *s = t->scores;
    for (int32_t j = 0; j < nb; j++, s += rows)
        for (int v = 0; v < nv; v++) {
            __m256 p =
                attn_exp_avx2(_mm256_fmsub_ps(_mm256_load_ps(s + LANES * v), scale, shift[v]));
            sum[v] = _mm256_add_ps(sum[v], p);
            _mm256_store_ps(s + LANES * v, p);
        }
    for (int v = 0; v < nv; v++)
        _mm256_store_ps(t->l + LANES * v,
                        _mm256_fmadd_ps(_mm256_load_ps(t->l + LANES * v), alpha[v], sum[v]));
    return moved != 0;
}

/* acc[c][r] for columns [c0, c0 + cols), cols <= RC, rows of vectors
 * [v0, v0 + ng): alpha, then the block's weighted V rows. With cols < RC the
 * last column is repeated; both copies compute and store the same value. */
FLASH_INLINE void group_accumulate(const flash_tile *t, int32_t j0, int32_t nb, int32_t c0,
                                   const int cols, int v0, const int ng, const int masked,
                                   const __m256 *alpha, int rescale, prefetch_run *pf)
{
    const int rc = cols_per_tile(ng);
    const int32_t rows = t->rows, d_v = t->d_v;
    __m256i seen[GROUP];
    __m256 a[MAX_RC][GROUP];
    for (int v = 0; v < ng; v++)
        seen[v] = masked ? _mm256_load_si256((const __m256i *)(t->seen + LANES * (v0 + v)))
                         : _mm256_setzero_si256();
    for (int i = 0; i < rc; i++) {
        const float *src = t->acc + (size_t)(c0 + (i < cols ? i : cols - 1)) * rows + LANES * v0;
        for (int v = 0; v < ng; v++) {
            a[i][v] = _mm256_load_ps(src + LANES * v);
            if (rescale)
                a[i][v] = _mm256_mul_ps(a[i][v], alpha[v0 + v]);
        }
    }
    const float *vr = t->v + (size_t)j0 * d_v + c0;
    const float *p = t->scores + LANES * v0;
    for (int32_t j = 0; j < nb; j++, vr += d_v, p += rows) {
        prefetch_step(pf);
        __m256 pv[GROUP], vis[GROUP];
        for (int v = 0; v < ng; v++) {
            pv[v] = _mm256_load_ps(p + LANES * v);
            vis[v] = masked ? sees(seen[v], j0 + j) : _mm256_setzero_ps();
        }
        for (int i = 0; i < rc; i++) {
            __m256 b = _mm256_broadcast_ss(vr + (i < cols ? i : cols - 1));
            for (int v = 0; v < ng; v++) {
                __m256 f = _mm256_fmadd_ps(pv[v], b, a[i][v]);
                a[i][v] = masked ? _mm256_blendv_ps(a[i][v], f, vis[v]) : f;
            }
        }
    }
    for (int i = 0; i < rc; i++) {
        float *dst = t->acc + (size_t)(c0 + (i < cols ? i : cols - 1)) * rows + LANES * v0;
        for (int v = 0; v < ng; v++)
            _mm256_store_ps(dst + LANES * v, a[i][v]);
    }
}

FLASH_INLINE void group_columns(const flash_tile *t, int32_t j0, int32_t nb, int v0, const int ng,
                                const int masked, const __m256 *alpha, int rescale,
                                prefetch_run *pf)
{
    const int rc = cols_per_tile(ng);
    int32_t c0 = 0;
    for (; c0 + rc <= t->d_v; c0 += rc)
        group_accumulate(t, j0, nb, c0, rc, v0, ng, masked, alpha, rescale, pf);
    if (c0 < t->d_v)
        group_accumulate(t, j0, nb, c0, t->d_v - c0, v0, ng, masked, alpha, rescale, pf);
}

FLASH_INLINE void fold_block(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                             const int masked)
{
    __m256 bmax[MAX_VECTORS], alpha[MAX_VECTORS];
    /* As in flash_avx512.c: the block's V is fetched into L2 during its
     * Q·Kᵀ, the next block's K during this P·V, one line per inner step. */
    prefetch_run pv = prefetch_rows(t->v + (size_t)j0 * t->d_v, nb, t->d_v);
    int32_t j1 = j0 + nb;
    prefetch_run pk =
        prefetch_rows(t->k + (size_t)j1 * t->d_k, min32(t->kv_block, t->kv_end - j1), t->d_k);
    block_scores(t, j0, nb, nv, masked, bmax, &pv);
    int rescale = block_softmax(t, nb, nv, bmax, alpha);
    int v0 = 0;
    for (; v0 + GROUP <= nv; v0 += GROUP)
        group_columns(t, j0, nb, v0, GROUP, masked, alpha, rescale, &pk);
    if (v0 < nv)
        group_columns(t, j0, nb, v0, 1, masked, alpha, rescale, &pk);
}

/* Blocks every row sees in full take the unmasked path; the causal
 * diagonal and tiles with rows that see fewer keys take the masked one. */
FLASH_INLINE void fold_blocks(const flash_tile *t, const int nv)
{
    for (int32_t j0 = t->kv_begin; j0 < t->kv_end; j0 += t->kv_block) {
        int32_t nb = min32(t->kv_block, t->kv_end - j0);
        if (t->seen_min >= j0 + nb)
            fold_block(t, j0, nb, nv, 0);
        else
            fold_block(t, j0, nb, nv, 1);
    }
}

static void kernel_1(const flash_tile *t)
{
    fold_blocks(t, 1);
}
static void kernel_2(const flash_tile *t)
{
    fold_blocks(t, 2);
}
static void kernel_3(const flash_tile *t)
{
    fold_blocks(t, 3);
}
static void kernel_4(const flash_tile *t)
{
    fold_blocks(t, 4);
}

static void avx2_kernel(const flash_tile *t)
{
    switch (t->rows / LANES) {
    case 1:
        kernel_1(t);
        break;
    case 2:
        kernel_2(t);
        break;
    case 3:
        kernel_3(t);
        break;
    default:
        kernel_4(t);
        break;
    }
}

void attn_exp_avx2_array(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        _mm256_storeu_ps(y + i, attn_exp_avx2(_mm256_loadu_ps(x + i)));
    if (i < n) {
        __m256i tail = attn_tail_mask_avx2((int)(n - i));
        _mm256_maskstore_ps(y + i, tail, attn_exp_avx2(_mm256_maskload_ps(x + i, tail)));
    }
}

static int avx2_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &avx2_geometry, bytes);
}

static int avx2_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &avx2_geometry, avx2_kernel, workspace);
}

const attn_variant attn_variant_avx2 = {
    .name = "avx2",
    .required_features = ATTN_CPU_AVX2 | ATTN_CPU_FMA, /* flash_avx2.c: -mavx2 -mfma */
    .description = "flash-attention-2 online softmax, AVX2+FMA; query rows as vector lanes",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 1, /* attn_exp_avx2: 0.765 ulp (tests/test_exp --all) */
    .tiles = {.keys = KV_BLOCK,
              .rows = LANES * MAX_VECTORS,
              .lanes = LANES,
              .reg_keys = 6,
              .reg_cols = 6},
    .workspace_size = avx2_workspace,
    .run = avx2_run,
};
