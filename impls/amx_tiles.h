/* amx_tiles.h — the one AMX tile configuration the project uses: palette 1,
 * the first `tiles` tiles 16 rows x 64 bytes each (16 f32, or 32 bf16 = 16
 * pairs). For files compiled with -mamx-tile (the amx variant, the AMX
 * peak kernels), run only where the CPU has AMX and Linux granted its
 * tile state (cpu_features.c asks once). */
#ifndef ATTN_AMX_TILES_H
#define ATTN_AMX_TILES_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* The 64-byte operand of ldtilecfg (Intel SDM, LDTILECFG). */
typedef struct attn_tile_config {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} attn_tile_config;

static inline void attn_amx_configure(int tiles)
{
    attn_tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < tiles; t++) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = 16;
    }
    _tile_loadconfig(&cfg);
}

#endif
