/* attn_exp_avx512 over an array (exp_array.h); -mavx512f -mfma. */
#include "exp_array.h"
#include "simd_avx512.h"

void attn_exp_avx512_array(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, attn_exp_avx512(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 tail = attn_tail_mask_avx512((int)(n - i));
        _mm512_mask_storeu_ps(y + i, tail, attn_exp_avx512(_mm512_maskz_loadu_ps(tail, x + i)));
    }
}
