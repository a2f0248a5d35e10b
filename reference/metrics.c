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
static double ulp_distance(float got, float want)
{
    float scale = fabsf(want);
    if (scale < 0x1p-126f)
        scale = 0x1p-126f;
    double ulp = ldexp(1.0, ilogb(scale) - 23);
    return fabs((double)got - (double)want) / ulp;
}

void attn_err_row(attn_err_stats *e, const attn_ref_input *in, int32_t b, int32_t h, int32_t i,
                  const attn_ref_row *r, const float *got, int exp_ulps, int rescales)
{
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
    const float *v_top = attn_ref_v_row(in, b, h, r->top_key);
    const int exact_row = r->n_seen == 1 || r->top_gap >= 110.0;
    const double k_terms =
        (3.0 * r->n_seen + 2.0 * exp_ulps + 3.0 * rescales + 8.0) * unit_roundoff;
    const double weight_term = expm1(2.0 * r->sigma);
    for (int32_t c = 0; c < dv; c++) {
        const double o = r->o[c];
        if (isnan(o)) { /* NaN in a visible V row: that column is NaN */
            if (!isnan(got[c]))
                fail(e, "C (NaN in v: column must be NaN)", b, h, i, c, o, got[c], 0.0);
            continue;
        }
        if (!isfinite(got[c])) {
            fail(e, "A (non-finite output)", b, h, i, c, o, got[c], 0.0);
            continue;
        }
        const double err = fabs((double)got[c] - o);
        const double bound = weight_term * r->D[c] + k_terms * r->M[c];
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
            double u = ulp_distance(got[c], (float)o);
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
        if (exact_row && ulp_distance(got[c], v_top[c]) > 2.0)
            fail(e, "C (one visible/dominant key: O = that V row within 2 ulps)", b, h, i, c,
                 v_top[c], got[c], 0.0);
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
