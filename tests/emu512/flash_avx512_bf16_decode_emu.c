/* impls/flash_avx512_bf16_decode.c on SIMDe (simde_avx512.h) with
 * AVX512_BF16's instructions emulated to the bit (simde_avx512_bf16.h). */
#include "simde_avx512.h"
#include "simde_avx512_bf16.h"

#include "flash_avx512_bf16_decode.c"
