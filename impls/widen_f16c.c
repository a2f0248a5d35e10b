/* widen_f16c.c — f16 and bf16 tensors widened to f32 in vector registers:
 * F16C's vcvtph2ps for f16 (exact, subnormals included), and for bf16 a
 * zero-extension to 32 bits and a 16-bit shift. The narrow types' kernels
 * (flash_driver.c) call it on one key block at a time, so the block they
 * read stays in L1 and a tensor is never converted whole. -mavx2 -mf16c. */
#include <immintrin.h>

#include "cpu_features.h"
#include "dtype.h"

static void widen_f16c(const void *src, int32_t t, float *dst, size_t n)
{
    if (t == ATTN_F32) {
        memcpy(dst, src, n * sizeof(float));
        return;
    }
    const uint16_t *h = src;
    size_t i = 0;
    if (t == ATTN_F16) {
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    } else {
        for (; i + 8 <= n; i += 8) {
            __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(h + i)));
            _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
        }
    }
    attn_widen_portable(h + i, t, dst + i, n - i);
}

attn_widen_fn attn_widen_best(void)
{
    const uint32_t need = ATTN_CPU_AVX2 | ATTN_CPU_F16C;
    return (attn_cpu()->features & need) == need ? widen_f16c : attn_widen_portable;
}
