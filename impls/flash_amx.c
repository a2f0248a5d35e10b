/* amx — online softmax (FlashAttention-2 forward) whose two GEMMs run on
 * AMX tiles (tdpbf16ps: 16 x 16 f32 results from 16 x 32 bf16 by 32 x 16
 * bf16), in the class "P rounded to bf16", as avx512_bf16: scores, max,
 * exp, the sum l and the accumulators stay f32; each weight exp(s - m) is
 * rounded once to bf16 as it enters P·V; l sums the unrounded weights.
 *
 * The tile is avx512_bf16's (flash_bf16_pairs.h): query rows as the 16
 * lanes of a zmm, so every softmax step is a vertical AVX-512 operation,
 * and both GEMMs are written transposed so that their results land in that
 * layout without a shuffle:
 *   Sᵀ = K·Qᵀ  A: 16 keys x 32 of d_k, K's bf16 rows read where they are;
 *              B: 16 pairs of d_k x 16 query rows, Q packed once per tile
 *              into pairs (bf16_pack_q_rows: word [c][r] = q[r][2c],
 *              q[r][2c+1], exactly the VNNI layout tdpbf16ps reads); C: 16 keys x 16
 *              rows stored into the block's scores[key][row];
 *   softmax    avx512_bf16's on those scores (scaled, masked, row max, exp,
 *              two keys' rounded weights packed per lane as P pairs, which
 *              is again the VNNI layout);
 *   accᵀ += Vᵀ·Pᵀ  A: 16 columns x 32 keys of Vᵀ, staged once per key
 *              block for a group of tiles (stage_vt: V's bf16 rows
 *              transposed 32 keys x 16 columns at a time); B: 16 key pairs x
 *              16 rows of P; C: 16 columns x 16 rows of acc[c][r], loaded,
 *              rescaled by alpha and stored once per block.
 * Two by two accumulator tiles share two A and two B tiles (all 8 tiles,
 * one configuration: 16 rows x 64 bytes each).
 *
 * What the tiles cannot do goes through avx512_bf16's vdpbf16ps code, so
 * every key a row must not see never reaches it (not even as 0·Inf): on a
 * masked block (causal diagonal, shorter rows) the tiles take only the
 * 32-key chunks every row of the tile sees, and the rest of the block's
 * pairs are masked per lane; so are the last keys of a block that fill no
 * whole chunk, the columns past the last multiple of 16 of d_v, and the
 * ragged edges of K·Qᵀ (a last key group or d_k chunk) are zero-padded
 * copies. f32 Q (a bf16 KV cache under f32 queries): rounding Q to bf16
 * would be an error outside the class, so Q·Kᵀ runs avx512_bf16's f32 FMAs
 * on K widened per block; P·V still runs on the tiles.
 *
 * tdpbf16ps treats subnormal inputs as zero and flushes subnormal results
 * (denormals-are-zero, declared). Linux grants the tile state on request,
 * once (cpu_features.c); without the grant the AMX bits are cleared and
 * the variant is a visible skip. Decode shapes go to avx512_bf16's
 * few-rows kernel. Needs AVX512F, AVX512BW, AVX512_BF16, FMA, AMX-TILE and
 * AMX-BF16. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "amx_tiles.h"
#include "cpu_features.h"
#include "flash_amx_blocks.h"
#include "flash_avx512_decode.h"
#include "flash_driver.h"
#include "vec_avx512.h"

#include "flash_running_max.h"

#include "flash_bf16_pairs.h"

/* A tile: 16 rows of 64 bytes (16 f32, or 32 bf16 = 16 pairs). */
enum { TROWS = 16, TPAIRS = 16, TKEYS = 32 };

enum { KV_BLOCK = AMX_KV_BLOCK };
_Static_assert(KV_BLOCK % TKEYS == 0 && KV_BLOCK % 16 == 0, "whole chunks");
_Static_assert(AMX_LONG_KV_BLOCK % KV_BLOCK == 0, "whole blocks");

/* ---- staging ----------------------------------------------------------- */

/* Vᵀ of keys [0, nb) of a block: vt[c][j] = v[j][c] (bf16), rows ld keys
 * apart; an odd nb's pad key nb is 0, so the pair word of the last key
 * never holds an unwritten half. 32 keys x 16 columns at a time: 16 key
 * pairs as words (v[2jj][c], v[2jj+1][c]), transposed so each column's 16
 * pairs are one 64-byte row. */
static void stage_vt(const uint16_t *v, int32_t nb, int32_t d_v, int32_t ld, uint16_t *vt)
{
    int32_t j = 0;
    for (; j + TKEYS <= nb; j += TKEYS) {
        int32_t c = 0;
        for (; c + 16 <= d_v; c += 16) {
            __m512i w[16];
            for (int jj = 0; jj < 16; jj++) {
                const uint16_t *a = v + (size_t)(j + 2 * jj) * d_v + c;
                __m512i lo = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)a));
                __m512i hi = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(a + d_v)));
                w[jj] = _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
            }
            bf16_transpose_words(w);
            for (int i = 0; i < 16; i++)
                _mm512_storeu_si512(vt + (size_t)(c + i) * ld + j, w[i]);
        }
        for (; c < d_v; c++)
            for (int32_t k = j; k < j + TKEYS; k++)
                vt[(size_t)c * ld + k] = v[(size_t)k * d_v + c];
    }
    const int32_t end = nb + (nb & 1);
    for (int32_t c = 0; c < d_v && j < end; c++)
        for (int32_t k = j; k < end; k++)
            vt[(size_t)c * ld + k] = k < nb ? v[(size_t)k * d_v + c] : 0;
}

/* The first of keys [0, nb) whose V row holds a NaN or an Inf (exponent
 * all ones), or nb: 32 bf16 at a time, then one by one. */
static int32_t first_nonfinite(const uint16_t *v, int32_t nb, int32_t d_v)
{
    const __m512i exponent = _mm512_set1_epi16(0x7F80);
    for (int32_t j = 0; j < nb; j++) {
        const uint16_t *row = v + (size_t)j * d_v;
        int32_t c = 0;
        for (; c + 32 <= d_v; c += 32) {
            __m512i x = _mm512_and_si512(_mm512_loadu_si512(row + c), exponent);
            if (_mm512_cmpeq_epi16_mask(x, exponent))
                return j;
        }
        for (; c < d_v; c++)
            if ((row[c] & 0x7F80u) == 0x7F80u)
                return j;
    }
    return nb;
}

/* One key block for a group of tiles: V transposed (bf16) into vbuf; for
 * f32 Q, K widened to f32 into kbuf (bf16 Q reads K where it is). */
static void amx_stage(const flash_tile *t, int32_t j0, int32_t nb, float *kbuf, float *vbuf)
{
    if (t->q_type != ATTN_BF16)
        stage_k_f32((const uint16_t *)t->k_src + (size_t)j0 * t->d_k, nb, t->d_k, kbuf);
    stage_vt((const uint16_t *)t->v_src + (size_t)j0 * t->d_v, nb, t->d_v, t->kv_block,
             (uint16_t *)vbuf);
}

/* ---- Sᵀ = K·Qᵀ on the tiles -------------------------------------------- */

/* A tile's source: where its 16 rows start and how far apart they are. */
typedef struct tile_src {
    const void *at;
    size_t stride;
} tile_src;

/* Keys [16g, 16g + 16) x d_k [32c, 32c + 32) of the block as an A tile: in
 * place when whole, else copied into pad with zeros past the block's keys
 * and past d_k (a NaN past them would otherwise meet a zero of Q). */
static inline tile_src k_tile(const flash_tile *t, const uint16_t *k, int32_t nb, int32_t g,
                              int32_t c, uint16_t pad[TROWS * TKEYS])
{
    const int32_t d_k = t->d_k, keys = nb - TROWS * g, cols = d_k - TKEYS * c;
    const uint16_t *src = k + (size_t)TROWS * g * d_k + (size_t)TKEYS * c;
    if (keys >= TROWS && cols >= TKEYS)
        return (tile_src){src, (size_t)d_k * 2};
    memset(pad, 0, sizeof(uint16_t) * TROWS * TKEYS);
    for (int32_t r = 0; r < TROWS && r < keys; r++)
        memcpy(pad + r * TKEYS, src + (size_t)r * d_k,
               sizeof(uint16_t) * (size_t)(cols < TKEYS ? cols : TKEYS));
    return (tile_src){pad, TKEYS * 2};
}

/* Pairs [16c, 16c + 16) of the packed queries x rows [16h, 16h + 16) as a
 * B tile: in place when whole, else copied into pad, zero past d_k. */
static inline tile_src q_tile(const flash_tile *t, int32_t c, int32_t h, uint32_t pad[TROWS * 16])
{
    const uint32_t *qw = (const uint32_t *)t->qt + (size_t)TPAIRS * c * t->rows + 16 * h;
    const int32_t pairs = k_pairs(t->d_k) - TPAIRS * c;
    if (pairs >= TPAIRS)
        return (tile_src){qw, (size_t)t->rows * 4};
    memset(pad, 0, sizeof(uint32_t) * TROWS * 16);
    for (int32_t i = 0; i < pairs; i++)
        memcpy(pad + i * 16, qw + (size_t)i * t->rows, 64);
    return (tile_src){pad, 64};
}

/* Raw dot products of keys [0, round16(nb)) and every row into t->scores
 * (scores[j][r], rows t->rows floats apart), 2 x 2 tiles at a time: keys
 * 16g.., rows 16h... Rows past nb hold products of zero-padded keys. */
static void tile_scores(const flash_tile *t, int32_t j0, int32_t nb)
{
    const uint16_t *k = (const uint16_t *)t->k_src + (size_t)j0 * t->d_k;
    const int32_t groups = (nb + TROWS - 1) / TROWS, halves = t->rows / 16;
    const int32_t chunks = (t->d_k + TKEYS - 1) / TKEYS;
    const size_t ld = (size_t)t->rows * 4;
    uint16_t kpad[2][TROWS * TKEYS] __attribute__((aligned(64)));
    uint32_t qpad[2][TROWS * 16] __attribute__((aligned(64)));
    for (int32_t g = 0; g < groups; g += 2) {
        const int two_g = g + 1 < groups;
        for (int32_t h = 0; h < halves; h += 2) {
            const int two_h = h + 1 < halves;
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int32_t c = 0; c < chunks; c++) {
                tile_src a0 = k_tile(t, k, nb, g, c, kpad[0]);
                tile_src b0 = q_tile(t, c, h, qpad[0]);
                _tile_loadd(4, a0.at, a0.stride);
                _tile_loadd(6, b0.at, b0.stride);
                _tile_dpbf16ps(0, 4, 6);
                if (two_h) {
                    tile_src b1 = q_tile(t, c, h + 1, qpad[1]);
                    _tile_loadd(7, b1.at, b1.stride);
                    _tile_dpbf16ps(1, 4, 7);
                }
                if (two_g) {
                    tile_src a1 = k_tile(t, k, nb, g + 1, c, kpad[1]);
                    _tile_loadd(5, a1.at, a1.stride);
                    _tile_dpbf16ps(2, 5, 6);
                    if (two_h)
                        _tile_dpbf16ps(3, 5, 7);
                }
            }
            float *s = t->scores + (size_t)TROWS * g * t->rows + 16 * h;
            _tile_stored(0, s, ld);
            if (two_h)
                _tile_stored(1, s + 16, ld);
            if (two_g) {
                _tile_stored(2, s + (size_t)TROWS * t->rows, ld);
                if (two_h)
                    _tile_stored(3, s + (size_t)TROWS * t->rows + 16, ld);
            }
        }
    }
}

/* The block's row max of the scaled scores (-inf where a row does not see
 * the key: masked) folded into bmax, the raw scores left as they are:
 * softmax_pairs_from scales them again as it reads them (both through
 * scale_and_mask), so the same bits as scaling them in place here and
 * storing them, a pass of stores the weights' pass then read back from L2 (the
 * block's scores are 64 rows x 512 keys, 128 KiB). Alternating rounds of
 * one process against that pass, bf16, n 4096, 8 heads, 2 threads, on a
 * Sapphire Rapids: d 128 1.019x, d 64 1.037x, causal 1.010x / 1.029x;
 * the output bits the same on 48 shapes (odd d_k, GQA, negative scale,
 * causal, n_kv past 2048, bf16 and f32 Q). */
FLASH_INLINE void raw_scores_max(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                                 const int masked, __m512 *bmax)
{
    const __m512 scale = _mm512_set1_ps(t->scale);
    __m512i seen[MAX_VECTORS];
    for (int v = 0; v < nv; v++)
        seen[v] = masked ? vec_load_i32(t->seen + LANES * v) : _mm512_setzero_si512();
    for (int32_t j = 0; j < nb; j++) {
        const float *s = t->scores + (size_t)j * t->rows;
        for (int v = 0; v < nv; v++)
            bmax[v] = _mm512_max_ps(scaled_score(s + LANES * v, scale, 1, masked, seen[v], j0 + j),
                                    bmax[v]);
    }
}

/* ---- accᵀ += Vᵀ·Pᵀ on the tiles ----------------------------------------- */

/* acc[c][r] *= alpha[r] for columns [c0, c0 + cols), rows [16h, 16h + 16·hs). */
static inline void rescale_acc(const flash_tile *t, int32_t c0, int32_t cols, int32_t h, int hs,
                               const __m512 *alpha)
{
    for (int32_t c = c0; c < c0 + cols; c++)
        for (int i = 0; i < hs; i++) {
            float *a = t->acc + (size_t)c * t->rows + 16 * (h + i);
            _mm512_store_ps(a, _mm512_mul_ps(_mm512_load_ps(a), alpha[h + i]));
        }
}

/* Columns [0, 16·col_groups) of acc, key pairs [0, 16·chunks): per 2 x 2
 * accumulator tiles (columns 16e.., rows 16h..), rescaled by alpha, loaded,
 * the chunks' products added, stored. */
static void tile_pv(const flash_tile *t, int32_t col_groups, int32_t chunks, const __m512 *alpha,
                    int rescale)
{
    const uint16_t *vt = (const uint16_t *)t->v;
    const size_t ldv = (size_t)t->kv_block, ld = (size_t)t->rows * 4;
    const int32_t halves = t->rows / 16;
    const uint32_t *pw = (const uint32_t *)t->scores;
    for (int32_t e = 0; e < col_groups; e += 2) {
        const int two_e = e + 1 < col_groups;
        for (int32_t h = 0; h < halves; h += 2) {
            const int two_h = h + 1 < halves;
            float *acc = t->acc + (size_t)16 * e * t->rows + 16 * h;
            if (rescale)
                rescale_acc(t, 16 * e, 16 * (1 + two_e), h, 1 + two_h, alpha);
            _tile_loadd(0, acc, ld);
            if (two_h)
                _tile_loadd(1, acc + 16, ld);
            if (two_e) {
                _tile_loadd(2, acc + (size_t)16 * t->rows, ld);
                if (two_h)
                    _tile_loadd(3, acc + (size_t)16 * t->rows + 16, ld);
            }
            for (int32_t c = 0; c < chunks; c++) {
                const uint16_t *a = vt + (size_t)16 * e * ldv + (size_t)TKEYS * c;
                const uint32_t *b = pw + (size_t)TPAIRS * c * t->rows + 16 * h;
                _tile_loadd(4, a, ldv * 2);
                _tile_loadd(6, b, ld);
                _tile_dpbf16ps(0, 4, 6);
                if (two_h) {
                    _tile_loadd(7, b + 16, ld);
                    _tile_dpbf16ps(1, 4, 7);
                }
                if (two_e) {
                    _tile_loadd(5, a + 16 * ldv, ldv * 2);
                    _tile_dpbf16ps(2, 5, 6);
                    if (two_h)
                        _tile_dpbf16ps(3, 5, 7);
                }
            }
            _tile_stored(0, acc, ld);
            if (two_h)
                _tile_stored(1, acc + 16, ld);
            if (two_e) {
                _tile_stored(2, acc + (size_t)16 * t->rows, ld);
                if (two_h)
                    _tile_stored(3, acc + (size_t)16 * t->rows + 16, ld);
            }
        }
    }
}

/* ---- the block kernel -------------------------------------------------- */

/* One key block [j0, j0 + nb) of a tile of nv row vectors. */
FLASH_INLINE void fold_block(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                             const int masked)
{
    __m512 bmax[MAX_VECTORS], alpha[MAX_VECTORS];
    for (int v = 0; v < nv; v++)
        bmax[v] = _mm512_set1_ps(-INFINITY);
    attn_amx_configure(8);
    const int raw = t->q_type == ATTN_BF16;
    if (raw) {
        tile_scores(t, j0, nb);
        raw_scores_max(t, j0, nb, nv, masked, bmax);
    } else {
        block_scores(t, j0, nb, nv, masked, 0, bmax);
    }
    const int rescale = raw ? softmax_pairs_from(t, j0, nb, nv, 1, masked, bmax, alpha)
                            : softmax_pairs(t, nb, nv, bmax, alpha);
    /* The tiles take whole 32-key chunks; vdpbf16ps the rest, masked per
     * lane where rows differ. A key some row must not see has the weight
     * 0 in that row (its score is -inf), which the tiles would add as
     * 0·v: exact for a finite V row, NaN for an Inf or NaN one. So on a
     * masked block the tiles stop at the first key some row does not see
     * only when a V row from there on is not finite (the block's first
     * such key, read from the head's V rows past seen_min); for finite V
     * they take the whole block. Causal n 4096 8 heads, 2 threads: 1.14x
     * at d 128, 1.09x at d 64 over stopping at seen_min always. */
    int32_t open = nb;
    if (masked) {
        const int32_t all = t->seen_min - j0 < 0 ? 0 : t->seen_min - j0;
        if (all < nb) {
            const uint16_t *v = (const uint16_t *)t->v_src + (size_t)(j0 + all) * t->d_v;
            const int32_t bad = all + first_nonfinite(v, nb - all, t->d_v);
            open = bad < nb ? all : nb;
        }
    }
    const int32_t chunks = open / TKEYS, pairs = chunks * TPAIRS, cols = t->d_v / 16 * 16;
    const pv_source vt = {(const uint32_t *)t->v, 1, (size_t)t->kv_block / 2};
    if (chunks > 0 && cols > 0) {
        tile_pv(t, cols / 16, chunks, alpha, rescale);
        if (pairs < (nb + 1) / 2)
            pv_columns(t, j0, nb, pairs, &vt, 0, cols, nv, masked, alpha, 0);
    } else {
        pv_columns(t, j0, nb, 0, &vt, 0, cols, nv, masked, alpha, rescale);
    }
    if (cols < t->d_v)
        pv_columns(t, j0, nb, 0, &vt, cols, t->d_v, nv, masked, alpha, rescale);
    _tile_release();
}

/* One copy per row-vector count and mask flag: flash_blocks. */
#include "flash_block_instances.h"

static const flash_geometry amx_geometry = {
    .lanes = LANES,
    .max_rows = LANES * MAX_VECTORS,
    .kv_block = KV_BLOCK,
    .long_kv_block = AMX_LONG_KV_BLOCK,
    .long_kv_from = AMX_LONG_KV_FROM,
    .blocks = flash_blocks,
    .few_rows = ATTN_AVX512_DECODE_ROWS,
    .few_kernel = attn_avx512_bf16_decode_kernel,
    .few_reads = attn_avx512_bf16_decode_reads,
    .stage = amx_stage,
    .pack_q_rows = bf16_pack_q_rows,
};

static int amx_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &amx_geometry, bytes);
}

static int amx_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &amx_geometry, workspace);
}

const attn_variant attn_variant_amx = {
    .name = "amx",
    /* flash_amx.c is built with -mavx512f -mavx512bw -mavx512bf16 -mfma
     * -mamx-tile -mamx-bf16 */
    .required_features = ATTN_CPU_AVX512F | ATTN_CPU_AVX512BW | ATTN_CPU_AVX512BF16 | ATTN_CPU_FMA |
                         ATTN_CPU_AMX_TILE | ATTN_CPU_AMX_BF16,
    .description = "flash-attention-2 online softmax, Q.K^T and P.V on AMX tiles (tdpbf16ps), "
                   "softmax in AVX-512, P rounded to bf16; f32 Q: Q.K^T in f32 FMAs; decode: "
                   "avx512_bf16's kernel",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    /* as avx512_bf16: attn_exp_avx512_bf16p for the weights, 5.49 ulp */
    .exp_ulps = 6,
    .tiles = {.keys = KV_BLOCK,
              .rows = LANES * MAX_VECTORS,
              .lanes = LANES,
              .reg_rows = 2 * TROWS,
              .reg_keys = TKEYS,
              .reg_cols = 2 * 16},
    .roof = ATTN_ROOF_BF16_AMX,
    /* As avx512_bf16: K/V bf16 only, Q bf16 (tiles) or f32 (FMAs). */
    .q_types = ATTN_DTYPE_BIT(ATTN_F32) | ATTN_DTYPE_BIT(ATTN_BF16),
    .kv_types = ATTN_DTYPE_BIT(ATTN_BF16),
    .widening = ATTN_WIDEN_ON_LOAD, /* staged one key block at a time */
    .p_rounds = ATTN_DTYPE_BIT(ATTN_BF16),
    .denormals_are_zero = 1,
    .workspace_size = amx_workspace,
    .run = amx_run,
};
