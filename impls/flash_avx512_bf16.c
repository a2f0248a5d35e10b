/* avx512_bf16 — online softmax (FlashAttention-2 forward) whose two GEMMs
 * run on vdpbf16ps (AVX512_BF16: pairs of bf16 products added into f32
 * lanes), in the class "P rounded to bf16": scores, max, exp, the sum l and
 * the accumulators stay f32; each weight exp(s - m) is rounded once to bf16
 * (nearest even) as it enters P·V, and l sums the unrounded weights.
 *
 * The tile is the avx512 kernel's: query rows as the 16 lanes of a zmm, up
 * to 4 row vectors, register tiles of 24 accumulators. Per key block:
 *   Q·Kᵀ   bf16 Q: each lane holds the pair (q[r][2c], q[r][2c+1]) as one
 *          32-bit word (packed once per tile, pack_q_rows), the key's pair
 *          (k[j][2c], k[j][2c+1]) is broadcast, and one vdpbf16ps adds both
 *          products: half the instructions of f32 FMAs. Products of two
 *          bf16 are exact in f32, so only the order of the additions is new.
 *          f32 Q (a bf16 KV cache under f32 queries): rounding Q to bf16
 *          would be an error outside the class, so Q·Kᵀ stays f32 FMAs on K
 *          widened (exactly) when the block is staged;
 *   softmax as the f32 kernel's, on an exp only as exact as the rounding
 *          to bf16 needs (attn_exp_avx512_bf16p), then the weights of two
 *          consecutive keys rounded and packed into one word per lane
 *          (vcvtne2ps2bf16 + vpermw), in place of their scores;
 *   P·V    V staged per key block as words (v[2j][c], v[2j+1][c]), one
 *          broadcast per column and key pair, vdpbf16ps into acc[c][r].
 * The driver stages each key block once for a group of up to 4 tiles
 * (flash_driver.h, geometry.stage): K as bf16 pairs or f32, V as key pairs.
 * A key a row must not see never reaches it: on the causal diagonal the
 * P·V of a pair is masked per lane (rows that see both keys, rows that see
 * only the first get the pair with its second V half zeroed), and an odd
 * last key pairs with a zero weight and a zero V half, so a NaN or Inf in
 * a hidden V row cannot make 0·Inf. vdpbf16ps treats subnormal inputs as
 * zero and flushes subnormal results (denormals-are-zero, declared).
 * Decode shapes go to a few-rows kernel, which reads bf16 K/V itself:
 * heads of 8 query rows with P·V on vdpbf16ps in this class, and under
 * bf16 Q heads of 8 and 4 rows with Q·Kᵀ on vdpbf16ps
 * (flash_avx512_bf16_decode.c); the rest to avx512's (P in f32, more
 * accurate than the class; pairs did not pay there). Needs AVX512F,
 * AVX512BW (vpermw), AVX512_BF16 and FMA. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "cpu_features.h"
#include "flash_avx512_decode.h"
#include "flash_driver.h"
#include "vec_avx512.h"

#include "flash_running_max.h"

#include "flash_bf16_pairs.h"

/* KV_BLOCK: a multiple of
 * both key tiles (6 and 8) and of 16 (the decode kernel's key groups).
 * 144 rather than avx512's 48: with the GEMMs twice as fast, what a block
 * costs besides them (P·V's accumulator tiles loaded, rescaled and stored
 * once per block, the softmax's per-block set-up) weighs twice as much.
 * Measured (1 thread, n = 4096, 8 heads, bf16): 48 -> 144 keys 1.07-1.10x
 * at d = 128 and 64; 96, 192, 240 and 288 within the noise of 144. */
enum { KV_BLOCK = 144 };

static void bf16_stage(const flash_tile *t, int32_t j0, int32_t nb, float *kbuf, float *vbuf)
{
    const uint16_t *k = (const uint16_t *)t->k_src + (size_t)j0 * t->d_k;
    const uint16_t *v = (const uint16_t *)t->v_src + (size_t)j0 * t->d_v;
    if (t->q_type != ATTN_BF16)
        stage_k_f32(k, nb, t->d_k, kbuf);
    else if (!k_in_place(t))
        stage_k_pairs(k, nb, t->d_k, kbuf);
    stage_v_pairs(v, nb, t->d_v, vbuf);
}

/* One key block [j0, j0 + nb) of a tile of nv row vectors. */
FLASH_INLINE void fold_block(const flash_tile *t, int32_t j0, int32_t nb, const int nv,
                             const int masked)
{
    __m512 bmax[MAX_VECTORS], alpha[MAX_VECTORS];
    for (int v = 0; v < nv; v++)
        bmax[v] = _mm512_set1_ps(-INFINITY);
    if (t->q_type == ATTN_BF16)
        block_scores(t, j0, nb, nv, masked, 1, bmax);
    else
        block_scores(t, j0, nb, nv, masked, 0, bmax);
    int rescale = softmax_pairs(t, nb, nv, bmax, alpha);
    const pv_source src = pv_pairs_of(t);
    pv_columns(t, j0, nb, 0, &src, 0, t->d_v, nv, masked, alpha, rescale);
}

/* One copy per row-vector count and mask flag: flash_blocks. */
#include "flash_block_instances.h"

static const flash_geometry bf16_geometry = {
    .lanes = LANES,
    .max_rows = LANES * MAX_VECTORS,
    .kv_block = KV_BLOCK,
    .blocks = flash_blocks,
    .few_rows = ATTN_AVX512_DECODE_ROWS,
    .few_kernel = attn_avx512_bf16_decode_kernel,
    .few_reads = attn_avx512_bf16_decode_reads,
    .stage = bf16_stage,
    .pack_q_rows = bf16_pack_q_rows,
};

static int bf16_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &bf16_geometry, bytes);
}

static int bf16_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &bf16_geometry, workspace);
}

const attn_variant attn_variant_avx512_bf16 = {
    .name = "avx512_bf16",
    /* flash_avx512_bf16.c is built with -mavx512f -mavx512bw -mavx512bf16 -mfma */
    .required_features = ATTN_CPU_AVX512F | ATTN_CPU_AVX512BW | ATTN_CPU_AVX512BF16 | ATTN_CPU_FMA,
    .description = "flash-attention-2 online softmax, Q.K^T and P.V on vdpbf16ps (AVX512_BF16), "
                   "P rounded to bf16; decode: P.V on vdpbf16ps for 8 rows a K/V head, "
                   "Q.K^T on vdpbf16ps for 8 and 4 under bf16 Q, avx512's kernel (P in f32) "
                   "otherwise",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    /* the weights: attn_exp_avx512_bf16p, 5.49 ulp; alpha: attn_exp_avx512,
     * 1.062 ulp (tests/test_exp --all) */
    .exp_ulps = 6,
    .tiles = {.keys = KV_BLOCK,
              .rows = LANES * MAX_VECTORS,
              .lanes = LANES,
              .reg_keys = 6 /* keys_per_tile(4) */},
    .roof = ATTN_ROOF_BF16_AVX512,
    /* K/V bf16 only: an f32 or f16 cache would have to be rounded to bf16,
     * an error outside the class. Q bf16 (vdpbf16ps) or f32 (f32 FMAs). */
    .q_types = ATTN_DTYPE_BIT(ATTN_F32) | ATTN_DTYPE_BIT(ATTN_BF16),
    .kv_types = ATTN_DTYPE_BIT(ATTN_BF16),
    .widening = ATTN_WIDEN_ON_LOAD, /* staged one key block at a time */
    .p_rounds = ATTN_DTYPE_BIT(ATTN_BF16),
    .denormals_are_zero = 1,
    .workspace_size = bf16_workspace,
    .run = bf16_run,
};
