/* exp_array.h — the vector exps over arrays, for tests/test_exp and
 * anything else that wants one ISA's exp outside a kernel (peak). Each is
 * compiled in its own file with its ISA's flags (exp_avx2.c, exp_avx512.c):
 * call only when attn_cpu() has the ISA's features. */
#ifndef ATTN_EXP_ARRAY_H
#define ATTN_EXP_ARRAY_H

#include <stddef.h>

/* y = e^x over n floats (y may be x): the form of each below. */
typedef void (*attn_exp_array_fn)(const float *x, float *y, size_t n);

void attn_exp_avx2_array(const float *x, float *y, size_t n);   /* avx2 + fma; x <= 40 */
void attn_exp_avx512_array(const float *x, float *y, size_t n); /* avx512f + fma */
/* avx512f + fma; any x but +inf (the softmax's weights never are) */
void attn_exp_avx512_bf16p_array(const float *x, float *y, size_t n);

#endif
