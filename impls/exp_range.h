/* exp_range.h — the range of the vector exps (exp_avx2.h, exp_avx512.h):
 * below it they give +0, above it e^x overflows; the AVX2 exp's domain
 * stops lower (its x above it give e^40). */
#ifndef ATTN_EXP_RANGE_H
#define ATTN_EXP_RANGE_H

/* Below it the vector exps give +0, not the subnormal e^x: their results
 * are 0 or normal. e^-87.33 = 1.1827e-38, just above FLT_MIN (1.1755e-38).
 * Why: on Intel cores an instruction that produces or reads a subnormal
 * float takes a microcode assist, and a softmax weight e^(s - max) is
 * subnormal wherever a score lies 87.3 or more below its row's max (peaked
 * attention; every key the causal mask hides, whose -inf score the exp
 * used to clamp to e^-110). On a Sapphire Rapids, scale 2 at n 1024,
 * d 128 (most weights of a row subnormal) took avx512 86x, xsmm 84x,
 * avx2 65x and blas 17x their time at the usual scale, and PyTorch's
 * attention no longer than at the usual scale. What a flushed weight
 * leaves out of O is at most 2^-126·max|v| a key, far inside rule A's
 * u·M terms (docs/accuracy-classes.md, "Subnormal weights"). */
static const float attn_exp_x_flush = -87.33f;
static const float attn_exp_x_max = 90.0f;      /* e^90 and above overflow to +inf */
static const float attn_exp_avx2_x_max = 40.0f; /* attn_exp_avx2's domain: x <= 40 */

#endif
