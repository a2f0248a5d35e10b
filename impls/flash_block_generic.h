/* flash_block_generic.h — the one online-softmax block kernel body, written
 * against the vector primitives of vec_avx2.h / vec_avx512.h /
 * vec_portable16.h. A kernel file includes one primitive header, defines
 * its register-tile sizes, then includes this file, which gives it
 *     static const flash_block_fn flash_blocks[FLASH_MAX_VECTORS][2];
 * the block functions indexed by [row vectors - 1][masked], for its
 * flash_geometry. The driver (flash_driver.c) owns every loop around them.
 *
 * The kernel file defines before including:
 *   MAX_RT, MAX_RC     the largest register tile of Q·Kᵀ (keys) and P·V
 *                      (columns) over all row-vector counts;
 *   GROUP              row vectors per register tile: a tile of nv vectors
 *                      is walked in groups of GROUP (then one of nv mod GROUP);
 *   keys_per_tile(ng), cols_per_tile(ng)   the register tile for ng vectors;
 *   PV_SERPENTINE      1: P·V's column tiles walk the keys alternately
 *                      forward and backward (group_columns), 0: forward.
 * Those are the ISA's choice (16 ymm vs 32 zmm); everything below is shared.
 *
 * Per key block [j0, j0 + nb) of a tile whose rows are vector lanes
 * (flash_driver.h: qt[t][r], m[r], l[r], acc[c][r], scores[j][r]):
 *   scores  S[j][r] = q_r · k_j, a register tile of RT keys x ng row
 *           vectors, K rows broadcast straight from the K tensor (the
 *           queries were packed once per tile instead); the causal mask and
 *           the block's row max of S·scale fused into the store;
 *   softmax p = exp(S·scale - m') in place, scale and shift in one fused
 *           multiply-subtract, row sums, alpha = exp(m - m');
 *   P·V     acc[c][r] = acc[c][r]·alpha[r] + Σ_j p[j][r]·v[j][c], a register
 *           tile of RC columns x ng row vectors, V broadcast from the V
 *           tensor, alpha applied as the tile is loaded and only when some
 *           row's max moved; in a masked block whose hidden V rows are
 *           not all finite the FMA reaches only the rows that see key j
 *           (vec_fmadd_where: no 0·NaN from a hidden V row); otherwise it
 *           runs as an open block's, a hidden weight +0 adding ±0
 *           (flash_hidden_v_finite: 1.11x for avx2 at causal n 512, d 64,
 *           1.01-1.03x for avx512, on a Sapphire Rapids).
 * Every reduction is vertical (over keys, per lane): no horizontal op. */
#ifndef ATTN_FLASH_BLOCK_GENERIC_H
#define ATTN_FLASH_BLOCK_GENERIC_H

#include <math.h>

#include "flash_driver.h"
#include "flash_running_max.h"

/* One register tile: the unscaled scores of keys [jj, jj + rt) of the
 * block (all inside it) for row vectors [v0, v0 + ng), -inf where the row
 * does not see the key; folds the keys' row max of score·scale into bmax
 * (a NaN score is skipped there and reaches O through exp). */
FLASH_INLINE void score_tile(const flash_tile *t, int32_t j0, int32_t jj, const int rt,
                             const int v0, const int ng, const int masked, const vec_i *seen,
                             vec_f *bmax, flash_prefetch *pf)
{
    const int32_t rows = t->rows, d_k = t->d_k;
    const vec_f scale = vec_set1(t->scale), minus_inf = vec_set1(-INFINITY);
    const float *k[MAX_RT];
    for (int i = 0; i < rt; i++)
        k[i] = flash_k_row(t, j0 + jj + i);
    vec_f acc[MAX_RT][GROUP];
    for (int i = 0; i < rt; i++)
        for (int v = 0; v < ng; v++)
            acc[i][v] = vec_zero();
    const float *q = t->qt + VEC_LANES * v0;
    for (int32_t c = 0; c < d_k; c++, q += rows) {
        flash_prefetch_step(pf);
        vec_f qv[GROUP];
        for (int v = 0; v < ng; v++)
            qv[v] = vec_load(q + VEC_LANES * v);
        for (int i = 0; i < rt; i++) {
            vec_f kb = vec_broadcast(k[i] + c);
            for (int v = 0; v < ng; v++)
                acc[i][v] = vec_fmadd(qv[v], kb, acc[i][v]);
        }
    }
    for (int i = 0; i < rt; i++) {
        float *s = t->scores + (size_t)(jj + i) * rows + VEC_LANES * v0;
        for (int v = 0; v < ng; v++) {
            vec_f x = acc[i][v];
            if (masked)
                x = vec_select(vec_sees(seen[v], j0 + jj + i), x, minus_inf);
            bmax[v0 + v] = vec_max_nan_skips(vec_mul(x, scale), bmax[v0 + v]);
            vec_store(s + VEC_LANES * v, x);
        }
    }
}

/* The block's scores for row vectors [v0, v0 + ng): full register tiles of
 * rt keys, then the last nb mod rt keys in the block's last rt keys, or,
 * up to 4 of them (or a block shorter than rt), its last 4 (and first 4):
 * some keys scored twice, the same bits, a score's bits not depending on
 * its tile. A narrow tile costs about its d_k steps whatever its width (the
 * FMA latency bounds it, not the ports), so avx2's 64-key block in 6-key
 * tiles ends in one 4-key tile instead of a 6-key tile a third wasted:
 * Zen 3, 32 rows, n 4096, 1 thread, the block kernel alone with its P·V
 * switched off, best of 21 alternating rounds 1.03x at d 128 and 1.05x at
 * d 64. A block of 1-3 keys takes them one at a time. */
FLASH_INLINE void group_scores(const flash_tile *t, int32_t j0, int32_t nb, const int v0,
                               const int ng, const int masked, vec_f *bmax, flash_prefetch *pf)
{
    _Static_assert(MAX_RT <= 8, "a block shorter than a tile is two tiles of 4");
    const int rt = keys_per_tile(ng);
    vec_i seen[GROUP];
    for (int v = 0; v < ng; v++)
        seen[v] = masked ? vec_load_i32(t->seen + VEC_LANES * (v0 + v)) : vec_zero_i32();
    int32_t jj = 0;
    for (; jj + rt <= nb; jj += rt)
        score_tile(t, j0, jj, rt, v0, ng, masked, seen, bmax, pf);
    const int32_t left = nb - jj;
    if (left == 0)
        return;
    if (left > 4 && jj > 0) {
        score_tile(t, j0, nb - rt, rt, v0, ng, masked, seen, bmax, pf);
    } else if (nb >= 4) {
        if (left > 4)
            score_tile(t, j0, 0, 4, v0, ng, masked, seen, bmax, pf);
        score_tile(t, j0, nb - 4, 4, v0, ng, masked, seen, bmax, pf);
    } else {
        for (; jj < nb; jj++)
            score_tile(t, j0, jj, 1, v0, ng, masked, seen, bmax, pf);
    }
}

FLASH_INLINE void block_scores(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                               const int masked, vec_f *bmax, flash_prefetch *pf)
{
    for (int v = 0; v < nv; v++)
        bmax[v] = vec_set1(-INFINITY);
    int v0 = 0;
    for (; v0 + GROUP <= nv; v0 += GROUP)
        group_scores(t, j0, nb, v0, GROUP, masked, bmax, pf);
    if (v0 < nv)
        group_scores(t, j0, nb, v0, nv - v0, masked, bmax, pf);
}

/* Scores to weights in place; updates m and l, sets alpha = exp(m - m').
 * Returns nonzero when some row's max moved (alpha != 1). */
FLASH_INLINE int block_softmax(const flash_tile *t, int32_t nb, const int nv, const vec_f *bmax,
                               vec_f *alpha)
{
    const int32_t rows = t->rows;
    const vec_f scale = vec_set1(t->scale);
    vec_f shift[FLASH_MAX_VECTORS], sum[FLASH_MAX_VECTORS];
    const int moved = running_max(t, nv, bmax, shift, alpha);
    for (int v = 0; v < nv; v++)
        sum[v] = vec_zero();
    float *s = t->scores;
    for (int32_t j = 0; j < nb; j++, s += rows)
        for (int v = 0; v < nv; v++) {
            vec_f p = vec_exp(vec_fmsub(vec_load(s + VEC_LANES * v), scale, shift[v]));
            sum[v] = vec_add(sum[v], p);
            vec_store(s + VEC_LANES * v, p);
        }
    running_sum(t, nv, alpha, sum);
    return moved;
}

/* acc[c][r] for columns [c0, c0 + rc) and row vectors [v0, v0 + ng):
 * alpha, then the block's weighted V rows. rc and ng are compile-time
 * constants in every copy, so the rc x ng tile lives in registers. */
FLASH_INLINE void tile_accumulate(const flash_tile *t, int32_t j0, int32_t nb, int32_t c0,
                                  const int rc, const int v0, const int ng, const int masked,
                                  const vec_f *alpha, int rescale, int backward, flash_prefetch *pf)
{
    const int32_t rows = t->rows, d_v = t->d_v;
    vec_i seen[GROUP];
    vec_f a[MAX_RC][GROUP];
    for (int v = 0; v < ng; v++)
        seen[v] = masked ? vec_load_i32(t->seen + VEC_LANES * (v0 + v)) : vec_zero_i32();
    for (int i = 0; i < rc; i++) {
        const float *src = t->acc + (size_t)(c0 + i) * rows + VEC_LANES * v0;
        for (int v = 0; v < ng; v++) {
            a[i][v] = vec_load(src + VEC_LANES * v);
            if (rescale)
                a[i][v] = vec_mul(a[i][v], alpha[v0 + v]);
        }
    }
    /* Keys first to last, or (backward) last to first. */
    const int32_t first = backward ? nb - 1 : 0, dj = backward ? -1 : 1;
    const ptrdiff_t v_step = backward ? -(ptrdiff_t)d_v : d_v;
    const ptrdiff_t p_step = backward ? -(ptrdiff_t)rows : rows;
    const float *vr = flash_v_row(t, j0 + first) + c0;
    const float *p = t->scores + (size_t)first * rows + VEC_LANES * v0;
    for (int32_t n = 0, j = first; n < nb; n++, j += dj, vr += v_step, p += p_step) {
        flash_prefetch_step(pf);
        vec_f pv[GROUP];
        vec_mask vis[GROUP];
        /* With 24 accumulators live, GCC kept avx512's fourth weight
         * vector as a memory operand of each of its 6 FMAs (six 64-byte
         * loads for one) unless told to hold it: 1.04-1.06x on a Sapphire
         * Rapids (n 2048, 1 and 2 threads, d 64-256, causal). Holding the
         * queries of Q·Kᵀ the same way lost (0.99x). */
        for (int v = 0; v < ng; v++) {
            pv[v] = vec_in_register(vec_load(p + VEC_LANES * v));
            vis[v] = masked ? vec_sees(seen[v], j0 + j) : vec_mask_none();
        }
        for (int i = 0; i < rc; i++) {
            vec_f b = vec_broadcast(vr + i);
            for (int v = 0; v < ng; v++)
                a[i][v] = masked ? vec_fmadd_where(vis[v], pv[v], b, a[i][v])
                                 : vec_fmadd(pv[v], b, a[i][v]);
        }
    }
    for (int i = 0; i < rc; i++) {
        float *dst = t->acc + (size_t)(c0 + i) * rows + VEC_LANES * v0;
        for (int v = 0; v < ng; v++)
            vec_store(dst + VEC_LANES * v, a[i][v]);
    }
}

/* Every column for row vectors [v0, v0 + ng): full register tiles, then
 * the last d_v mod rc columns in narrower tiles (4, 2, 1) rather than a
 * full tile with repeated columns (at d_v = 128 and rc = 6 that was 4
 * wasted columns of 132, 3% of P·V). With PV_SERPENTINE (the kernel
 * file's choice) every other tile walks the block's keys backward, so it
 * starts on the V rows the tile before it ended on: a block's V rows
 * (64 keys x 512 bytes at d_v = 128) beside the weights and the
 * accumulators outgrow a 32 KiB L1D, and walked in one order every tile
 * found each row already evicted, the least recently used. The sums then
 * run in the other order for those columns, within the same bound.
 * Zen 3 (32 KiB L1D), 32 rows, n 4096, 1 thread, the block kernel alone
 * in alternating rounds: 1.04x at d 128; at d 64 (16 KiB of V rows) within
 * the noise. Both changes in the library, n 2048, 8 heads, alternating
 * rounds (scripts/ab.py): 1.02-1.07x at d 128 and 1.03-1.04x at d 64 on
 * 1 thread, 1.00x and 1.04x on 2. */
FLASH_INLINE void group_columns(const flash_tile *t, int32_t j0, int32_t nb, const int v0,
                                const int ng, const int masked, const vec_f *alpha, int rescale,
                                flash_prefetch *pf)
{
    const int rc = cols_per_tile(ng);
    int backward = 0;
    int32_t c0 = 0;
    for (; c0 + rc <= t->d_v; c0 += rc, backward ^= PV_SERPENTINE)
        tile_accumulate(t, j0, nb, c0, rc, v0, ng, masked, alpha, rescale, backward, pf);
    for (; rc > 4 && c0 + 4 <= t->d_v; c0 += 4, backward ^= PV_SERPENTINE)
        tile_accumulate(t, j0, nb, c0, 4, v0, ng, masked, alpha, rescale, backward, pf);
    if (rc > 2 && c0 + 2 <= t->d_v) {
        tile_accumulate(t, j0, nb, c0, 2, v0, ng, masked, alpha, rescale, backward, pf);
        c0 += 2;
        backward ^= PV_SERPENTINE;
    }
    if (c0 < t->d_v)
        tile_accumulate(t, j0, nb, c0, 1, v0, ng, masked, alpha, rescale, backward, pf);
}

/* P·V of a block for the tile's nv row vectors, GROUP at a time; masked
 * a constant in each call, so each instance keeps its own loops. */
FLASH_INLINE void block_pv(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                           const int masked, const vec_f *alpha, int rescale, flash_prefetch *pf)
{
    int v0 = 0;
    for (; v0 + GROUP <= nv; v0 += GROUP)
        group_columns(t, j0, nb, v0, GROUP, masked, alpha, rescale, pf);
    if (v0 < nv)
        group_columns(t, j0, nb, v0, nv - v0, masked, alpha, rescale, pf);
}

/* One key block of a tile of nv row vectors: scores, softmax, P·V. The
 * prefetch plan is the driver's (flash_driver.h: this block's V during its
 * Q·Kᵀ, the next block's K during its P·V; staged, the next block's narrow
 * K and V). */
FLASH_INLINE void fold_block(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                             const int masked)
{
    vec_f bmax[FLASH_MAX_VECTORS], alpha[FLASH_MAX_VECTORS];
    flash_prefetch in_scores = flash_prefetch_during_scores(t, j0, nb);
    flash_prefetch in_pv = flash_prefetch_during_pv(t, j0, nb);
    block_scores(t, j0, nb, nv, masked, bmax, &in_scores);
    int rescale = block_softmax(t, nb, nv, bmax, alpha);
    if (masked && !flash_hidden_v_finite(t, j0, nb))
        block_pv(t, j0, nb, nv, 1, alpha, rescale, &in_pv);
    else
        block_pv(t, j0, nb, nv, 0, alpha, rescale, &in_pv);
}

/* The instances and their table, flash_blocks. */
#include "flash_block_instances.h"

#endif
