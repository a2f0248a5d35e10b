/* flash_avx512_tiles.h — the avx512 variant's register-tile sizes, for
 * flash_block_generic.h. A header of its own so that tests/test_generic16.c
 * instantiates the generic kernel with exactly these on the portable
 * 16-lane primitives and checks, on any x86-64, the loops and edges the
 * avx512 kernel runs. Include after one vec_*.h header, before
 * flash_block_generic.h. */
#ifndef ATTN_FLASH_AVX512_TILES_H
#define ATTN_FLASH_AVX512_TILES_H

/* 16 lanes; up to 4 row vectors = 64 rows per tile, so each K/V element
 * fetched from L2/L3 feeds 64 query rows. Register tiles of 24 accumulators
 * (of 32 zmm): RT keys x NV row vectors for Q·Kᵀ, RC columns x NV for P·V,
 * which leaves room for the NV operand vectors; broadcasts come from memory.
 * All row vectors of a tile in one register tile (GROUP = 4).
 * 48 keys per block: a whole number of key groups for both RT = 6 (four row
 * vectors) and RT = 8 (64 keys wasted 2 of 66 key slots per block), and the
 * block's scores, 48 x 64 floats = 12 KiB, stay in L1 (48 KiB on Sapphire
 * Rapids) through the softmax and the d_v/RC passes of P·V; the queries,
 * d_k x 64 floats (32 KiB at d_k = 128), are reread by every key group of the
 * Q·Kᵀ pass from L1/L2. Measured against 64 keys (1 thread, n = 4096, 8
 * heads): 1.02-1.07x at d = 128; 32 keys was 0.98x, 96 keys 1.02-1.04x. */
enum { MAX_VECTORS = 4, GROUP = 4, KV_BLOCK = 48, MAX_RT = 8, MAX_RC = 16 };

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

#endif
