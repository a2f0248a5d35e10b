/* AMX-BF16 peak kernels: tdpbf16ps on tiles (each: 16 x 16 f32 results
 * from 16 x 32 by 32 x 16 bf16, 16384 flops), in two tilings: 2 x 2
 * accumulator tiles sharing two A and two B tiles (all 8 tiles), and 1 x 2.
 * Compiled with -mamx-tile -mamx-bf16 (harness/sources.cmake); peak_bf16.c
 * calls them only when the CPU has AMX-BF16 and Linux granted the tile
 * state (cpu_features.c asks once). */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "amx_tiles.h"
#include "peak_kernels.h"

/* bf16 2^-16 everywhere: each product pair adds 2^-31, no overflow. */
static void fill_operands(uint16_t *buf)
{
    for (int i = 0; i < 16 * 32; i++)
        buf[i] = 0x3780;
}

float attn_peak_tile_amx_2x2(long rounds)
{
    uint16_t ab[16 * 32] __attribute__((aligned(64)));
    float out[16 * 16] __attribute__((aligned(64)));
    fill_operands(ab);
    attn_amx_configure(8);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, ab, 64);
    _tile_loadd(5, ab, 64);
    _tile_loadd(6, ab, 64);
    _tile_loadd(7, ab, 64);
    for (long r = 0; r < rounds; r++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}

float attn_peak_tile_amx_1x2(long rounds)
{
    uint16_t ab[16 * 32] __attribute__((aligned(64)));
    float out[16 * 16] __attribute__((aligned(64)));
    fill_operands(ab);
    attn_amx_configure(5);
    _tile_zero(0);
    _tile_zero(1);
    _tile_loadd(2, ab, 64);
    _tile_loadd(3, ab, 64);
    _tile_loadd(4, ab, 64);
    for (long r = 0; r < rounds; r++) {
        _tile_dpbf16ps(0, 2, 3);
        _tile_dpbf16ps(1, 2, 4);
    }
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}

/* chains = tile products per round, lanes = flops / 2 per product. */
const attn_peak_fma_kernel attn_peak_bf16_amx_kernels[] = {
    {4, 8192, attn_peak_tile_amx_2x2},
    {2, 8192, attn_peak_tile_amx_1x2},
    {0, 0, 0},
};
