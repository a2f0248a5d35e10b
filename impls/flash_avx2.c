/* avx2 — online softmax (FlashAttention-2 forward) with AVX2+FMA: the
 * generic block kernel (flash_block_generic.h) on the AVX2 primitives
 * (vec_avx2.h), with register tiles fitted to 16 ymm registers and no mask
 * registers (the causal mask is a blend: -inf into masked scores, and in
 * P·V the FMA result is blended back only into the rows that see the key).
 * The driver (flash_driver.c) owns tiles, threads and the key-block loop. */
#include "cpu_features.h"
#include "flash_avx2_decode.h"
#include "flash_driver.h"
#include "vec_avx2.h"

/* 8 lanes; up to 4 row vectors = 32 rows per tile, so each K/V element from
 * L2/L3 feeds 32 query rows. Register tiles of 12 accumulators: 6 keys x 2
 * row vectors for Q·Kᵀ and 6 columns x 2 row vectors for P·V, plus 2
 * operand vectors and one broadcast (AVX2 FMA cannot broadcast from
 * memory): 15 of 16 ymm. With one row vector, 8 keys or 12 columns. A tile
 * of 3 or 4 row vectors is walked in groups of 2. 64 keys per block: the
 * block's scores (64 x 32 floats = 8 KiB) and the queries (d_k x 32 floats,
 * 16 KiB at d_k = 128) stay in L1 (32-48 KiB). A constant, not avx512's
 * blocks from the caches (flash_key_block): the decode kernel's L2 plan
 * (flash_avx2_decode.c) is built around a 64-key block, and on a Zen 5
 * (L1D 48 KiB, L2 1 MiB; alternating rounds of one process) 128-256 keys
 * were 0.76-0.81x at 1 thread on Hq 32 / Hkv 8 decode (d 128, n_kv 32768)
 * and 0.95-0.97x at 2, with prefill flat (0.99-1.02x at d 64 and 128). */
enum {
    MAX_VECTORS = 4,
    GROUP = 2,
    KV_BLOCK = 64,
    RT_GROUP = 6, /* keys x 2 row vectors */
    RT_ONE = 8,   /* keys x 1 row vector */
    RC_GROUP = 6, /* columns x 2 row vectors */
    RC_ONE = 12,  /* columns x 1 row vector */
    MAX_RT = RT_ONE,
    MAX_RC = RC_ONE,
    PV_SERPENTINE = 1, /* a block's V rows outgrow L1 beside the tile: flash_block_generic.h */
};

static inline int keys_per_tile(int ng)
{
    return ng == GROUP ? RT_GROUP : RT_ONE;
}

static inline int cols_per_tile(int ng)
{
    return ng == GROUP ? RC_GROUP : RC_ONE;
}

/* After the primitives and the tiles it is written against. */
#include "flash_block_generic.h"

/* The decode kernel reads f16 and bf16 K/V itself (f16 with F16C). */
static int avx2_few_reads(int32_t kv_type)
{
    return kv_type != ATTN_F16 || (attn_cpu()->features & ATTN_CPU_F16C) != 0;
}

static const flash_geometry avx2_geometry = {
    .lanes = VEC_LANES,
    .max_rows = VEC_LANES * MAX_VECTORS,
    .kv_block = KV_BLOCK,
    .blocks = flash_blocks,
    .few_rows = ATTN_AVX2_DECODE_ROWS,
    .few_kernel = attn_avx2_decode_kernel,
    .few_reads = avx2_few_reads,
};

static int avx2_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &avx2_geometry, bytes);
}

static int avx2_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &avx2_geometry, workspace);
}

const attn_variant attn_variant_avx2 = {
    .name = "avx2",
    .required_features = ATTN_CPU_AVX2 | ATTN_CPU_FMA, /* flash_avx2.c: -mavx2 -mfma */
    .description = "flash-attention-2 online softmax, AVX2+FMA; query rows as vector lanes",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 1, /* attn_exp_avx2: 0.765 ulp (tests/test_exp --all) */
    .tiles = {.keys = KV_BLOCK,
              .rows = VEC_LANES * MAX_VECTORS,
              .lanes = VEC_LANES,
              .reg_keys = RT_GROUP,
              .reg_cols = RC_GROUP},
    .widening = ATTN_WIDEN_ON_LOAD, /* flash_driver.c: one key block at a time */
    .workspace_size = avx2_workspace,
    .run = avx2_run,
};
