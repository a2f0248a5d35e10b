/* attn_exp_avx512 and attn_exp_avx512_bf16p over arrays (exp_array.h);
 * -mavx512f -mfma. */
#include "exp_array.h"
#include "simd_avx512.h"

/* One exp over an array, 16 lanes at a time, the tail masked. */
#define EXP_ARRAY(name, exp16)                                                                     \
    void name(const float *x, float *y, size_t n)                                                  \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + 16 <= n; i += 16)                                                               \
            _mm512_storeu_ps(y + i, exp16(_mm512_loadu_ps(x + i)));                                \
        if (i < n) {                                                                               \
            __mmask16 tail = attn_tail_mask_avx512((int)(n - i));                                  \
            _mm512_mask_storeu_ps(y + i, tail, exp16(_mm512_maskz_loadu_ps(tail, x + i)));         \
        }                                                                                          \
    }

EXP_ARRAY(attn_exp_avx512_array, attn_exp_avx512)
EXP_ARRAY(attn_exp_avx512_bf16p_array, attn_exp_avx512_bf16p)
