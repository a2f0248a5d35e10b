/* The plain C online-softmax step of block_softmax.h: contiguous rows,
 * which the compiler vectorises for whatever ISA the file is built for
 * (the baseline), and an exp over arrays given by the caller. */
#include "block_softmax.h"

#include <assert.h>
#include <math.h>

int attn_block_softmax_c(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha,
                         attn_exp_array_fn exp_array)
{
    const int32_t rows = t->rows;
    assert(rows <= FLASH_MAX_VECTORS * 16);
    float shift[FLASH_MAX_VECTORS * 16], sum[FLASH_MAX_VECTORS * 16];
    for (int32_t r = 0; r < rows; r++)
        shift[r] = t->m[r];
    for (int32_t j = 0; j < nb; j++) {
        float *s = t->scores + (size_t)j * rows;
        for (int32_t r = 0; r < rows; r++) {
            float x = masked && j0 + j >= t->seen[r] ? -INFINITY : s[r] * t->scale;
            s[r] = x;
            shift[r] = x > shift[r] ? x : shift[r]; /* NaN: reaches the sum via exp */
        }
    }
    for (int32_t r = 0; r < rows; r++) {
        float m = shift[r];
        /* While a row has seen only -inf scores, shift by 0: exp(-inf) = 0
         * instead of exp(-inf - -inf) = NaN. */
        shift[r] = m == -INFINITY ? 0.0f : m;
        alpha[r] = t->m[r] - shift[r];
        t->m[r] = m;
        sum[r] = 0.0f;
    }
    exp_array(alpha, alpha, (size_t)rows);
    for (int32_t j = 0; j < nb; j++) {
        float *s = t->scores + (size_t)j * rows;
        for (int32_t r = 0; r < rows; r++)
            s[r] -= shift[r];
    }
    exp_array(t->scores, t->scores, (size_t)nb * rows);
    for (int32_t j = 0; j < nb; j++) {
        const float *s = t->scores + (size_t)j * rows;
        for (int32_t r = 0; r < rows; r++)
            sum[r] += s[r];
    }
    int moved = 0;
    for (int32_t r = 0; r < rows; r++) {
        t->l[r] = t->l[r] * alpha[r] + sum[r];
        moved |= !(alpha[r] == 1.0f);
    }
    /* Once every row's max has settled, alpha is 1 throughout: x·1 = x. */
    for (int32_t c = 0; moved && c < t->d_v; c++) {
        float *a = t->acc + (size_t)c * rows;
        for (int32_t r = 0; r < rows; r++)
            a[r] *= alpha[r];
    }
    return moved;
}
