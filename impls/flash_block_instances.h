/* flash_block_instances.h — the block functions a register-blocked kernel
 * hands the driver (flash_geometry.blocks): one copy of the kernel's
 *     FLASH_INLINE void fold_block(const flash_tile *t, int32_t j0, int32_t nb,
 *                                  const int nv, const int masked);
 * per row-vector count and mask flag, so that every loop of each copy
 * unrolls completely with its tile in registers, and the table of them
 *     static const flash_block_fn flash_blocks[FLASH_MAX_VECTORS][2];
 * indexed [row vectors - 1][masked]. Include once, after fold_block
 * (flash_block_generic.h does for the avx2 and avx512 kernels;
 * flash_avx512_bf16.c for its own). */
#ifndef ATTN_FLASH_BLOCK_INSTANCES_H
#define ATTN_FLASH_BLOCK_INSTANCES_H

#include "flash_driver.h"

static void block_1_open(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 1, 0);
}
static void block_1_masked(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 1, 1);
}
static void block_2_open(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 2, 0);
}
static void block_2_masked(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 2, 1);
}
static void block_3_open(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 3, 0);
}
static void block_3_masked(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 3, 1);
}
static void block_4_open(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 4, 0);
}
static void block_4_masked(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 4, 1);
}

_Static_assert(FLASH_MAX_VECTORS == 4, "flash_blocks spells out 1..4 row vectors");
static const flash_block_fn flash_blocks[FLASH_MAX_VECTORS][2] = {
    {block_1_open, block_1_masked},
    {block_2_open, block_2_masked},
    {block_3_open, block_3_masked},
    {block_4_open, block_4_masked},
};

#endif
