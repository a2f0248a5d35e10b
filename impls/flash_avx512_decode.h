/* The avx512 variant's decode kernel (flash_avx512_decode.c). */
#ifndef ATTN_FLASH_AVX512_DECODE_H
#define ATTN_FLASH_AVX512_DECODE_H

#include "flash_driver.h"

/* Heads with at most this many query rows in all (a power of two) go to
 * the decode kernel. */
enum { ATTN_AVX512_DECODE_ROWS = 8 };

/* A whole few-rows tile (rows 1, 2, 4 or 8); call only with AVX512F. */
void attn_avx512_decode_kernel(const flash_tile *t);

/* avx512_bf16's: 8-row tiles over a bf16 cache in its class (P rounded to
 * bf16, P·V on vdpbf16ps), any other tile as attn_avx512_decode_kernel;
 * call only with AVX512F, AVX512BW and AVX512_BF16. */
void attn_avx512_bf16_decode_kernel(const flash_tile *t);
/* Its geometry's few_reads: it reads bf16 K/V itself (the only type its
 * variants take). */
int attn_avx512_bf16_decode_reads(int32_t kv_type);

#endif
