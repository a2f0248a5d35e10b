/* The AVX2 online-softmax step of block_softmax.h. */
#include "block_softmax.h"

#include <immintrin.h>
#include <math.h>

#include "exp_avx2.h"

/* Row vector v's scores of key j, scaled, -inf where the row does not see
 * key j0 + j (its seen count is not above it). */
static inline __m256 scaled(const float *s, __m256 scale, int masked, __m256i seen, int32_t key)
{
    const __m256 x = _mm256_mul_ps(_mm256_load_ps(s), scale);
    if (!masked)
        return x;
    const __m256 sees = _mm256_castsi256_ps(_mm256_cmpgt_epi32(seen, _mm256_set1_epi32(key)));
    return _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), x, sees);
}

int attn_block_softmax_avx2(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha)
{
    const int32_t rows = t->rows;
    const __m256 scale = _mm256_set1_ps(t->scale), minus_inf = _mm256_set1_ps(-INFINITY);
    const __m256 one = _mm256_set1_ps(1.0f);
    int moved = 0;
    /* One row vector at a time: its max, then its weights and sum, in
     * registers; a block's scores (at most 64 x 64 floats) stay in L1. */
    for (int32_t r = 0; r < rows; r += 8) {
        const __m256i seen =
            masked ? _mm256_load_si256((const __m256i *)(t->seen + r)) : _mm256_setzero_si256();
        const __m256 m = _mm256_load_ps(t->m + r);
        float *s = t->scores + r;
        /* max(x, shift): shift when x is NaN, so a NaN score reaches O
         * through its exp, not through the max. */
        __m256 m_new = m;
        for (int32_t j = 0; j < nb; j++)
            m_new = _mm256_max_ps(scaled(s + (size_t)j * rows, scale, masked, seen, j0 + j), m_new);
        /* A row that has seen only -inf shifts by 0: exp(-inf) = 0, not
         * exp(-inf - -inf) = NaN. */
        const __m256 shift = _mm256_blendv_ps(m_new, _mm256_setzero_ps(),
                                              _mm256_cmp_ps(m_new, minus_inf, _CMP_EQ_OQ));
        const __m256 a = attn_exp_avx2(_mm256_sub_ps(m, shift));
        _mm256_storeu_ps(alpha + r, a);
        _mm256_store_ps(t->m + r, m_new);
        moved |= _mm256_movemask_ps(_mm256_cmp_ps(a, one, _CMP_NEQ_UQ));
        __m256 sum = _mm256_setzero_ps();
        for (int32_t j = 0; j < nb; j++) {
            float *sj = s + (size_t)j * rows;
            const __m256 p =
                attn_exp_avx2(_mm256_sub_ps(scaled(sj, scale, masked, seen, j0 + j), shift));
            _mm256_store_ps(sj, p);
            sum = _mm256_add_ps(sum, p);
        }
        const __m256 l = _mm256_load_ps(t->l + r);
        _mm256_store_ps(t->l + r, _mm256_add_ps(_mm256_mul_ps(l, a), sum));
    }
    return moved != 0;
}
