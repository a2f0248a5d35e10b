#include "metrics.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const double unit_roundoff = 0x1p-24;

void attn_err_init(attn_err_stats *e)
{
    memset(e, 0, sizeof *e);
}

static void fail(attn_err_stats *e, const char *rule, int32_t b, int32_t h, int32_t i, int32_t c,
                 double expected, float got, double bound)
{
    if (e->failures++ == 0)
        snprintf(e->first_failure, sizeof e->first_failure,
                 "rule %s at b=%d,h=%d,i=%d,c=%d: expected %.9g got %.9g (bound %.3g)", rule,
                 (int)b, (int)h, (int)i, (int)c, expected, (double)got, bound);
}

/* Distance in float32 ulps between `got` and `want`, both finite. */
double attn_err_unit_roundoff(int32_t type)
{
    return type == 1 ? 0x1p-11 : type == 2 ? 0x1p-8 : 0x1p-24;
}

double attn_err_underflow_floor(int32_t type)
{
    return type == 1 ? 0x1p-25 : type == 2 ? 0x1p-134 : 0x1p-150;
}

/* |got - want| in ulps of type t at want (the subnormal ulp below the
 * smallest normal): f32 2^-126 / 23 fraction bits, f16 2^-14 / 10, bf16
 * 2^-126 / 7. */
static double ulp_distance_in(int32_t type, double got, double want)
{
    const int bits = type == 1 ? 10 : type == 2 ? 7 : 23;
    const double min_normal = type == 1 ? 0x1p-14 : 0x1p-126;
    double scale = fabs(want);
    if (scale < min_normal)
        scale = min_normal;
    double ulp = ldexp(1.0, ilogb(scale) - bits);
    return fabs(got - want) / ulp;
}

static double ulp_distance(float got, float want)
{
    return ulp_distance_in(0, got, want);
}

void attn_err_row(attn_err_stats *e, const attn_ref_input *in, int32_t b, int32_t h, int32_t i,
                  const attn_ref_row *r, const float *got, int exp_ulps, int rescales,
                  const attn_err_class *cls)
{
    const int32_t o_type = cls ? cls->o_type : 0, p_round = cls ? cls->p_round : 0;
    const int32_t dv = in->shape.d_v;
    /* Rule C: a row that sees no key is exactly +0. */
    if (r->n_seen == 0) {
        for (int32_t c = 0; c < dv; c++) {
            uint32_t bits;
            memcpy(&bits, &got[c], sizeof bits);
            if (bits != 0)
                fail(e, "C (no visible key: +0)", b, h, i, c, 0.0, got[c], 0.0);
        }
        return;
    }
    for (int32_t c = 0; c < dv; c++) {
        uint32_t bits;
        memcpy(&bits, &got[c], sizeof bits);
        if (bits == ATTN_UNSET_BITS) {
            fail(e, "C (element never written)", b, h, i, c, r->o[c], got[c], 0.0);
            return;
        }
    }
    if (r->inf_seen) {
        e->rows_skipped++;
        return;
    }
    /* Rule C: NaN in q or a visible K row poisons the whole row. */
    if (r->nan_in_qk) {
        for (int32_t c = 0; c < dv; c++)
            if (!isnan(got[c]))
                fail(e, "C (NaN in q/k: row must be NaN)", b, h, i, c, NAN, got[c], 0.0);
        return;
    }
    const int exact_row = r->n_seen == 1 || r->top_gap >= 110.0;
    const double k_ops = 3.0 * r->n_seen + 2.0 * exp_ulps + 3.0 * rescales + 8.0;
    const double k_terms = k_ops * unit_roundoff;
    /* Each of those float32 operations may also be off by 2^-150 absolute
     * where its result is subnormal: a correctly rounded subnormal O (or
     * one computed through subnormal weights) must not fail rule A. */
    const double k_floor = k_ops * attn_err_underflow_floor(0);
    const double weight_term = expm1(2.0 * r->sigma);
    /* The class terms (docs/accuracy-classes.md): each weight rounded once
     * to t before P·V, normaliser of rounded or unrounded weights; O
     * rounded once to its type, plus that type's underflow floor. */
    const double u_p = p_round ? attn_err_unit_roundoff(p_round) : 0.0;
    const double p_term = 2.0 * u_p / (1.0 - u_p);
    /* A weight below t's smallest normal is off by up to t's underflow
     * floor, absolute, not relative: at most n·floor·M_ic, the weights'
     * normaliser being >= 1 (the row's top weight is exp(0) = 1). */
    const double p_floor = p_round ? r->n_seen * attn_err_underflow_floor(p_round) : 0.0;
    const double u_o = o_type ? attn_err_unit_roundoff(o_type) : 0.0;
    const double o_floor = o_type ? attn_err_underflow_floor(o_type) : 0.0;
    for (int32_t c = 0; c < dv; c++) {
        const double o = r->o[c];
        if (isnan(o)) { /* NaN in a visible V row: that column is NaN */
            if (!isnan(got[c]))
                fail(e, "C (NaN in v: column must be NaN)", b, h, i, c, o, got[c], 0.0);
            continue;
        }
        const double b32 = weight_term * r->D[c] + k_terms * r->M[c] + k_floor + p_term * r->D[c] +
                           p_floor * r->M[c];
        const double bound = b32 + u_o * (fabs(o) + b32) + o_floor;
        /* Rule C: an f16 O beyond its range is +-Inf, as the conversion
         * gives (65520 = 65504 + half an ulp rounds up). */
        if (o_type == 1 && fabs(o) - b32 >= 65520.0) {
            if (!(isinf(got[c]) && (got[c] > 0) == (o > 0)))
                fail(e, "C (f16 O beyond 65504 must be Inf)", b, h, i, c, o, got[c], 0.0);
            continue;
        }
        if (o_type == 1 && isinf(got[c]) && (got[c] > 0) == (o > 0) && fabs(o) + b32 >= 65520.0)
            continue; /* within the bound of a value that rounds to Inf */
        if (!isfinite(got[c])) {
            fail(e, "A (non-finite output)", b, h, i, c, o, got[c], 0.0);
            continue;
        }
        const double err = fabs((double)got[c] - o);
        e->elements++;
        e->sq_err += err * err;
        e->sq_ref += o * o;
        if (r->M[c] > 0) {
            double em = err / r->M[c] / unit_roundoff;
            if (em > e->e_m)
                e->e_m = em;
        }
        if (r->D[c] > 0) {
            double ed = err / r->D[c] / unit_roundoff;
            if (ed > e->e_d)
                e->e_d = ed;
        }
        if (fabs(o) >= 0x1p-10 * r->M[c]) {
            double u = o_type ? ulp_distance_in(o_type, got[c], o) : ulp_distance(got[c], (float)o);
            if (u > e->max_ulp)
                e->max_ulp = u;
        }
        double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0);
        if (ratio > e->worst_ratio || e->elements == 1) {
            e->worst_ratio = ratio;
            e->bound_u = r->M[c] > 0 ? bound / r->M[c] / unit_roundoff : 0.0;
        }
        if (err > bound)
            fail(e, "A (a-priori bound)", b, h, i, c, o, got[c], bound);
        const double v_top = attn_ref_v_value(in, b, h, r->top_key, c);
        if (exact_row && !o_type && ulp_distance(got[c], (float)v_top) > 2.0)
            fail(e, "C (one visible/dominant key: O = that V row within 2 ulps)", b, h, i, c, v_top,
                 got[c], 0.0);
        if (exact_row && o_type && ulp_distance_in(o_type, got[c], v_top) > 1.0)
            fail(e, "C (one visible/dominant key: O = that V row within 1 ulp of O's type)", b, h,
                 i, c, v_top, got[c], 0.0);
    }
}

void attn_err_merge(attn_err_stats *dst, const attn_err_stats *src)
{
    if (src->e_m > dst->e_m)
        dst->e_m = src->e_m;
    if (src->e_d > dst->e_d)
        dst->e_d = src->e_d;
    if (src->max_ulp > dst->max_ulp)
        dst->max_ulp = src->max_ulp;
    if (src->worst_ratio > dst->worst_ratio || dst->elements == 0) {
        dst->worst_ratio = src->worst_ratio;
        dst->bound_u = src->bound_u;
    }
    dst->sq_err += src->sq_err;
    dst->sq_ref += src->sq_ref;
    dst->elements += src->elements;
    dst->rows_skipped += src->rows_skipped;
    if (src->failures && !dst->failures)
        memcpy(dst->first_failure, src->first_failure, sizeof dst->first_failure);
    dst->failures += src->failures;
}

double attn_err_nmse(const attn_err_stats *e)
{
    return e->sq_ref > 0 ? e->sq_err / e->sq_ref : (e->sq_err > 0 ? INFINITY : 0.0);
}
