/* The AVX-512 online-softmax step of block_softmax.h: the AVX2 step's two
 * passes (block_softmax_avx2.c) on 16 lanes, the hidden keys by k-mask. */
#include "block_softmax.h"

#include <immintrin.h>
#include <math.h>

#include "exp_avx512.h"

/* Row vector v's scores of key j, scaled, -inf where the row does not see
 * key j0 + j (its seen count is not above it). */
static inline __m512 scaled(const float *s, __m512 scale, int masked, __m512i seen, int32_t key)
{
    const __m512 x = _mm512_mul_ps(_mm512_load_ps(s), scale);
    if (!masked)
        return x;
    const __mmask16 sees = _mm512_cmpgt_epi32_mask(seen, _mm512_set1_epi32(key));
    return _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), sees, x);
}

int attn_block_softmax_avx512(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha)
{
    const int32_t rows = t->rows;
    const __m512 scale = _mm512_set1_ps(t->scale), minus_inf = _mm512_set1_ps(-INFINITY);
    const __m512 one = _mm512_set1_ps(1.0f);
    unsigned moved = 0;
    /* One row vector at a time: its max, then its weights and sum, in
     * registers; a block's scores (at most 64 x 64 floats) stay in L1. */
    for (int32_t r = 0; r < rows; r += 16) {
        const __m512i seen = masked ? _mm512_load_si512(t->seen + r) : _mm512_setzero_si512();
        const __m512 m = _mm512_load_ps(t->m + r);
        float *s = t->scores + r;
        /* max(x, shift): shift when x is NaN, so a NaN score reaches O
         * through its exp, not through the max. */
        __m512 m_new = m;
        for (int32_t j = 0; j < nb; j++)
            m_new = _mm512_max_ps(scaled(s + (size_t)j * rows, scale, masked, seen, j0 + j), m_new);
        /* A row that has seen only -inf shifts by 0: exp(-inf) = 0, not
         * exp(-inf - -inf) = NaN. */
        const __m512 shift = _mm512_mask_mov_ps(
            m_new, _mm512_cmp_ps_mask(m_new, minus_inf, _CMP_EQ_OQ), _mm512_setzero_ps());
        const __m512 a = attn_exp_avx512(_mm512_sub_ps(m, shift));
        _mm512_storeu_ps(alpha + r, a);
        _mm512_store_ps(t->m + r, m_new);
        moved |= _mm512_cmp_ps_mask(a, one, _CMP_NEQ_UQ);
        __m512 sum = _mm512_setzero_ps();
        for (int32_t j = 0; j < nb; j++) {
            float *sj = s + (size_t)j * rows;
            const __m512 p =
                attn_exp_avx512(_mm512_sub_ps(scaled(sj, scale, masked, seen, j0 + j), shift));
            _mm512_store_ps(sj, p);
            sum = _mm512_add_ps(sum, p);
        }
        const __m512 l = _mm512_load_ps(t->l + r);
        _mm512_store_ps(t->l + r, _mm512_add_ps(_mm512_mul_ps(l, a), sum));
    }
    return moved != 0;
}
