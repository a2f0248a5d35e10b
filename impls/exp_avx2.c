/* attn_exp_avx2 over an array (exp_array.h); -mavx2 -mfma. */
#include "exp_array.h"
#include "simd_avx2.h"

void attn_exp_avx2_array(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, attn_exp_avx2(_mm256_loadu_ps(x + i)));
    if (i < n) {
        __m256i tail = attn_tail_mask_avx2((int)(n - i));
        _mm256_maskstore_ps(y + i, tail, attn_exp_avx2(_mm256_maskload_ps(x + i, tail)));
    }
}
