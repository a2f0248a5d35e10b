/* avx512 decode — the few-rows kernel of the avx512 variant, P in f32:
 * flash_avx512_decode_body.h instantiated for rows 1, 2, 4, 8 and K/V in
 * f32, f16 and bf16. Moved whole from flash_avx512.c (prefill and decode
 * kernels are separate files). -mavx512f -mfma. */
#include "flash_avx512_decode_body.h"

/* The instances: rows 1, 2, 4, 8 x K/V in f32 (or staged), f16, bf16. */
#define FEW_KERNEL(R, T, name)                                                                     \
    static void name(const flash_tile *t)                                                          \
    {                                                                                              \
        few_blocks(t, R, T, FEW_PV_F32, (few_q_pairs){NULL, 0});                                   \
    }
FEW_KERNEL(1, ATTN_F32, few_1_f32)
FEW_KERNEL(2, ATTN_F32, few_2_f32)
FEW_KERNEL(4, ATTN_F32, few_4_f32)
FEW_KERNEL(8, ATTN_F32, few_8_f32)
FEW_KERNEL(1, ATTN_F16, few_1_f16)
FEW_KERNEL(2, ATTN_F16, few_2_f16)
FEW_KERNEL(4, ATTN_F16, few_4_f16)
FEW_KERNEL(8, ATTN_F16, few_8_f16)
FEW_KERNEL(1, ATTN_BF16, few_1_bf16)
FEW_KERNEL(2, ATTN_BF16, few_2_bf16)
FEW_KERNEL(4, ATTN_BF16, few_4_bf16)
FEW_KERNEL(8, ATTN_BF16, few_8_bf16)

static const flash_kernel few_kernels[ATTN_DTYPE_COUNT][4] = {
    [ATTN_F32] = {few_1_f32, few_2_f32, few_4_f32, few_8_f32},
    [ATTN_F16] = {few_1_f16, few_2_f16, few_4_f16, few_8_f16},
    [ATTN_BF16] = {few_1_bf16, few_2_bf16, few_4_bf16, few_8_bf16},
};

void attn_avx512_decode_kernel(const flash_tile *t)
{
    /* A staged block is f32 whatever the tensors' type. */
    const int32_t type = t->staged ? ATTN_F32 : t->kv_type;
    const int rows = t->rows == 1 ? 0 : t->rows == 2 ? 1 : t->rows == 4 ? 2 : 3;
    few_kernels[type][rows](t);
}
