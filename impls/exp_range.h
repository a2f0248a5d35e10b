/* exp_range.h — the clamp range both vector exps (exp_avx2.h,
 * exp_avx512.h) share: below it e^x rounds to 0, above it overflows. */
#ifndef ATTN_EXP_RANGE_H
#define ATTN_EXP_RANGE_H

static const float attn_exp_x_min = -110.0f; /* e^-110 and below round to 0 */
static const float attn_exp_x_max = 90.0f;   /* e^90 and above overflow to +inf */

#endif
