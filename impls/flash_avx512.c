/* avx512 — online softmax (FlashAttention-2 forward) with AVX-512F
 * intrinsics. The driver (flash_driver.h) makes a tile's query rows the
 * vector lanes: queries packed transposed, qt[t][r], state m[r], l[r],
 * acc[c][r]. Then, per key block:
 *   scores  S[j][r] = (Σ_t qt[t][r]·k[j][t])·scale — register tile of RT keys
 *           x NV row vectors, K rows broadcast straight from the K tensor
 *           (no K packing: the queries were packed once per tile instead);
 *           the causal mask (k-mask) and the block's row max of S·scale
 *           fused into the tile's store;
 *   softmax p = exp(S·scale - m') in place, the scale and the shift one FMA
 *           (one rounding fewer than scaling first: the score error, which
 *           dominates when logits are huge, is smaller than naive's on
 *           average), row sums, alpha = exp(m - m');
 *   P·V     acc[c][r] = acc[c][r]·alpha[r] + Σ_j p[j][r]·v[j][c] — register
 *           tile of RC columns x NV row vectors, V broadcast from the V
 *           tensor, alpha applied as the tile is loaded and only when some
 *           row's max moved; in masked blocks vfmadd with a k-mask leaves the
 *           rows that do not see key j untouched (no 0·NaN).
 * Every reduction is vertical (over keys, per lane), so there is no
 * horizontal add or max anywhere. Needs AVX512F only (plus FMA, which every
 * AVX-512 CPU has and the file is compiled with). */
#include <immintrin.h>
#include <math.h>

#include "cpu_features.h"
#include "flash_driver.h"
#include "simd_avx512.h"

/* 16 lanes; up to 4 row vectors = 64 rows per tile, so each K/V element
 * fetched from L2/L3 feeds 64 query rows. Register tiles of 24 accumulators
 * (of 32 zmm): RT keys x NV row vectors for Q·Kᵀ, RC columns x NV for P·V,
 * which leaves room for the NV operand vectors; broadcasts come from memory.
 * 48 keys per block: a whole number of key groups for both RT = 6 (four row
 * vectors) and RT = 8 (64 keys wasted 2 of 66 key slots per block), and the
 * block's scores, 48 x 64 floats = 12 KiB, stay in L1 (48 KiB on Sapphire
 * Rapids) through the softmax and the d_v/RC passes of P·V; the queries,
 * d_k x 64 floats (32 KiB at d_k = 128), are reread by every key group of the
 * Q·Kᵀ pass from L1/L2. Measured against 64 keys (1 thread, n = 4096, 8
 * heads): 1.02-1.07x at d = 128; 32 keys was 0.98x, 96 keys 1.02-1.04x. */
enum { LANES = 16, MAX_VECTORS = 4, KV_BLOCK = 48, MAX_RT = 8, MAX_RC = 16 };

static void avx512_few_kernel(const flash_tile *t);

static const flash_geometry avx512_geometry = {
    .lanes = LANES,
    .max_rows = LANES * MAX_VECTORS,
    .kv_block = KV_BLOCK,
    .few_rows = 8, /* FEW_ROWS */
    .few_kernel = avx512_few_kernel,
};

/* Keys per Q·Kᵀ register tile; more than 8 would need more key pointers than
 * there are general registers. */
static inline int keys_per_tile(int nv)
{
    return nv == 4 ? 6 : 8;
}

/* Columns per P·V register tile: 24 accumulators, 16 for one row vector. */
static inline int cols_per_tile(int nv)
{
    return nv == 4 ? 6 : nv == 3 ? 8 : nv == 2 ? 12 : 16;
}

static inline int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* A run of cache lines to prefetch into L2, one per step of an inner loop. */
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

/* Lanes (rows) that see key j. */
static inline __mmask16 sees(__m512i seen, int32_t j)
{
    return _mm512_cmpgt_epi32_mask(seen, _mm512_set1_epi32(j));
}

/* scores[j][r] = q_r · k_j for the block (unscaled), -inf where row r does
 * not see key j; bmax[v] gets the block's max of score·scale per row (NaN
 * scores skipped: VMAXPS returns its second operand when either is NaN). */
FLASH_INLINE void block_scores(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                               const int masked, __m512 *bmax, prefetch_run *pf)
{
    const int rt = keys_per_tile(nv);
    const int32_t rows = t->rows, d_k = t->d_k;
    const __m512 scale = _mm512_set1_ps(t->scale);
    __m512i seen[MAX_VECTORS];
    for (int v = 0; v < nv; v++) {
        seen[v] = masked ? _mm512_load_si512(t->seen + LANES * v) : _mm512_setzero_si512();
        bmax[v] = _mm512_set1_ps(-INFINITY);
    }
    for (int32_t jj = 0; jj < nb; jj += rt) {
        /* A short last group repeats its last key: reads stay inside the
         * block, the extra results are dropped. */
        const float *k[MAX_RT];
        for (int i = 0; i < rt; i++)
            k[i] = t->k + (size_t)(j0 + min32(jj + i, nb - 1)) * d_k;
        __m512 acc[MAX_RT][MAX_VECTORS];
        for (int i = 0; i < rt; i++)
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm512_setzero_ps();
        const float *q = t->qt;
        for (int32_t c = 0; c < d_k; c++, q += rows) {
            prefetch_step(pf);
            __m512 qv[MAX_VECTORS];
            for (int v = 0; v < nv; v++)
                qv[v] = _mm512_load_ps(q + LANES * v);
            for (int i = 0; i < rt; i++) {
                __m512 kb = _mm512_set1_ps(k[i][c]);
                for (int v = 0; v < nv; v++)
                    acc[i][v] = _mm512_fmadd_ps(qv[v], kb, acc[i][v]);
            }
        }
        for (int i = 0; i < rt && jj + i < nb; i++) {
            float *s = t->scores + (size_t)(jj + i) * rows;
            for (int v = 0; v < nv; v++) {
                __m512 x = acc[i][v];
                if (masked)
                    x = _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), sees(seen[v], j0 + jj + i),
                                           x);
                bmax[v] = _mm512_max_ps(_mm512_mul_ps(x, scale), bmax[v]);
                _mm512_store_ps(s + LANES * v, x);
            }
        }
    }
}

/* Scores to weights in place; updates m and l, sets alpha = exp(m - m').
 * Returns nonzero when some row's max moved (alpha != 1). */
FLASH_INLINE int block_softmax(const flash_tile *t, int32_t nb, const int nv, const __m512 *bmax,
                               __m512 *alpha)
{
    const int32_t rows = t->rows;
    const __m512 minus_inf = _mm512_set1_ps(-INFINITY);
    const __m512 scale = _mm512_set1_ps(t->scale);
    __m512 shift[MAX_VECTORS], sum[MAX_VECTORS];
    __mmask16 moved = 0;
    for (int v = 0; v < nv; v++) {
        __m512 m = _mm512_load_ps(t->m + LANES * v);
        __m512 m_new = _mm512_max_ps(bmax[v], m);
        /* A row that has seen nothing yet shifts by 0: exp(-inf - 0) = 0. */
        shift[v] = _mm512_mask_mov_ps(m_new, _mm512_cmp_ps_mask(m_new, minus_inf, _CMP_EQ_OQ),
                                      _mm512_setzero_ps());
        alpha[v] = attn_exp_avx512(_mm512_sub_ps(m, shift[v]));
        moved |= _mm512_cmp_ps_mask(alpha[v], _mm512_set1_ps(1.0f), _CMP_NEQ_UQ);
        _mm512_store_ps(t->m + LANES * v, m_new);
        sum[v] = _mm512_setzero_ps();
    }
    float *s = t->scores;
    for (int32_t j = 0; j < nb; j++, s += rows)
        for (int v = 0; v < nv; v++) {
            __m512 p =
                attn_exp_avx512(_mm512_fmsub_ps(_mm512_load_ps(s + LANES * v), scale, shift[v]));
            sum[v] = _mm512_add_ps(sum[v], p);
            _mm512_store_ps(s + LANES * v, p);
        }
    for (int v = 0; v < nv; v++)
        _mm512_store_ps(t->l + LANES * v,
                        _mm512_fmadd_ps(_mm512_load_ps(t->l + LANES * v), alpha[v], sum[v]));
    return moved != 0;
}

/* acc[c][r] for columns [c0, c0 + rc): alpha, then the block's weighted V
 * rows. rc is a compile-time constant in every copy, so the rc x nv tile
 * lives in registers. */
FLASH_INLINE void block_accumulate(const flash_tile *t, int32_t j0, int32_t nb, int32_t c0,
                                   const int rc, const int nv, const int masked,
                                   const __m512 *alpha, int rescale, prefetch_run *pf)
{
    const int32_t rows = t->rows, d_v = t->d_v;
    __m512i seen[MAX_VECTORS];
    __m512 a[MAX_RC][MAX_VECTORS];
    for (int v = 0; v < nv; v++)
        seen[v] = masked ? _mm512_load_si512(t->seen + LANES * v) : _mm512_setzero_si512();
    for (int i = 0; i < rc; i++) {
        const float *src = t->acc + (size_t)(c0 + i) * rows;
        for (int v = 0; v < nv; v++) {
            a[i][v] = _mm512_load_ps(src + LANES * v);
            if (rescale)
                a[i][v] = _mm512_mul_ps(a[i][v], alpha[v]);
        }
    }
    const float *vr = t->v + (size_t)j0 * d_v + c0;
    const float *p = t->scores;
    for (int32_t j = 0; j < nb; j++, vr += d_v, p += rows) {
        prefetch_step(pf);
        __m512 pv[MAX_VECTORS];
        __mmask16 vis[MAX_VECTORS];
        for (int v = 0; v < nv; v++) {
            pv[v] = _mm512_load_ps(p + LANES * v);
            vis[v] = masked ? sees(seen[v], j0 + j) : (__mmask16)0xffff;
        }
        for (int i = 0; i < rc; i++) {
            __m512 b = _mm512_set1_ps(vr[i]);
            for (int v = 0; v < nv; v++)
                a[i][v] = masked ? _mm512_mask3_fmadd_ps(pv[v], b, a[i][v], vis[v])
                                 : _mm512_fmadd_ps(pv[v], b, a[i][v]);
        }
    }
    for (int i = 0; i < rc; i++) {
        float *dst = t->acc + (size_t)(c0 + i) * rows;
        for (int v = 0; v < nv; v++)
            _mm512_store_ps(dst + LANES * v, a[i][v]);
    }
}

FLASH_INLINE void fold_block(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                             const int masked)
{
    const int rc = cols_per_tile(nv);
    __m512 bmax[MAX_VECTORS], alpha[MAX_VECTORS];
    /* A head's K and V (4 MiB at n_kv = 4096, d = 128) outgrow L2, so every
     * tile rereads them from L3, and the hardware prefetchers, which see K
     * read 6 rows at a time and V 48 rows at a time in short slices, leave
     * the FMAs waiting: the block's V is fetched into L2 during its Q·Kᵀ,
     * the next block's K during this P·V, one line per inner-loop step.
     * Measured (1 thread, n = 4096, 4 heads): 1.09x at d = 128 (157 -> 172
     * GFLOP/s), 1.04x at d = 64; into L1 instead of L2 was no better. */
    prefetch_run pv = prefetch_rows(t->v + (size_t)j0 * t->d_v, nb, t->d_v);
    int32_t j1 = j0 + nb;
    prefetch_run pk =
        prefetch_rows(t->k + (size_t)j1 * t->d_k, min32(t->kv_block, t->kv_end - j1), t->d_k);
    block_scores(t, j0, nb, nv, masked, bmax, &pv);
    int rescale = block_softmax(t, nb, nv, bmax, alpha);
    int32_t c0 = 0;
    for (; c0 + rc <= t->d_v; c0 += rc)
        block_accumulate(t, j0, nb, c0, rc, nv, masked, alpha, rescale, &pk);
    /* The last d_v mod rc columns in narrower tiles (4, 2, 1) rather than a
     * full tile with repeated columns: at d_v = 128 and rc = 6 that was 4
     * wasted columns of 132 (3% of P.V). */
    for (; c0 + 4 <= t->d_v; c0 += 4)
        block_accumulate(t, j0, nb, c0, 4, nv, masked, alpha, rescale, &pk);
    if (c0 + 2 <= t->d_v) {
        block_accumulate(t, j0, nb, c0, 2, nv, masked, alpha, rescale, &pk);
        c0 += 2;
    }
    if (c0 < t->d_v)
        block_accumulate(t, j0, nb, c0, 1, nv, masked, alpha, rescale, &pk);
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

static void avx512_kernel(const flash_tile *t)
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

/* Few rows (decode). A head with at most FEW_ROWS query rows in all comes
 * as one row-major tile (flash_driver.h), rows padded to R = 1, 2, 4 or 8.
 * Rows as lanes would leave 16 - R lanes idle and read K column by column;
 * here a vector holds 16/R keys x R rows instead, lane i·R + r:
 *   scores  16 dot products per vector, K rows loaded whole and in order
 *           (the R query rows come from L1), then attn_hsum16_avx512;
 *   softmax vertical as in the tiles; a row's block max and sum are folded
 *           across its 16/R lanes with XOR shuffles, so every lane of a row
 *           holds the same m and l;
 *   P·V     V rows streamed in order into an RP-row x NZ-vector tile of acc
 *           held in registers, the weight broadcast from the block's scores.
 * So K and V are each read front to back, once, as two plain streams: the
 * hardware prefetchers keep them coming at memory speed, and the arithmetic
 * (about 2 FMAs per key element) hides under the transfer. KV_BLOCK is a
 * multiple of 16, so every key group 16/R divides it. */
/* FEW_PREFETCH: K and V lines are also prefetched 4 KiB ahead of the loads
 * (measured 1 thread, 32 heads of n_kv 32768, d 128: 9.3 -> 11.7 GB/s; 2 and
 * 8 KiB ahead within 2% of that). */
enum { FEW_ROWS = 8, MAX_NZ = 8, FEW_PREFETCH = 4096 };

static inline __m512i lane_index(void)
{
    return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* Each lane gets the max (or sum) of the lanes of its row, n % R. Both
 * partners compute a op b and b op a, which are equal: lanes stay identical. */
FLASH_INLINE __m512 fold_rows_max(__m512 x, const int R)
{
    for (int sh = 8; sh >= R; sh >>= 1)
        x = _mm512_max_ps(
            x, _mm512_permutexvar_ps(_mm512_xor_si512(lane_index(), _mm512_set1_epi32(sh)), x));
    return x;
}

FLASH_INLINE __m512 fold_rows_sum(__m512 x, const int R)
{
    for (int sh = 8; sh >= R; sh >>= 1)
        x = _mm512_add_ps(
            x, _mm512_permutexvar_ps(_mm512_xor_si512(lane_index(), _mm512_set1_epi32(sh)), x));
    return x;
}

/* acc[i·R + r] += q_r[c..c+16) · k_i[c..c+16), lanes past `tail` zero. */
FLASH_INLINE void few_dot_step(const flash_tile *t, const float *const *k, int32_t c,
                               __mmask16 tail, const int R, __m512 *acc)
{
    const int kg = LANES / R;
    __m512 q[FEW_ROWS];
    for (int r = 0; r < R; r++)
        q[r] = _mm512_load_ps(t->q + (size_t)r * t->ld + c); /* zero past d_k */
    for (int i = 0; i < kg; i++) {
        _mm_prefetch((const char *)(k[i] + c) + FEW_PREFETCH, _MM_HINT_T0);
        __m512 kv =
            tail == 0xffff ? _mm512_loadu_ps(k[i] + c) : _mm512_maskz_loadu_ps(tail, k[i] + c);
        for (int r = 0; r < R; r++)
            acc[i * R + r] = _mm512_fmadd_ps(q[r], kv, acc[i * R + r]);
    }
}

/* Unscaled scores of the 16/R keys from k0 (nk of them are real: the rest
 * repeat the last, so reads stay in the block) with the R rows, lane i·R + r. */
FLASH_INLINE __m512 few_group_scores(const flash_tile *t, const float *k0, int32_t nk, const int R)
{
    const int kg = LANES / R;
    const int32_t d_k = t->d_k;
    const float *k[LANES];
    __m512 acc[LANES];
    for (int i = 0; i < kg; i++)
        k[i] = k0 + (size_t)min32(i, nk - 1) * d_k;
    for (int n = 0; n < LANES; n++)
        acc[n] = _mm512_setzero_ps();
    int32_t c = 0;
    for (; c + LANES <= d_k; c += LANES)
        few_dot_step(t, k, c, 0xffff, R, acc);
    if (c < d_k)
        few_dot_step(t, k, c, attn_tail_mask_avx512(d_k - c), R, acc);
    return attn_hsum16_avx512(acc);
}

/* acc rows [r0, r0 + rp), column vectors [z0, z0 + nz) (the last one masked
 * by `last`): alpha, then the block's weighted V rows. */
FLASH_INLINE void few_accumulate(const flash_tile *t, int32_t j0, int32_t nb, int32_t r0,
                                 const int rp, int32_t z0, const int nz, __mmask16 last,
                                 const int R, const int masked, const float *alpha, int rescale)
{
    const int32_t d_v = t->d_v;
    __m512 a[FEW_ROWS][MAX_NZ];
    int32_t seen[FEW_ROWS];
    for (int r = 0; r < rp; r++) {
        const float *src = t->acc_rm + (size_t)(r0 + r) * t->ld + LANES * z0;
        seen[r] = t->seen[r0 + r];
        for (int z = 0; z < nz; z++) {
            a[r][z] = _mm512_load_ps(src + LANES * z);
            if (rescale)
                a[r][z] = _mm512_mul_ps(a[r][z], _mm512_set1_ps(alpha[r0 + r]));
        }
    }
    const float *vr = t->v + (size_t)j0 * d_v + LANES * z0;
    const float *p = t->scores + r0;
    for (int32_t j = 0; j < nb; j++, vr += d_v, p += R) {
        __m512 v[MAX_NZ];
        if (r0 == 0)
            for (int z = 0; z < nz; z++)
                _mm_prefetch((const char *)(vr + LANES * z) + FEW_PREFETCH, _MM_HINT_T0);
        for (int z = 0; z < nz; z++)
            v[z] = z == nz - 1 ? _mm512_maskz_loadu_ps(last, vr + LANES * z)
                               : _mm512_loadu_ps(vr + LANES * z);
        for (int r = 0; r < rp; r++) {
            __m512 pb = _mm512_set1_ps(p[r]);
            __mmask16 vis = (__mmask16) - (int)(j0 + j < seen[r]);
            for (int z = 0; z < nz; z++)
                a[r][z] = masked ? _mm512_mask3_fmadd_ps(pb, v[z], a[r][z], vis)
                                 : _mm512_fmadd_ps(pb, v[z], a[r][z]);
        }
    }
    for (int r = 0; r < rp; r++) {
        float *dst = t->acc_rm + (size_t)(r0 + r) * t->ld + LANES * z0;
        for (int z = 0; z < nz; z++)
            _mm512_store_ps(dst + LANES * z, a[r][z]);
    }
}

/* All R rows for column vectors [z0, z0 + nz), in passes of rp rows: a
 * tile of at most 16 accumulators, the rest of the 32 zmm for the V row. */
FLASH_INLINE void few_rows_pass(const flash_tile *t, int32_t j0, int32_t nb, int32_t z0,
                                const int nz, __mmask16 last, const int R, const int masked,
                                const float *alpha, int rescale)
{
    const int rp_max = nz > 4 ? 2 : nz > 2 ? 4 : 8;
    const int rp = R < rp_max ? R : rp_max;
    for (int32_t r0 = 0; r0 < R; r0 += rp)
        few_accumulate(t, j0, nb, r0, rp, z0, nz, last, R, masked, alpha, rescale);
}

FLASH_INLINE void few_pv(const flash_tile *t, int32_t j0, int32_t nb, const int R, const int masked,
                         const float *alpha, int rescale)
{
    const int32_t nzv = (t->d_v + LANES - 1) / LANES;
    const __mmask16 lastm = attn_tail_mask_avx512(t->d_v - LANES * (nzv - 1));
    int32_t z0 = 0;
    for (; z0 + 8 <= nzv; z0 += 8)
        few_rows_pass(t, j0, nb, z0, 8, z0 + 8 == nzv ? lastm : 0xffff, R, masked, alpha, rescale);
    if (z0 + 4 <= nzv) {
        few_rows_pass(t, j0, nb, z0, 4, z0 + 4 == nzv ? lastm : 0xffff, R, masked, alpha, rescale);
        z0 += 4;
    }
    if (z0 + 2 <= nzv) {
        few_rows_pass(t, j0, nb, z0, 2, z0 + 2 == nzv ? lastm : 0xffff, R, masked, alpha, rescale);
        z0 += 2;
    }
    if (z0 < nzv)
        few_rows_pass(t, j0, nb, z0, 1, lastm, R, masked, alpha, rescale);
}

/* One key block: scores, softmax (m and l in the lane pattern), P·V. */
FLASH_INLINE void few_block(const flash_tile *t, int32_t j0, int32_t nb, const int R,
                            const int masked, __m512 *m, __m512 *l)
{
    const int kg = LANES / R;
    const int log2r = R == 1 ? 0 : R == 2 ? 1 : R == 4 ? 2 : 3;
    const __m512i key = _mm512_srli_epi32(lane_index(), log2r);
    const __m512 scale = _mm512_set1_ps(t->scale), minus_inf = _mm512_set1_ps(-INFINITY);
    __m512i seen =
        _mm512_permutexvar_epi32(_mm512_and_si512(lane_index(), _mm512_set1_epi32(R - 1)),
                                 _mm512_maskz_loadu_epi32(attn_tail_mask_avx512(R), t->seen));
    __m512 bmax = minus_inf;
    for (int32_t jj = 0; jj < nb; jj += kg) {
        __m512 s = few_group_scores(t, t->k + (size_t)(j0 + jj) * t->d_k, nb - jj, R);
        __m512i jv = _mm512_add_epi32(key, _mm512_set1_epi32(j0 + jj));
        __mmask16 keep = _mm512_cmpgt_epi32_mask(_mm512_set1_epi32(j0 + nb), jv);
        if (masked)
            keep &= _mm512_cmpgt_epi32_mask(seen, jv);
        s = _mm512_mask_mov_ps(minus_inf, keep, s);
        /* NaN scores skipped as in block_scores: they reach O through exp. */
        bmax = _mm512_max_ps(_mm512_mul_ps(s, scale), bmax);
        _mm512_store_ps(t->scores + (size_t)jj * R, s);
    }
    __m512 m_new = _mm512_max_ps(fold_rows_max(bmax, R), *m);
    __m512 shift = _mm512_mask_mov_ps(m_new, _mm512_cmp_ps_mask(m_new, minus_inf, _CMP_EQ_OQ),
                                      _mm512_setzero_ps());
    __m512 alpha = attn_exp_avx512(_mm512_sub_ps(*m, shift));
    int rescale = _mm512_cmp_ps_mask(alpha, _mm512_set1_ps(1.0f), _CMP_NEQ_UQ) != 0;
    *m = m_new;
    __m512 sum = _mm512_setzero_ps();
    for (int32_t jj = 0; jj < nb; jj += kg) {
        float *s = t->scores + (size_t)jj * R;
        __m512 p = attn_exp_avx512(_mm512_fmsub_ps(_mm512_load_ps(s), scale, shift));
        sum = _mm512_add_ps(sum, p);
        _mm512_store_ps(s, p);
    }
    *l = _mm512_fmadd_ps(*l, alpha, fold_rows_sum(sum, R));
    float alpha_r[LANES] __attribute__((aligned(64)));
    _mm512_store_ps(alpha_r, alpha); /* lane r (key 0) is row r's */
    few_pv(t, j0, nb, R, masked, alpha_r, rescale);
}

FLASH_INLINE void few_blocks(const flash_tile *t, const int R)
{
    const __m512i row = _mm512_and_si512(lane_index(), _mm512_set1_epi32(R - 1));
    const __mmask16 rows = attn_tail_mask_avx512(R);
    __m512 m = _mm512_permutexvar_ps(row, _mm512_maskz_loadu_ps(rows, t->m));
    __m512 l = _mm512_permutexvar_ps(row, _mm512_maskz_loadu_ps(rows, t->l));
    for (int32_t j0 = t->kv_begin; j0 < t->kv_end; j0 += t->kv_block) {
        int32_t nb = min32(t->kv_block, t->kv_end - j0);
        if (t->seen_min >= j0 + nb)
            few_block(t, j0, nb, R, 0, &m, &l);
        else
            few_block(t, j0, nb, R, 1, &m, &l);
    }
    _mm512_mask_storeu_ps(t->m, rows, m);
    _mm512_mask_storeu_ps(t->l, rows, l);
}

static void few_kernel_1(const flash_tile *t)
{
    few_blocks(t, 1);
}
static void few_kernel_2(const flash_tile *t)
{
    few_blocks(t, 2);
}
static void few_kernel_4(const flash_tile *t)
{
    few_blocks(t, 4);
}
static void few_kernel_8(const flash_tile *t)
{
    few_blocks(t, 8);
}

static void avx512_few_kernel(const flash_tile *t)
{
    switch (t->rows) {
    case 1:
        few_kernel_1(t);
        break;
    case 2:
        few_kernel_2(t);
        break;
    case 4:
        few_kernel_4(t);
        break;
    default:
        few_kernel_8(t);
        break;
    }
}

void attn_exp_avx512_array(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        _mm512_storeu_ps(y + i, attn_exp_avx512(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 tail = attn_tail_mask_avx512((int)(n - i));
        _mm512_mask_storeu_ps(y + i, tail, attn_exp_avx512(_mm512_maskz_loadu_ps(tail, x + i)));
    }
}

static int avx512_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &avx512_geometry, bytes);
}

static int avx512_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &avx512_geometry, avx512_kernel, workspace);
}

const attn_variant attn_variant_avx512 = {
    .name = "avx512",
    /* flash_avx512.c is built with -mavx512f -mfma; AVX512F implies AVX2 */
    .required_features = ATTN_CPU_AVX512F | ATTN_CPU_FMA,
    .description = "flash-attention-2 online softmax, AVX-512F; query rows as vector lanes",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 2, /* attn_exp_avx512: 1.062 ulp (tests/test_exp --all) */
    .tiles = {.keys = KV_BLOCK, .rows = LANES * MAX_VECTORS, .lanes = LANES, .reg_keys = 6},
    .workspace_size = avx512_workspace,
    .run = avx512_run,
};
