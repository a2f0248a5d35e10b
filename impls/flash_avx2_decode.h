/* The avx2 variant's decode kernel (flash_avx2_decode.c). */
#ifndef ATTN_FLASH_AVX2_DECODE_H
#define ATTN_FLASH_AVX2_DECODE_H

#include "flash_driver.h"

/* Heads with at most this many query rows in all (a power of two) go to
 * the few-rows kernel: 8 is a whole vector of rows, where the block kernel
 * (rows as lanes) starts to fill its lanes. */
enum { ATTN_AVX2_DECODE_ROWS = 8 };

/* A whole few-rows tile (rows 1, 2, 4 or 8); call only with AVX2 and FMA. */
void attn_avx2_decode_kernel(const flash_tile *t);

#endif
