/* avx512 — online softmax (FlashAttention-2 forward) with AVX-512F: the
 * generic block kernel (flash_block_generic.h) on the AVX-512 primitives
 * (vec_avx512.h: k-masks for the causal edge, masked FMAs so a hidden V row
 * never reaches a row), register tiles fitted to 32 zmm; decode shapes go
 * to the few-rows kernel (flash_avx512_decode.c). The driver
 * (flash_driver.c) owns tiles, threads and the key-block loop. Needs
 * AVX512F only (plus FMA, which every AVX-512 CPU has). */
#include "cpu_features.h"
#include "flash_avx512_decode.h"
#include "flash_avx512_tiles.h"
#include "flash_driver.h"
#include "vec_avx512.h"

/* After the primitives and the tiles it is written against. */
#include "flash_block_generic.h"

/* The decode kernel reads f16 and bf16 K/V itself (AVX512F widens both). */
static int avx512_few_reads(int32_t kv_type)
{
    (void)kv_type;
    return 1;
}

static const flash_block_rule avx512_blocks = {.tile_max = KV_TILE_MAX,
                                               .few_max = KV_FEW_MAX,
                                               .few_one_pass_max = KV_FEW_ONE_PASS_MAX,
                                               .few_one_pass = attn_avx512_decode_one_pass};

static const flash_geometry avx512_geometry = {
    .lanes = VEC_LANES,
    .max_rows = VEC_LANES * MAX_VECTORS,
    .kv_block = KV_BLOCK,
    .block_rule = &avx512_blocks,
    .blocks = flash_blocks,
    .few_rows = ATTN_AVX512_DECODE_ROWS,
    .few_kernel = attn_avx512_decode_kernel,
    .few_reads = avx512_few_reads,
};

static int avx512_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &avx512_geometry, bytes);
}

static int avx512_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &avx512_geometry, workspace);
}

const attn_variant attn_variant_avx512 = {
    .name = "avx512",
    /* flash_avx512.c is built with -mavx512f -mfma; AVX512F implies AVX2 */
    .required_features = ATTN_CPU_AVX512F | ATTN_CPU_FMA,
    .description = "flash-attention-2 online softmax, AVX-512F; query rows as vector lanes",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 2, /* attn_exp_avx512: 1.062 ulp (tests/test_exp --all) */
    .tiles = {.keys = KV_BLOCK,
              .rows = VEC_LANES * MAX_VECTORS,
              .lanes = VEC_LANES,
              .reg_keys = 6 /* keys_per_tile(4) */},
    .widening = ATTN_WIDEN_ON_LOAD, /* flash_driver.c: one key block at a time */
    .workspace_size = avx512_workspace,
    .run = avx512_run,
};
