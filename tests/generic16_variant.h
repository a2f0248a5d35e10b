/* generic16_variant.h — the avx512 block kernel on the portable 16-lane
 * primitives as a variant of its own (`generic16`), run through the same
 * driver with avx512's tiles. Include after vec_portable16.h,
 * flash_avx512_tiles.h and flash_block_generic.h (which give it
 * flash_blocks), in one test file: test_generic16.c verifies it,
 * test_pv_walk.c logs its reads. */
#ifndef ATTN_TEST_GENERIC16_VARIANT_H
#define ATTN_TEST_GENERIC16_VARIANT_H

#include "flash_driver.h"
#include "variant.h"

static const flash_geometry generic16_geometry = {
    .lanes = VEC_LANES,
    .max_rows = VEC_LANES * MAX_VECTORS,
    .kv_block = KV_BLOCK,
    .blocks = flash_blocks,
};

static int generic16_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &generic16_geometry, bytes);
}

static int generic16_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &generic16_geometry, workspace);
}

static const attn_variant generic16 = {
    .name = "generic16",
    .description = "the avx512 block kernel on portable 16-lane primitives",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 1, /* expf */
    .tiles = {.keys = KV_BLOCK,
              .rows = VEC_LANES * MAX_VECTORS,
              .lanes = VEC_LANES,
              .reg_keys = 6,
              .reg_cols = 6},
    .workspace_size = generic16_workspace,
    .run = generic16_run,
};

#endif
