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
 * Key blocks are multiples of KV_BLOCK = 48 keys: a whole number of key
 * groups for both RT = 6 (four row vectors) and RT = 8 (64 keys wasted 2 of
 * 66 key slots per block), and of the decode kernel's 16/R-key groups. How
 * many per problem comes from the caches and the head size
 * (flash_key_block, capped at KV_TILE_MAX / KV_FEW_MAX keys): a 64-row
 * tile's block scores fill at most half of L1D, 96 keys (24 KiB) on a
 * 48 KiB L1D, 48 on a 32 KiB one; the queries, d_k x 64 floats (32 KiB at
 * d_k = 128), are reread by every key group of the Q·Kᵀ pass from L1/L2.
 * Measured on a Zen 5 (L1D 48 KiB, L2 1 MiB; 1 thread, n 2048-4096, 4-8
 * heads, alternating rounds of one process), against 48 keys: 96 keys
 * 1.004-1.013x at d 64, 80, 96, 128, 256, d_k 192 / d_v 128 and causal;
 * 24 keys 0.973-0.984x; 144-288 keys 0.998-1.016x. Decode (the few-rows
 * kernel): its block's K and V rows, as f32, take up to a quarter of L2
 * (240 keys at d 128, 96 at d 256, on 1 MiB; f16/bf16 caches the same
 * keys, so their bits stay those of f32 K/V of their values); against 48:
 * 192-288 keys 1.00-1.09x at d 128 (MHA and Hq 32 / Hkv 8, 1 and 2
 * threads), 96 keys 1.01-1.04x and 288-576 1.05-1.08x at d 256 on 1
 * thread, 24 keys 0.89-0.99x. */
/* PV_SERPENTINE 1: P·V's column tiles walk the block's keys alternately
 * forward and backward (flash_block_generic.h), each starting on the V rows
 * the tile before it ended on: a 96-key block's V rows at d_v = 128 (48 KiB)
 * beside its weights (24 KiB) outgrow a 48 KiB L1D. Sapphire Rapids, n 2048,
 * 4 heads, 1 thread, alternating rounds (scripts/ab.py): 1.06x at d 64,
 * 1.08x at d 128, 1.05-1.06x at d 80 causal, 96, 256 and d_k 192 / d_v 128;
 * n 4096, 8 heads, 2 threads, d 128: 1.07x. 48-key blocks with it 0.99x.
 * tests/test_pv_walk.c checks the order. */
enum { MAX_VECTORS = 4, GROUP = 4, KV_BLOCK = 48, MAX_RT = 8, MAX_RC = 16, PV_SERPENTINE = 1 };
enum { KV_TILE_MAX = 192, KV_FEW_MAX = 576, KV_FEW_ONE_PASS_MAX = 2304 };

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
