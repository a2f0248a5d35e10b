/* flash_bf16_pairs.h — the vdpbf16ps building blocks of the "P rounded to
 * bf16" block kernels (avx512_bf16, and amx around its tile GEMMs): query
 * rows as the 16 lanes of a zmm, up to 4 row vectors a tile; K/V staging
 * in bf16 pairs; Q·Kᵀ on pairs (bf16 Q) or f32 FMAs (f32 Q); the scores
 * scaled and masked into the block's row max; the softmax that rounds two
 * keys' weights into one pair per lane; P·V on vdpbf16ps over any range
 * of key pairs, V read as pairs (v[2j][c], v[2j+1][c]) from either the
 * key-pair-major layout (stage_v_pairs) or the column-major one (amx's
 * Vᵀ). Include once, in a file compiled with -mavx512f -mavx512bw
 * -mavx512bf16 -mfma, after vec_avx512.h and flash_running_max.h. */
#ifndef ATTN_FLASH_BF16_PAIRS_H
#define ATTN_FLASH_BF16_PAIRS_H

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "flash_driver.h"

/* 16 lanes, up to 4 row vectors = 64 rows per tile, as avx512's tiles
 * (flash_avx512_tiles.h): each staged K/V element feeds 64 query rows.
 * Register tiles of 24 accumulators of 32 zmm. */
enum { LANES = 16, MAX_VECTORS = 4, MAX_RT = 8, MAX_RC = 16 };

/* Keys per Q·Kᵀ register tile, columns per P·V register tile. */
static inline int keys_per_tile(int nv)
{
    return nv == 4 ? 6 : 8;
}

static inline int cols_per_tile(int nv)
{
    return nv == 4 ? 6 : nv == 3 ? 8 : nv == 2 ? 12 : 16;
}

static inline int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* Word i of a block of 32-bit bf16 pairs (memcpy: the block is also seen
 * as floats and bf16; one vpbroadcastd from memory, which GCC 12 does not
 * fold into vdpbf16ps as a {1to16} operand). */
static inline uint32_t pair_at(const void *base, size_t i)
{
    uint32_t w;
    memcpy(&w, (const char *)base + 4 * i, sizeof w);
    return w;
}

static inline __m512 dot_pairs(__m512 acc, __m512i a, __m512i b)
{
    return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b);
}

/* The lanes of m take the pair's products, the others keep acc. Not
 * _mm512_mask_dpbf16_ps: GCC's pattern for it (12 to 16 at least) has a
 * QImode writemask, so only mask bits 0-7 survive a spill of the mask
 * (movzbl) or a kmovb under AVX512DQ: rows 8-15 of a vector silently lost
 * their keys in the ASan build. A blend after the product costs one
 * operation, on the causal diagonal's blocks only. */
static inline __m512 dot_pairs_where(__m512 acc, __mmask16 m, __m512i a, __m512i b)
{
    return _mm512_mask_mov_ps(acc, m, dot_pairs(acc, a, b));
}

/* ---- staging: one key block in the kernel's layout -------------------- */

/* Words per staged K row for bf16 Q: d_k rounded up to pairs (the pad 0). */
static inline int32_t k_pairs(int32_t d_k)
{
    return (d_k + 1) / 2;
}

/* K rows as pairs: the bf16 row as it is, plus a zero when d_k is odd, so
 * the last pair never reads the next row's first element. */
static inline void stage_k_pairs(const uint16_t *k, int32_t nb, int32_t d_k, float *kbuf)
{
    uint16_t *dst = (uint16_t *)kbuf;
    const int32_t ld = 2 * k_pairs(d_k);
    for (int32_t j = 0; j < nb; j++) {
        memcpy(dst + (size_t)j * ld, k + (size_t)j * d_k, sizeof(uint16_t) * (size_t)d_k);
        if (ld > d_k)
            dst[(size_t)j * ld + d_k] = 0;
    }
}

/* K rows widened to f32 (exact: a 16-bit shift), a subnormal read as a
 * zero of its sign: what vdpbf16ps does with it under bf16 Q, so the
 * variant's denormals-are-zero holds whatever Q's type. */
static inline void stage_k_f32(const uint16_t *k, int32_t nb, int32_t d_k, float *kbuf)
{
    const size_t n = (size_t)nb * d_k;
    const __m512i exponent = _mm512_set1_epi32(0x7F800000), sign = _mm512_set1_epi32(INT32_MIN);
    size_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        __m512i w = _mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(k + i))), 16);
        __mmask16 tiny =
            _mm512_cmpeq_epi32_mask(_mm512_and_si512(w, exponent), _mm512_setzero_si512());
        _mm512_storeu_si512(kbuf + i, _mm512_mask_and_epi32(w, tiny, w, sign));
    }
    for (; i < n; i++)
        kbuf[i] = attn_bf16_to_f32((k[i] & 0x7F80u) ? k[i] : (uint16_t)(k[i] & 0x8000u));
}

/* V rows as key pairs: word (jj, c) = v[2jj][c] | v[2jj+1][c] << 16, the
 * second half 0 past the block's last key (nb odd). */
static inline void stage_v_pairs(const uint16_t *v, int32_t nb, int32_t d_v, float *vbuf)
{
    uint32_t *dst = (uint32_t *)vbuf;
    for (int32_t j = 0; j < nb; j += 2, dst += d_v) {
        const uint16_t *a = v + (size_t)j * d_v, *b = j + 1 < nb ? a + d_v : NULL;
        int32_t c = 0;
        for (; c + LANES <= d_v; c += LANES) {
            __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(a + c)));
            __m512i hi = b ? _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(b + c)))
                           : _mm512_setzero_si512();
            _mm512_storeu_si512(dst + c, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
        }
        for (; c < d_v; c++)
            dst[c] = (uint32_t)a[c] | (b ? (uint32_t)b[c] << 16 : 0u);
    }
}

/* 1 when Q·Kᵀ reads K's pairs where they are: bf16 Q and an even d_k, so
 * a K row is whole pairs already and copying it buys nothing (the copy
 * took 3.6 ms of a 190 ms call at n = 4096, d = 128; reading the rows in
 * place was within the noise of it end to end). */
static inline int k_in_place(const flash_tile *t)
{
    return t->q_type == ATTN_BF16 && t->d_k % 2 == 0;
}

/* Words (r[0..15]) as a 16 x 16 matrix of 32-bit words, transposed. */
static inline void bf16_transpose_words(__m512i r[16])
{
    __m512i t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    __m512i u[4][4]; /* u[k][i]: lane L holds column 4L + k of rows 4i..4i+3 */
    for (int i = 0; i < 4; i++) {
        u[0][i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[1][i] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[2][i] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[3][i] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int k = 0; k < 4; k++) {
        __m512i a = _mm512_shuffle_i32x4(u[k][0], u[k][1], 0x88);
        __m512i b = _mm512_shuffle_i32x4(u[k][0], u[k][1], 0xDD);
        __m512i c = _mm512_shuffle_i32x4(u[k][2], u[k][3], 0x88);
        __m512i d = _mm512_shuffle_i32x4(u[k][2], u[k][3], 0xDD);
        r[k] = _mm512_shuffle_i32x4(a, c, 0x88);
        r[4 + k] = _mm512_shuffle_i32x4(b, d, 0x88);
        r[8 + k] = _mm512_shuffle_i32x4(a, c, 0xDD);
        r[12 + k] = _mm512_shuffle_i32x4(b, d, 0xDD);
    }
}

/* bf16 Q straight from its rows (rows[r], r < nvalid; the tile's padding
 * rows 0) into pairs, the layout vdpbf16ps and the tiles read: word [c][r]
 * = q[r][2c] | q[r][2c+1] << 16, an odd d_k's last pair with a zero second half, the
 * sign flipped when `negate` (a negative scale: the same bits as the
 * driver's -1 times the widened value, but for a NaN, whose sign and
 * quiet bit no rule reads). 16 rows x 16
 * pairs at a time, one 16 x 16 transpose of 32-bit words, instead of the
 * driver's widening, its f32 transpose and a repacking of that: 3 passes over a
 * tile's queries (~16 thousand cycles a 64 x 128 tile, 3 % of an amx
 * call at n 4096, d 128, 5 % causal) become 1. */
static inline void bf16_pack_q_rows(const flash_tile *t, const uint16_t *const *rows,
                                    int32_t nvalid, int negate, float *qt)
{
    const int32_t n_rows = t->rows, d_k = t->d_k, pairs = k_pairs(d_k);
    const __m512i sign = _mm512_set1_epi16(negate ? (short)0x8000 : 0);
    uint32_t *dst = (uint32_t *)qt;
    for (int32_t r0 = 0; r0 < n_rows; r0 += 16)
        for (int32_t c0 = 0; c0 < pairs; c0 += 16) {
            const int32_t elems = d_k - 2 * c0 < 32 ? d_k - 2 * c0 : 32;
            const __mmask32 m = (__mmask32)(elems == 32 ? 0xFFFFFFFFu : (1u << elems) - 1u);
            __m512i w[16];
            for (int i = 0; i < 16; i++)
                w[i] = r0 + i < nvalid
                           ? _mm512_maskz_mov_epi16(
                                 m, _mm512_xor_si512(
                                        _mm512_maskz_loadu_epi16(m, rows[r0 + i] + 2 * c0), sign))
                           : _mm512_setzero_si512();
            bf16_transpose_words(w);
            for (int i = 0; i < 16 && c0 + i < pairs; i++)
                _mm512_store_si512(dst + (size_t)(c0 + i) * n_rows + r0, w[i]);
        }
}

/* ---- the block kernel -------------------------------------------------- */

/* A vector of raw scores of key j scaled, and, masked, -inf in the rows
 * (lanes) that do not see the key (seen: their seen[] counts). One rule
 * for every pass that scales scores (store_scores, and softmax_pairs_from
 * on amx's raw tile scores), so they give the same bits. */
FLASH_INLINE __m512 scale_and_mask(__m512 raw, __m512 scale, const int masked, __m512i seen,
                                   int32_t j)
{
    const __m512 x = _mm512_mul_ps(raw, scale);
    return masked ? vec_select(vec_sees(seen, j), x, _mm512_set1_ps(-INFINITY)) : x;
}

/* A register tile's scores, scaled: -inf where the row does not see the
 * key, the block's row max folded into bmax (a NaN score is skipped there
 * and reaches O through exp). Stored scaled, so the weights are
 * exp(s - m) with s exactly the value the max was taken of: the row's top
 * key gets exp(0) = 1, which bf16 holds exactly. A fused exp(s·scale - m)
 * would give the top key exp(the rounding error of s·scale), up to ~1e-3 off 1
 * for huge logits; an f32 P divides that out again by l, a P rounded
 * to bf16 does not (a dominant key's V row then missed by 2^-13). */
FLASH_INLINE void store_scores(const flash_tile *t, int32_t j0, int32_t jj, int32_t nb,
                               const int rt, const int nv, const int masked,
                               __m512 acc[MAX_RT][MAX_VECTORS], __m512 *bmax)
{
    const __m512 scale = _mm512_set1_ps(t->scale);
    for (int i = 0; i < rt && jj + i < nb; i++) {
        float *s = t->scores + (size_t)(jj + i) * t->rows;
        for (int v = 0; v < nv; v++) {
            const __m512i seen =
                masked ? vec_load_i32(t->seen + LANES * v) : _mm512_setzero_si512();
            const __m512 x = scale_and_mask(acc[i][v], scale, masked, seen, j0 + jj + i);
            bmax[v] = _mm512_max_ps(x, bmax[v]);
            _mm512_store_ps(s + LANES * v, x);
        }
    }
}

/* The rt key rows of the register tile from key jj of the block at base,
 * rows row_bytes apart: a short last group repeats its last key (reads stay
 * in the block; store_scores drops the extra results). */
FLASH_INLINE void key_rows(const void *base, size_t row_bytes, int32_t jj, int32_t nb, const int rt,
                           const char **k)
{
    for (int i = 0; i < rt; i++)
        k[i] = (const char *)base + (size_t)min32(jj + i, nb - 1) * row_bytes;
}

FLASH_INLINE void zero_tile(__m512 acc[MAX_RT][MAX_VECTORS], const int rt, const int nv)
{
    for (int i = 0; i < rt; i++)
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm512_setzero_ps();
}

/* The block's scores. bf16 Q (pairs): K rows of k_pairs(d_k) words, in
 * place or staged, one vdpbf16ps per pair; f32 Q: f32 FMAs on the staged
 * K widened to f32, as avx512's. `pairs` is a constant in every copy. */
FLASH_INLINE void block_scores(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                               const int masked, const int pairs, __m512 *bmax)
{
    const int rt = keys_per_tile(nv);
    const int32_t rows = t->rows, steps = pairs ? k_pairs(t->d_k) : t->d_k;
    const void *kb = pairs && k_in_place(t)
                         ? (const void *)((const uint16_t *)t->k_src + (size_t)j0 * t->d_k)
                         : (const void *)t->k;
    for (int32_t jj = 0; jj < nb; jj += rt) {
        const char *k[MAX_RT];
        key_rows(kb, (size_t)steps * 4, jj, nb, rt, k);
        __m512 acc[MAX_RT][MAX_VECTORS];
        zero_tile(acc, rt, nv);
        const float *q = t->qt;
        for (int32_t c = 0; c < steps; c++, q += rows) {
            __m512 qv[MAX_VECTORS];
            for (int v = 0; v < nv; v++)
                qv[v] = _mm512_load_ps(q + LANES * v);
            for (int i = 0; i < rt; i++) {
                const __m512 kc =
                    pairs ? _mm512_castsi512_ps(_mm512_set1_epi32((int)pair_at(k[i], (size_t)c)))
                          : _mm512_set1_ps(((const float *)k[i])[c]);
                for (int v = 0; v < nv; v++)
                    acc[i][v] = pairs ? dot_pairs(acc[i][v], _mm512_castps_si512(qv[v]),
                                                  _mm512_castps_si512(kc))
                                      : _mm512_fmadd_ps(qv[v], kc, acc[i][v]);
            }
        }
        store_scores(t, j0, jj, nb, rt, nv, masked, acc, bmax);
    }
}

/* Word 2r of the result is word r of x, word 2r + 1 is word 16 + r: the
 * two keys' weights of row r side by side in lane r. */
static inline __m512i interleave_index(void)
{
    return _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22,
                            6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
}

/* Lane r: (bf16(p0[r]), bf16(p1[r])), each rounded to nearest even once. */
static inline __m512i round_pair(__m512 p0, __m512 p1, __m512i index)
{
    return _mm512_permutexvar_epi16(index, (__m512i)_mm512_cvtne2ps_pbh(p1, p0));
}

/* The score vector at s of key j: as stored, or (raw) scale_and_mask'd. */
FLASH_INLINE __m512 scaled_score(const float *s, __m512 scale, const int raw, const int masked,
                                 __m512i seen, int32_t j)
{
    const __m512 x = _mm512_load_ps(s);
    return raw ? scale_and_mask(x, scale, masked, seen, j) : x;
}

/* Scores to weights: m and l updated (l from the unrounded weights), alpha
 * = exp(m - m'), and the weights of keys 2jj, 2jj + 1 rounded to a pair per
 * lane, stored as row jj of the scores (in place: row jj is rewritten after
 * rows 2jj and 2jj + 1 are read). An odd last key pairs with weight 0.
 * Returns nonzero when some row's max moved.
 * raw: the scores are still unscaled (amx's tiles store them so), and each
 * is scaled (and, masked, set to -inf where its row does not see the key)
 * here as it is read, by scale_and_mask as store_scores does: the same
 * bits as a scaling pass of its own before, without that pass's stores
 * (bmax then comes from scaled_score over the raw scores: raw_scores_max,
 * flash_amx.c). */
FLASH_INLINE int softmax_pairs_from(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                                    const int raw, const int masked, const __m512 *bmax,
                                    __m512 *alpha)
{
    const int32_t rows = t->rows;
    const __m512i index = interleave_index();
    const __m512 scale = _mm512_set1_ps(t->scale);
    __m512 shift[MAX_VECTORS], sum[MAX_VECTORS];
    __m512i seen[MAX_VECTORS];
    const int moved = running_max(t, nv, bmax, shift, alpha);
    for (int v = 0; v < nv; v++) {
        sum[v] = _mm512_setzero_ps();
        seen[v] = raw && masked ? vec_load_i32(t->seen + LANES * v) : _mm512_setzero_si512();
    }
    float *s = t->scores;
    int32_t j = 0;
    for (; j + 2 <= nb; j += 2)
        for (int v = 0; v < nv; v++) {
            const float *s0 = s + (size_t)j * rows + LANES * v;
            __m512 x0 = scaled_score(s0, scale, raw, masked, seen[v], j0 + j);
            __m512 x1 = scaled_score(s0 + rows, scale, raw, masked, seen[v], j0 + j + 1);
            __m512 p0 = attn_exp_avx512_bf16p(_mm512_sub_ps(x0, shift[v]));
            __m512 p1 = attn_exp_avx512_bf16p(_mm512_sub_ps(x1, shift[v]));
            sum[v] = _mm512_add_ps(sum[v], _mm512_add_ps(p0, p1));
            _mm512_store_si512(s + (size_t)(j / 2) * rows + LANES * v, round_pair(p0, p1, index));
        }
    if (j < nb)
        for (int v = 0; v < nv; v++) {
            const float *s0 = s + (size_t)j * rows + LANES * v;
            __m512 x0 = scaled_score(s0, scale, raw, masked, seen[v], j0 + j);
            __m512 p0 = attn_exp_avx512_bf16p(_mm512_sub_ps(x0, shift[v]));
            sum[v] = _mm512_add_ps(sum[v], p0);
            _mm512_store_si512(s + (size_t)(j / 2) * rows + LANES * v,
                               round_pair(p0, _mm512_setzero_ps(), index));
        }
    running_sum(t, nv, alpha, sum);
    return moved;
}

/* Weights from scores already scaled and masked (store_scores). */
FLASH_INLINE int softmax_pairs(const flash_tile *t, int32_t nb, const int nv, const __m512 *bmax,
                               __m512 *alpha)
{
    return softmax_pairs_from(t, 0, nb, nv, 0, 0, bmax, alpha);
}

/* The pair of V halves with the second (key 2jj + 1) zeroed. */
static inline __m512i first_half(__m512i b)
{
    return _mm512_and_si512(b, _mm512_set1_epi32(0xFFFF));
}

/* Where P·V reads V: the word of key pair jj and column c, (v[2jj][c],
 * v[2jj+1][c]), at words[jj·pair_step + c·col_step]. */
typedef struct pv_source {
    const uint32_t *words;
    size_t pair_step, col_step;
} pv_source;

/* The key-pair-major layout of stage_v_pairs: word (jj, c) at jj·d_v + c. */
static inline pv_source pv_pairs_of(const flash_tile *t)
{
    return (pv_source){(const uint32_t *)t->v, (size_t)t->d_v, 1};
}

/* acc[c][r] for columns [c0, c0 + rc): alpha, then the block's key pairs
 * from jj0 on.
 * Masked blocks: a lane takes a pair only if its row sees the first key,
 * with the second V half zeroed unless it sees the second too. Open
 * blocks: every row sees every key; an odd last key's pair has a zero
 * weight, and its V half past the tile's keys is zeroed here too (the
 * staged block may hold a key this tile must not read: a group's). */
FLASH_INLINE void pv_tile(const flash_tile *t, int32_t j0, int32_t nb, int32_t jj0,
                          const pv_source *src, int32_t c0, const int rc, const int nv,
                          const int masked, const __m512 *alpha, int rescale)
{
    const int32_t rows = t->rows, full = nb / 2;
    __m512 a[MAX_RC][MAX_VECTORS];
    __m512i seen[MAX_VECTORS];
    for (int v = 0; v < nv; v++)
        seen[v] = masked ? vec_load_i32(t->seen + LANES * v) : _mm512_setzero_si512();
    for (int i = 0; i < rc; i++)
        for (int v = 0; v < nv; v++) {
            a[i][v] = _mm512_load_ps(t->acc + (size_t)(c0 + i) * rows + LANES * v);
            if (rescale)
                a[i][v] = _mm512_mul_ps(a[i][v], alpha[v]);
        }
    const uint32_t *vp = src->words + (size_t)jj0 * src->pair_step + (size_t)c0 * src->col_step;
    const float *p = t->scores + (size_t)jj0 * rows;
    for (int32_t jj = jj0; jj < (nb + 1) / 2; jj++, vp += src->pair_step, p += rows) {
        const int last_odd = jj == full; /* the pair (nb - 1, pad) */
        /* A masked block's pairs before the tile's first hidden key
         * (seen_min: every row sees both keys) take the open path: on the
         * causal diagonal that is about half of the block's pairs. A
         * masked block has seen_min < j0 + nb, so its odd last pair (the
         * pad at j0 + nb) always takes the masked one. */
        const int lanes_differ = masked && j0 + 2 * jj + 1 >= t->seen_min;
        __m512i pv[MAX_VECTORS];
        __mmask16 both[MAX_VECTORS], first[MAX_VECTORS];
        for (int v = 0; v < nv; v++) {
            pv[v] = _mm512_load_si512(p + LANES * v);
            if (lanes_differ) {
                both[v] = vec_sees(seen[v], j0 + 2 * jj + 1);
                first[v] = vec_sees(seen[v], j0 + 2 * jj);
            }
        }
        for (int i = 0; i < rc; i++) {
            __m512i b = _mm512_set1_epi32((int)pair_at(vp, (size_t)i * src->col_step));
            if (lanes_differ) {
                __m512i half = first_half(b);
                for (int v = 0; v < nv; v++)
                    a[i][v] = dot_pairs_where(a[i][v], first[v], pv[v],
                                              _mm512_mask_mov_epi32(half, both[v], b));
            } else {
                if (last_odd)
                    b = first_half(b);
                for (int v = 0; v < nv; v++)
                    a[i][v] = dot_pairs(a[i][v], pv[v], b);
            }
        }
    }
    for (int i = 0; i < rc; i++)
        for (int v = 0; v < nv; v++)
            _mm512_store_ps(t->acc + (size_t)(c0 + i) * rows + LANES * v, a[i][v]);
}

/* Columns [c_begin, c_end) of key pairs [jj0, (nb + 1) / 2): full register
 * tiles, then the last columns in narrower ones (4, 2, 1), as avx512's. */
FLASH_INLINE void pv_columns(const flash_tile *t, int32_t j0, int32_t nb, int32_t jj0,
                             const pv_source *src, int32_t c_begin, int32_t c_end, const int nv,
                             const int masked, const __m512 *alpha, int rescale)
{
    const int rc = cols_per_tile(nv);
    int32_t c0 = c_begin;
    for (; c0 + rc <= c_end; c0 += rc)
        pv_tile(t, j0, nb, jj0, src, c0, rc, nv, masked, alpha, rescale);
    for (; rc > 4 && c0 + 4 <= c_end; c0 += 4)
        pv_tile(t, j0, nb, jj0, src, c0, 4, nv, masked, alpha, rescale);
    if (rc > 2 && c0 + 2 <= c_end) {
        pv_tile(t, j0, nb, jj0, src, c0, 2, nv, masked, alpha, rescale);
        c0 += 2;
    }
    if (c0 < c_end)
        pv_tile(t, j0, nb, jj0, src, c0, 1, nv, masked, alpha, rescale);
}

#endif
