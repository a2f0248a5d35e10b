/* The vectorised exps against double exp: the max ulp error over a dense
 * sweep of [-104, 89] (of [-87.33, ...] for the vector exps, which give +0
 * below attn_exp_x_flush instead of a subnormal, exp_range.h; of [..., 40]
 * for the AVX2 exp, whose domain stops there: the softmax passes it nothing
 * above a rounding of 0) must not
 * exceed the exp_ulps the variant declares in the table (rule A's c_exp),
 * and the special values must come out exactly: -inf -> 0, +inf -> +inf
 * (where it is in the domain), NaN -> NaN, very negative -> 0, 0 -> 1 (the
 * online softmax relies on exp(0) == 1 to skip rescales); above a capped
 * domain, e^(its top) exactly, never NaN or garbage. libm's expf, which
 * naive and stream use, is measured alongside. A SIMD exp this CPU cannot
 * run is a visible SKIP.
 *   test_exp             every 61st float of the range (~36 M values)
 *   test_exp --all       every float of the range (~2.2 G values; slow)
 *   test_exp --speed     also time each exp (ns per element, not checked) */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "cpu_features.h"
#include "exp_array.h"
#include "exp_range.h"
#include "variant.h"

static void libm_expf_array(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = expf(x[i]);
}

typedef struct exp_under_test {
    const char *name;    /* the exp's name */
    const char *variant; /* the table entry whose exp_ulps it must meet */
    attn_exp_array_fn fn;
    uint32_t needs; /* the CPU features the exp itself runs on */
    float x_top;    /* the domain's top: 89 (e^x overflows above 88.7) or lower */
    int plus_inf;   /* 1: +inf is in the domain; 0: the softmax never passes it */
    int flushes;    /* 1: +0 below attn_exp_x_flush, normal results above it */
} exp_under_test;

enum { AVX2_FMA = ATTN_CPU_AVX2 | ATTN_CPU_FMA, AVX512_FMA = ATTN_CPU_AVX512F | ATTN_CPU_FMA };
/* The sweep's top for a full-range exp: e^89 already overflows. */
#define FULL_RANGE_TOP 89.0f

static const exp_under_test exps[] = {
    {"libm expf", "stream", libm_expf_array, 0, FULL_RANGE_TOP, 1, 0},
    {"attn_exp_avx2", "avx2", attn_exp_avx2_array, AVX2_FMA, attn_exp_avx2_x_max, 1, 1},
    {"attn_exp_avx512", "avx512", attn_exp_avx512_array, AVX512_FMA, FULL_RANGE_TOP, 1, 1},
    /* xsmm calls the widest of the three the CPU runs: each must meet its
     * exp_ulps. */
    {"libm expf", "xsmm", libm_expf_array, 0, FULL_RANGE_TOP, 1, 0},
    {"attn_exp_avx2", "xsmm", attn_exp_avx2_array, AVX2_FMA, attn_exp_avx2_x_max, 1, 1},
    {"attn_exp_avx512", "xsmm", attn_exp_avx512_array, AVX512_FMA, FULL_RANGE_TOP, 1, 1},
    /* avx512_bf16: its weights on the coarse exp, alpha on avx512's. */
    {"attn_exp_avx512_bf16p", "avx512_bf16", attn_exp_avx512_bf16p_array, AVX512_FMA,
     FULL_RANGE_TOP, 0, 1},
    {"attn_exp_avx512", "avx512_bf16", attn_exp_avx512_array, AVX512_FMA, FULL_RANGE_TOP, 1, 1},
};

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* |y - e^x| in units in the last place of e^x rounded to float (subnormal
 * spacing 2^-149 below FLT_MIN). Overflow must give +inf exactly. */
static double ulp_error(float y, double ref)
{
    if (ref > FLT_MAX)
        return isinf(y) && y > 0 ? 0.0 : INFINITY;
    if (!isfinite(y))
        return INFINITY;
    int e;
    frexp(ref, &e);
    int exponent = e - 1 < FLT_MIN_EXP - 1 ? FLT_MIN_EXP - 1 : e - 1;
    return fabs((double)y - ref) / ldexp(1.0, exponent - (FLT_MANT_DIG - 1));
}

enum { CHUNK = 4096 };

typedef struct sweep_result {
    double max_ulp;
    float worst_x;
} sweep_result;

/* Bit patterns from `first` up to `last` (same sign) in steps of `stride`. */
static void sweep(attn_exp_array_fn fn, uint32_t first, uint32_t last, uint32_t stride,
                  sweep_result *res)
{
    static float x[CHUNK], y[CHUNK];
    size_t n = 0;
    for (uint64_t u = first; u <= last; u += stride) {
        x[n++] = from_bits((uint32_t)u);
        if (n == CHUNK || u + stride > last) {
            fn(x, y, n);
            for (size_t i = 0; i < n; i++) {
                double err = ulp_error(y[i], exp((double)x[i]));
                if (err > res->max_ulp) {
                    res->max_ulp = err;
                    res->worst_x = x[i];
                }
            }
            n = 0;
        }
    }
}

static void check_special_values(check_tally *t, const exp_under_test *e)
{
    const float x[] = {-INFINITY, INFINITY, NAN,   -1e30f, -1000.0f, -104.5f,
                       -110.0f,   0.0f,     -0.0f, 89.0f,  1e30f};
    float y[sizeof x / sizeof x[0]];
    e->fn(x, y, sizeof x / sizeof x[0]);
    CHECK(t, y[0] == 0.0f, "%s(-inf) = %g, want 0", e->name, y[0]);
    CHECK(t, isnan(y[2]), "%s(NaN) = %g, want NaN", e->name, y[2]);
    for (int i = 3; i <= 6; i++)
        CHECK(t, y[i] == 0.0f, "%s(%g) = %g, want 0", e->name, x[i], y[i]);
    CHECK(t, y[7] == 1.0f && y[8] == 1.0f, "%s(+-0) = %g, %g, want exactly 1", e->name, y[7], y[8]);
    if (e->x_top >= FULL_RANGE_TOP) {
        CHECK(t, !e->plus_inf || (isinf(y[1]) && y[1] > 0), "%s(+inf) = %g, want +inf", e->name,
              y[1]);
        CHECK(t, isinf(y[9]) && isinf(y[10]), "%s(89), (1e30) = %g, %g, want +inf", e->name, y[9],
              y[10]);
        return;
    }
    /* A capped domain: everything above its top gives e^top. */
    float top = e->x_top, above[4] = {nextafterf(e->x_top, INFINITY), 89.0f, 1e30f, INFINITY};
    float y_top, y_above[4];
    e->fn(&top, &y_top, 1);
    e->fn(above, y_above, 4);
    CHECK(t, isfinite(y_top) && ulp_error(y_top, exp((double)top)) <= 1.0, "%s(%g) = %g", e->name,
          top, y_top);
    for (int i = 0; i < 4; i++)
        CHECK(t, y_above[i] == y_top, "%s(%g) = %g, want %s(%g) = %g (the capped domain)", e->name,
              above[i], y_above[i], e->name, top, y_top);
}

/* A flushing exp: exactly +0 for every x below attn_exp_x_flush (all
 * floats from it down to -inf at the stride), a normal float (never a
 * subnormal) from it up. */
static void check_flush(check_tally *t, const exp_under_test *e, uint32_t stride)
{
    static float x[CHUNK], y[CHUNK];
    uint32_t flush_bits;
    memcpy(&flush_bits, &attn_exp_x_flush, sizeof flush_bits);
    uint64_t bad = 0;
    float first = 0.0f;
    size_t n = 0;
    for (uint64_t u = (uint64_t)flush_bits + 1; u <= 0xff800000u; u += stride) {
        x[n++] = from_bits((uint32_t)u);
        if (n == CHUNK || u + stride > 0xff800000u) {
            e->fn(x, y, n);
            for (size_t i = 0; i < n; i++)
                if (!(y[i] == 0.0f && !signbit(y[i])) && !bad++)
                    first = x[i];
            n = 0;
        }
    }
    const float edge[] = {-INFINITY, nextafterf(attn_exp_x_flush, -INFINITY), -104.5f, -90.0f};
    float ye[4];
    e->fn(edge, ye, 4);
    for (int i = 0; i < 4; i++)
        bad += !(ye[i] == 0.0f && !signbit(ye[i]));
    CHECK(t, bad == 0, "%s: %llu x below %g not +0, the first %a", e->name, (unsigned long long)bad,
          (double)attn_exp_x_flush, (double)first);
    const float at[] = {attn_exp_x_flush, nextafterf(attn_exp_x_flush, 0.0f), -87.0f, -80.0f};
    float ya[4];
    e->fn(at, ya, 4);
    for (int i = 0; i < 4; i++)
        CHECK(t, ya[i] >= FLT_MIN, "%s(%a) = %a: below FLT_MIN (subnormal or 0)", e->name,
              (double)at[i], (double)ya[i]);
}

/* Every length 0..40 through the masked tails gives the element-wise result. */
static void check_tails(check_tally *t, const exp_under_test *e)
{
    float x[40], y[41], one[1];
    for (int i = 0; i < 40; i++)
        x[i] = -0.37f * (float)i;
    for (size_t n = 0; n <= 40; n++) {
        y[n] = 12345.0f; /* must survive: the tail stores only n elements */
        e->fn(x, y, n);
        int ok = y[n] == 12345.0f;
        for (size_t i = 0; i < n; i++) {
            e->fn(&x[i], one, 1);
            ok &= y[i] == one[0];
        }
        CHECK(t, ok, "%s over %zu elements differs from one at a time", e->name, n);
    }
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_speed(const exp_under_test *e)
{
    static float x[CHUNK], y[CHUNK];
    for (int i = 0; i < CHUNK; i++)
        x[i] = -30.0f * (float)i / CHUNK;
    double best = INFINITY;
    for (int rep = 0; rep < 200; rep++) {
        double t0 = seconds();
        e->fn(x, y, CHUNK);
        double dt = seconds() - t0;
        best = dt < best ? dt : best;
    }
    printf("  %-16s %.3f ns per element (best of 200 x %d)\n", e->name, best * 1e9 / CHUNK, CHUNK);
}

int main(int argc, char **argv)
{
    int all = 0, speed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0) {
            all = 1;
        } else if (strcmp(argv[i], "--speed") == 0) {
            speed = 1;
        } else {
            fprintf(stderr, "usage: test_exp [--all] [--speed]\n");
            return 2;
        }
    }
    /* A prime stride visits every exponent and a spread of mantissas. */
    const uint32_t stride = all ? 1 : 61;
    check_tally t = {0, 0};
    for (size_t i = 0; i < sizeof exps / sizeof exps[0]; i++) {
        const exp_under_test *e = &exps[i];
        const attn_variant *v = attn_find_variant(e->variant);
        CHECK(&t, v != NULL, "variant %s is not in the table", e->variant);
        if (!v)
            continue;
        const uint32_t lacks = e->needs & ~attn_cpu()->features;
        if (!attn_variant_runnable(v) || lacks) {
            char missing[128];
            if (lacks)
                attn_cpu_format(lacks, missing, sizeof missing);
            else
                attn_variant_missing(v, missing, sizeof missing);
            printf("SKIP %s (%s): this CPU lacks %s\n", e->name, v->name, missing);
            continue;
        }
        sweep_result res = {0.0, 0.0f};
        uint32_t top_bits;
        memcpy(&top_bits, &e->x_top, sizeof top_bits);
        sweep(e->fn, 0x00000000u, top_bits, stride, &res); /* +0 .. top */
        uint32_t low_bits = 0xc2d00000u;                   /* -104 */
        if (e->flushes)
            memcpy(&low_bits, &attn_exp_x_flush, sizeof low_bits);
        sweep(e->fn, 0x80000000u, low_bits, stride, &res); /* -0 .. the bottom */
        printf("%-16s max %.3f ulp at x = %a over [%g, %g] (float stride %u); %s declares "
               "exp_ulps = %d\n",
               e->name, res.max_ulp, (double)res.worst_x, (double)from_bits(low_bits),
               (double)e->x_top, stride, v->name, v->exp_ulps);
        CHECK(&t, res.max_ulp <= v->exp_ulps, "%s: %.3f ulp > exp_ulps %d of %s", e->name,
              res.max_ulp, v->exp_ulps, v->name);
        check_special_values(&t, e);
        if (e->flushes)
            check_flush(&t, e, stride);
        check_tails(&t, e);
        if (speed)
            print_speed(e);
    }
    return check_report("exp", &t);
}
