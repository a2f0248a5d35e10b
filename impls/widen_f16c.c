/* widen_f16c.c — f16 and bf16 tensors widened to f32 in vector registers:
 * F16C's vcvtph2ps for f16 (exact, subnormals included), and for bf16 a
 * zero-extension to 32 bits and a 16-bit shift. The narrow types' kernels
 * (flash_driver.c) call it on one key block at a time, so the block they
 * read stays in L1 and a tensor is never converted whole. And the way
 * back, rounding to nearest even with dtype.h's exact bits (NaN quieted,
 * f16 overflow to Inf): vcvtps2ph with its rounding in the immediate, and
 * bf16's add-and-shift on 8 lanes. -mavx2 -mf16c. */
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

/* dtype.h's attn_f32_to_bf16 on 8 lanes. */
static __m128i narrow8_bf16(__m256 x)
{
    const __m256i b = _mm256_castps_si256(x);
    const __m256i abs = _mm256_and_si256(b, _mm256_set1_epi32(0x7FFFFFFF));
    /* Signed compare: abs is at most 0x7FFFFFFF, so no lane wraps. */
    const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F800000));
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), odd)), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0x0040));
    const __m256i h = _mm256_blendv_epi8(rounded, quiet, nan);
    /* 32-bit lanes <= 0xFFFF to 16 bits: packus works per 128-bit half. */
    return _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

static void narrow_f16c(const float *src, int32_t t, void *dst, size_t n)
{
    if (t == ATTN_F32) {
        memcpy(dst, src, n * sizeof(float));
        return;
    }
    uint16_t *h = dst;
    size_t i = 0;
    if (t == ATTN_F16) {
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i *)(h + i),
                             _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    } else {
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i *)(h + i), narrow8_bf16(_mm256_loadu_ps(src + i)));
    }
    attn_narrow_portable(src + i, t, h + i, n - i);
}

attn_narrow_fn attn_narrow_best(void)
{
    const uint32_t need = ATTN_CPU_AVX2 | ATTN_CPU_F16C;
    return (attn_cpu()->features & need) == need ? narrow_f16c : attn_narrow_portable;
}

attn_widen_fn attn_widen_best(void)
{
    const uint32_t need = ATTN_CPU_AVX2 | ATTN_CPU_F16C;
    return (attn_cpu()->features & need) == need ? widen_f16c : attn_widen_portable;
}
