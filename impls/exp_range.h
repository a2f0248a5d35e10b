/* exp_range.h — the clamp range of the vector exps (exp_avx2.h,
 * exp_avx512.h): below it e^x rounds to 0, above it overflows; the AVX2
 * exp's domain stops lower (its x above it give e^40). */
#ifndef ATTN_EXP_RANGE_H
#define ATTN_EXP_RANGE_H

static const float attn_exp_x_min = -110.0f;    /* e^-110 and below round to 0 */
static const float attn_exp_x_max = 90.0f;      /* e^90 and above overflow to +inf */
static const float attn_exp_avx2_x_max = 40.0f; /* attn_exp_avx2's domain: x <= 40 */

#endif
