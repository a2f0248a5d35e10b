/* attn_exp_avx2 and its _hidden twin over arrays (exp_array.h); -mavx2
 * -mfma. */
#include "exp_array.h"
#include "simd_avx2.h"

/* One exp over an array, 8 lanes at a time, the tail masked. */
#define EXP_ARRAY(name, exp8)                                                                      \
    void name(const float *x, float *y, size_t n)                                                  \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + 8 <= n; i += 8)                                                                 \
            _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));                                 \
        if (i < n) {                                                                               \
            __m256i tail = attn_tail_mask_avx2((int)(n - i));                                      \
            _mm256_maskstore_ps(y + i, tail, exp8(_mm256_maskload_ps(x + i, tail)));               \
        }                                                                                          \
    }

EXP_ARRAY(attn_exp_avx2_array, attn_exp_avx2)
EXP_ARRAY(attn_exp_avx2_hidden_array, attn_exp_avx2_hidden)
