/* The decode kernel's P·V on vdpbf16ps, P rounded to bf16 (avx512_bf16's
 * class; docs/accuracy-classes.md): included by flash_avx512_decode_body.h
 * in the files that define ATTN_DECODE_PAIRS (AVX512BW, AVX512_BF16).
 *
 * Weights: each block's weights exp(s - m) (f32, the sum l adds them
 * unrounded) are rounded to bf16 once, nearest even, two keys' to a
 * 32-bit word per row: word j·R + r holds (p[2j][r], p[2j + 1][r]),
 * written over the block's scores (vcvtne2ps2bf16 + vpermw). An odd last
 * key pairs with weight 0.
 * P·V: the V rows of keys 2j and 2j + 1 interleaved per 32 columns by
 * vpunpcklwd / vpunpckhwd (words (v[2j][c], v[2j+1][c])), then one
 * vdpbf16ps per row adds both keys' products to 16 columns, the row's
 * word broadcast: half the multiply-adds of f32 FMAs and no widening. The
 * unpacks work within 128-bit lanes, so a register holds columns
 * {0-3, 8-11, 16-19, 24-27} (lo) or {4-7, ...} (hi) of its 32; the
 * accumulators are permuted into that order when loaded and back when
 * stored, once per block.
 * Causal blocks a row sees only part of (masked) keep the f32 path with
 * the weights rounded the same way: a pair there would need its second V
 * half zeroed per row, and only the blocks that the rows' visibility
 * limits straddle are masked (one or two a tile). */
#ifndef ATTN_FLASH_AVX512_DECODE_PV_BF16_H
#define ATTN_FLASH_AVX512_DECODE_PV_BF16_H

#include <stdint.h>

/* Word 2(i·R + r) + h of the result is word (2i + h)·R + r of x: the
 * weights of keys 2i and 2i + 1 for row r side by side, x holding 32/R
 * keys of R rows key-major. */
FLASH_INLINE __m512i pair_index(const int R)
{
    uint16_t idx[32];
    for (int i = 0; i < 16 / R; i++)
        for (int r = 0; r < R; r++)
            for (int h = 0; h < 2; h++)
                idx[2 * (i * R + r) + h] = (uint16_t)((2 * i + h) * R + r);
    return _mm512_loadu_si512(idx);
}

/* x rounded to bf16 (nearest even) and widened back: what vdpbf16ps
 * multiplies, for the f32 path of the masked blocks. */
FLASH_INLINE __m512 round_bf16(__m512 x)
{
    __m256i h = _mm512_castsi512_si256((__m512i)_mm512_cvtne2ps_pbh(x, x));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* The block's weights from its stored scores, as pairs (or, masked,
 * rounded f32 in place); returns their f32 sum per lane. s·scale rounded
 * before the max is subtracted, as the max was taken: the row's top key
 * gets exp(0) = 1 exactly, which bf16 holds. A fused s·scale - m gives
 * it exp(δ), δ the rounding error of s·scale (up to ~1e-3 for huge
 * logits), which l divides out of an f32 P but not out of a rounded one
 * (rule C's dominant key caught it, as in the prefill kernel). Groups of 16/R
 * keys, two at a time: the pairs of groups g, g + 1 go to words
 * [8g, 8g + 16), read before they are written. */
FLASH_INLINE __m512 few_weights_bf16(const flash_tile *t, int32_t nb, const int R, const int masked,
                                     __m512 scale, __m512 shift)
{
    const int kg = LANES / R;
    const int32_t groups = (nb + kg - 1) / kg;
    const __m512i index = pair_index(R);
    __m512 sum = _mm512_setzero_ps();
    for (int32_t g = 0; g < groups; g += 2) {
        float *s = t->scores + (size_t)g * LANES;
        __m512 p0 =
            attn_exp_avx512_bf16p(_mm512_sub_ps(_mm512_mul_ps(_mm512_load_ps(s), scale), shift));
        __m512 p1 = g + 1 < groups ? attn_exp_avx512_bf16p(_mm512_sub_ps(
                                         _mm512_mul_ps(_mm512_load_ps(s + LANES), scale), shift))
                                   : _mm512_setzero_ps();
        sum = _mm512_add_ps(_mm512_add_ps(sum, p0), p1);
        if (masked) {
            _mm512_store_ps(s, round_bf16(p0));
            if (g + 1 < groups) /* the scratch ends with the last group */
                _mm512_store_ps(s + LANES, round_bf16(p1));
        } else {
            _mm512_store_si512(
                t->scores + (size_t)g * (LANES / 2),
                _mm512_permutexvar_epi16(index, (__m512i)_mm512_cvtne2ps_pbh(p1, p0)));
        }
    }
    return sum;
}

/* acc + the products of the pairs in x and the broadcast pair word *w. */
FLASH_INLINE __m512 dot_pair_broadcast(__m512 acc, __m512i x, const uint32_t *w)
{
#ifdef __AVX512BF16__ /* not under the emulation of tests/emu512 */
    __asm__("vdpbf16ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(x), "m"(*w));
    return acc;
#else
    return _mm512_dpbf16_ps(acc, (__m512bh)x, (__m512bh)_mm512_set1_epi32((int)*w));
#endif
}

/* Lanes [0, n) of 16, n clamped to 0..16. */
FLASH_INLINE __mmask16 lanes_upto(int32_t n)
{
    return attn_tail_mask_avx512(n < 0 ? 0 : n > 16 ? 16 : (int)n);
}

/* Natural columns [0, 16) and [16, 32) to the unpacks' order and back. */
FLASH_INLINE __m512i lo_index(void)
{
    return _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
}
FLASH_INLINE __m512i hi_index(void)
{
    return _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
}
FLASH_INLINE __m512i first_index(void)
{
    return _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
}
FLASH_INLINE __m512i second_index(void)
{
    return _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
}

/* One key pair (or, single, the odd last key with a zero partner) into
 * the pass's 2R accumulators: the chunk's 32 columns from v0, masked by
 * `cols` (words past d_v read as zero). */
FLASH_INLINE void pair_step(const uint16_t *v0, int32_t d_v, const uint32_t *w, const int R,
                            __mmask32 cols, const int single, __m512 a[FEW_ROWS][2])
{
    __m512i x = cols == 0xffffffffu ? _mm512_loadu_si512(v0) : _mm512_maskz_loadu_epi16(cols, v0);
    __m512i y = _mm512_setzero_si512();
    if (!single)
        y = cols == 0xffffffffu ? _mm512_loadu_si512(v0 + d_v)
                                : _mm512_maskz_loadu_epi16(cols, v0 + d_v);
    __m512i lo = _mm512_unpacklo_epi16(x, y), hi = _mm512_unpackhi_epi16(x, y);
    for (int r = 0; r < R; r++) {
        a[r][0] = dot_pair_broadcast(a[r][0], lo, w + r);
        a[r][1] = dot_pair_broadcast(a[r][1], hi, w + r);
    }
}

/* All R rows, columns [c0, c0 + 32) ∩ [0, d_v), over the block's key
 * pairs, `per` lines of pf prefetched a pair. */
FLASH_INLINE void few_pv_bf16_pass(const flash_tile *t, int32_t j0, int32_t nb, int32_t c0,
                                   const int R, const float *alpha, int rescale, flash_prefetch *pf,
                                   int32_t per)
{
    const int32_t d_v = t->d_v;
    const int32_t n = d_v - c0; /* columns from c0 on (> 32: a full chunk) */
    const __mmask32 cols = n >= 32 ? 0xffffffffu : (__mmask32)((1u << n) - 1);
    __m512 a[FEW_ROWS][2];
    for (int r = 0; r < R; r++) {
        const float *src = t->acc_rm + (size_t)r * t->ld + c0; /* ld >= d_v floats */
        __m512 x0 = _mm512_maskz_loadu_ps(lanes_upto(n), src);
        __m512 x1 = _mm512_maskz_loadu_ps(lanes_upto(n - 16), src + 16);
        a[r][0] = _mm512_permutex2var_ps(x0, lo_index(), x1);
        a[r][1] = _mm512_permutex2var_ps(x0, hi_index(), x1);
        if (rescale) {
            a[r][0] = _mm512_mul_ps(a[r][0], _mm512_set1_ps(alpha[r]));
            a[r][1] = _mm512_mul_ps(a[r][1], _mm512_set1_ps(alpha[r]));
        }
    }
    const uint16_t *v0 =
        (const uint16_t *)flash_kv_base(t, 1, ATTN_BF16) + (size_t)(j0 - t->kv_row0) * d_v + c0;
    const uint32_t *w = (const uint32_t *)(const void *)t->scores;
    int32_t j = 0;
    for (; j + 2 <= nb; j += 2, v0 += 2 * (size_t)d_v, w += R) {
        for (int32_t k = 0; k < per; k++)
            flash_prefetch_step(pf);
        pair_step(v0, d_v, w, R, cols, 0, a);
    }
    if (j < nb)
        pair_step(v0, d_v, w, R, cols, 1, a);
    for (int r = 0; r < R; r++) {
        float *dst = t->acc_rm + (size_t)r * t->ld + c0;
        _mm512_mask_storeu_ps(dst, lanes_upto(n),
                              _mm512_permutex2var_ps(a[r][0], first_index(), a[r][1]));
        _mm512_mask_storeu_ps(dst + 16, lanes_upto(n - 16),
                              _mm512_permutex2var_ps(a[r][0], second_index(), a[r][1]));
    }
}

/* The block's P·V for all R rows (8 dispatched) in a pass per 32 columns,
 * 2R accumulators, each pass's columns of V read once. (Passes of more
 * chunks for fewer rows, 32 accumulators at 4 rows, were measured and not
 * taken: flash_avx512_bf16_decode.c.) The prefetch (FEW_PREFETCH ahead,
 * into L2) walks the block's V bytes in address order at one rate over all
 * passes (16 or 32 KiB ahead instead of 8: no better). */
FLASH_INLINE void few_pv_bf16(const flash_tile *t, int32_t j0, int32_t nb, const int R,
                              const float *alpha, int rescale)
{
    const int32_t passes = (t->d_v + 31) / 32;
    const int64_t bytes = (int64_t)nb * t->d_v * 2;
    const char *vb = flash_byte_at(flash_kv_base(t, 1, ATTN_BF16),
                                   (size_t)(j0 - t->kv_row0) * t->d_v, ATTN_BF16);
    flash_prefetch pf = flash_prefetch_bytes(vb + FEW_PREFETCH, bytes);
    const int32_t per = flash_prefetch_per_step(bytes, passes * (nb / 2));
    for (int32_t c = 0; c < passes; c++)
        few_pv_bf16_pass(t, j0, nb, 32 * c, R, alpha, rescale, &pf, per);
}

#endif
