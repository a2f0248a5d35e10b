/* impls/dtype.h's conversions against definitions of their own: every f16
 * and bf16 bit pattern decoded from the formats' fields with ldexp, every
 * pattern widened and narrowed back, and narrowing judged against the two
 * neighbours of each value (nearest, ties to the even one) on every tie and
 * its neighbours, the subnormals, the overflow boundaries and a sweep of
 * f32 values. The vector widening (F16C) must give the portable bits. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dtype.h"

/* binary16 from its definition: 1 sign, 5 exponent (bias 15), 10 fraction. */
static double f16_value(uint16_t h)
{
    const int e = (h >> 10) & 0x1F, f = h & 0x3FF;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 31)
        return f ? NAN : sign * INFINITY;
    return sign * (e ? ldexp(1024.0 + f, e - 25) : ldexp((double)f, -24));
}

/* bf16 from its definition: 1 sign, 8 exponent (bias 127), 7 fraction. */
static double bf16_value(uint16_t h)
{
    const int e = (h >> 7) & 0xFF, f = h & 0x7F;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (e == 255)
        return f ? NAN : sign * INFINITY;
    return sign * (e ? ldexp(128.0 + f, e - 134) : ldexp((double)f, -133));
}

static int is_nan16(int32_t t, uint16_t h)
{
    return t == ATTN_F16 ? (h & 0x7C00) == 0x7C00 && (h & 0x3FF)
                         : (h & 0x7F80) == 0x7F80 && (h & 0x7F);
}

static double value16(int32_t t, uint16_t h)
{
    return t == ATTN_F16 ? f16_value(h) : bf16_value(h);
}

/* The correctly rounded t of x (finite, not NaN) from the definition: of
 * the two t values around |x|, the nearer, on a tie the one with an even
 * last bit; beyond the largest finite value plus half its ulp, Inf. The
 * magnitudes of t are monotone in their bit patterns, so the neighbours are
 * found by bisection over the patterns. */
static uint16_t round_reference(int32_t t, float x)
{
    const uint16_t sign = signbit(x) ? 0x8000 : 0, inf = t == ATTN_F16 ? 0x7C00 : 0x7F80;
    const double a = fabs((double)x);
    uint16_t lo = 0, hi = inf; /* value(lo) <= a < value(hi) once narrowed */
    if (a >= value16(t, inf - 1) + (value16(t, inf - 1) - value16(t, inf - 2)) / 2) {
        /* At or past the midpoint to the next power of two: the largest
         * finite value has an odd last bit, so the tie goes up too. */
        return sign | inf;
    }
    while (hi - lo > 1) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (value16(t, mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    const double dlo = a - value16(t, lo), dhi = value16(t, hi) - a;
    uint16_t r = dlo < dhi ? lo : dhi < dlo ? hi : (lo & 1) ? hi : lo;
    return sign | r;
}

static uint16_t narrow(int32_t t, float x)
{
    return t == ATTN_F16 ? attn_f32_to_f16(x) : attn_f32_to_bf16(x);
}

static float widen(int32_t t, uint16_t h)
{
    return t == ATTN_F16 ? attn_f16_to_f32(h) : attn_bf16_to_f32(h);
}

/* One narrowing against the reference; NaN must stay NaN (quiet, sign kept). */
static void check_narrow(check_tally *t, int32_t type, float x, long *count)
{
    uint16_t got = narrow(type, x);
    (*count)++;
    if (isnan(x)) {
        const uint16_t quiet = type == ATTN_F16 ? 0x0200 : 0x0040;
        CHECK(t, is_nan16(type, got) && (got & quiet) && !(got & 0x8000) == !signbit(x),
              "%s(NaN 0x%08x) = 0x%04x", attn_dtype_name(type), attn_f32_bits(x), got);
        return;
    }
    uint16_t want = round_reference(type, x);
    if (got != want)
        CHECK(t, got == want, "%s(%a = 0x%08x) = 0x%04x, want 0x%04x", attn_dtype_name(type),
              (double)x, attn_f32_bits(x), got, want);
}

/* Every pattern: widening is the definition's value exactly (NaN a NaN
 * with the payload kept), and narrowing it back gives the pattern again. */
static void test_every_pattern(check_tally *t, int32_t type)
{
    int bad_value = 0, bad_trip = 0;
    for (uint32_t p = 0; p <= 0xFFFF; p++) {
        const uint16_t h = (uint16_t)p;
        const float f = widen(type, h);
        const double want = value16(type, h);
        if (is_nan16(type, h)) {
            const uint16_t back = narrow(type, f);
            const uint32_t payload = type == ATTN_F16 ? (h & 0x3FFu) << 13 : (h & 0x7Fu) << 16;
            bad_value += !isnan(f) || (attn_f32_bits(f) & 0x7FFFFFu) != payload;
            /* NaN narrows to a quiet NaN of the same sign and payload. */
            const uint16_t quiet = type == ATTN_F16 ? 0x0200 : 0x0040;
            bad_trip += back != (h | quiet);
            continue;
        }
        bad_value += (double)f != want || !signbit(f) != !signbit(want);
        bad_trip += narrow(type, f) != h;
    }
    CHECK(t, bad_value == 0, "%s: %d patterns widen to the wrong value", attn_dtype_name(type),
          bad_value);
    CHECK(t, bad_trip == 0, "%s: %d patterns do not round-trip", attn_dtype_name(type), bad_trip);
}

/* Every midpoint of two adjacent t values (a tie when it is an f32 value,
 * which it is for every finite pair), and the f32 values either side. */
static void test_ties(check_tally *t, int32_t type, long *count)
{
    const uint16_t inf = type == ATTN_F16 ? 0x7C00 : 0x7F80;
    for (uint16_t h = 0; h < inf; h++) {
        const double mid = (value16(type, h) + value16(type, (uint16_t)(h + 1))) / 2;
        const float m = (float)mid;
        if ((double)m != mid) /* bf16 subnormal midpoints lie below f32's reach */
            continue;
        for (int s = 0; s < 2; s++) {
            const float x = s ? -m : m;
            check_narrow(t, type, x, count);
            check_narrow(t, type, nextafterf(x, 0.0f), count);
            check_narrow(t, type, nextafterf(x, s ? -INFINITY : INFINITY), count);
        }
    }
}

/* Named boundaries: what the header promises, by value. */
static void test_boundaries(check_tally *t)
{
    CHECK(t, attn_f32_to_f16(65504.0f) == 0x7BFF, "65504");
    CHECK(t, attn_f32_to_f16(nextafterf(65520.0f, 0.0f)) == 0x7BFF, "just below 65520");
    CHECK(t, attn_f32_to_f16(65520.0f) == 0x7C00, "65520 rounds to Inf");
    CHECK(t, attn_f32_to_f16(-65520.0f) == 0xFC00, "-65520 rounds to -Inf");
    CHECK(t, attn_f32_to_f16(FLT_MAX) == 0x7C00 && attn_f32_to_f16(INFINITY) == 0x7C00, "Inf");
    CHECK(t, attn_f32_to_f16(0x1p-24f) == 0x0001, "smallest subnormal");
    CHECK(t, attn_f32_to_f16(0x1p-25f) == 0x0000, "2^-25 ties to 0");
    CHECK(t, attn_f32_to_f16(nextafterf(0x1p-25f, 1.0f)) == 0x0001, "above 2^-25");
    CHECK(t, attn_f32_to_f16(0x3p-25f) == 0x0002, "3 x 2^-25 ties to 2 x 2^-24");
    CHECK(t, attn_f32_to_f16(0x1p-14f - 0x1p-25f) == 0x0400, "tie into the smallest normal");
    CHECK(t, attn_f32_to_f16(-0.0f) == 0x8000 && attn_f32_to_bf16(-0.0f) == 0x8000, "-0");
    CHECK(t, attn_f32_to_f16(1.0f + 0x1p-11f) == 0x3C00, "1 + half an ulp ties to 1");
    CHECK(t, attn_f32_to_f16(1.0f + 0x3p-11f) == 0x3C02, "1 + 3 half ulps ties up");
    CHECK(t, attn_f32_to_bf16(FLT_MAX) == 0x7F80, "bf16: FLT_MAX rounds to Inf");
    CHECK(t, attn_f32_to_bf16(0x1.fep127f) == 0x7F7F, "bf16: its largest value");
    CHECK(t, attn_f32_to_bf16(1.0f + 0x1p-8f) == 0x3F80, "bf16: tie to even, down");
    CHECK(t, attn_f32_to_bf16(1.0f + 0x3p-8f) == 0x3F82, "bf16: tie to even, up");
    CHECK(t, attn_f32_to_bf16(0x1p-149f) == 0x0000, "bf16: f32's smallest subnormal to 0");
    CHECK(t, attn_f32_to_bf16(0x1p-133f) == 0x0001, "bf16: its smallest subnormal");
    /* NaNs whose payload sits only in the bits narrowing drops must not
     * turn into Inf. */
    const uint32_t nans[] = {0x7F800001u, 0xFF800001u, 0x7FC00000u, 0x7F801FFFu, 0x7FFFFFFFu};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        float x = attn_bits_f32(nans[i]);
        CHECK(t, is_nan16(ATTN_F16, attn_f32_to_f16(x)), "f16 of NaN 0x%08x", nans[i]);
        CHECK(t, is_nan16(ATTN_BF16, attn_f32_to_bf16(x)), "bf16 of NaN 0x%08x", nans[i]);
        CHECK(t, isnan(attn_round_to(ATTN_F16, x)) && isnan(attn_round_to(ATTN_BF16, x)),
              "round_to of NaN 0x%08x", nans[i]);
    }
}

/* A sweep of f32: every exponent, mantissas at a prime stride and the ends,
 * both signs, NaN and Inf included. */
static void test_sweep(check_tally *t, int32_t type, long *count)
{
    for (uint32_t e = 0; e < 256; e++)
        for (uint32_t m = 0; m < (1u << 23); m += m < 16 || m > (1u << 23) - 16 ? 1 : 4099)
            for (uint32_t s = 0; s < 2; s++)
                check_narrow(t, type, attn_bits_f32(s << 31 | e << 23 | m), count);
    /* bf16 decides on the low 16 bits against half and the kept lsb: all
     * high halves with the deciding low halves. */
    if (type == ATTN_BF16) {
        const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
        for (uint32_t hi = 0; hi <= 0xFFFF; hi++)
            for (size_t i = 0; i < sizeof lows / sizeof lows[0]; i++)
                check_narrow(t, type, attn_bits_f32(hi << 16 | lows[i]), count);
    }
}

/* The widening the kernels call (F16C and AVX2 when present) gives the
 * portable bits for every pattern, at every offset of a vector. */
static void test_widen_best(check_tally *t)
{
    enum { N = 65536 + 7 };
    uint16_t *h = malloc(sizeof *h * N);
    float *a = malloc(sizeof *a * N), *b = malloc(sizeof *b * N);
    CHECK(t, h && a && b, "malloc");
    if (h && a && b) {
        for (size_t i = 0; i < N; i++)
            h[i] = (uint16_t)(i * 40503u); /* every pattern, in a scrambled order */
        const int32_t types[2] = {ATTN_F16, ATTN_BF16};
        for (int ti = 0; ti < 2; ti++)
            for (size_t off = 0; off < 3; off++) {
                attn_widen_portable(h + off, types[ti], a, N - off);
                attn_widen_best()(h + off, types[ti], b, N - off);
                size_t bad = 0;
                for (size_t i = 0; i < N - off; i++)
                    bad += isnan(a[i]) ? !isnan(b[i]) : attn_f32_bits(a[i]) != attn_f32_bits(b[i]);
                CHECK(t, bad == 0, "%s: widen_best differs from portable at %zu of %zu (off %zu)",
                      attn_dtype_name(types[ti]), bad, N - off, off);
            }
    }
    free(h);
    free(a);
    free(b);
}

/* The narrowing the driver calls (F16C and AVX2 when present) gives the
 * portable bits, NaN payloads included: every f32 pattern whose low half
 * is one of the rounding cases, a sweep of the rest, at every offset of a
 * vector. */
static void test_narrow_best(check_tally *t)
{
    enum { N = 65536 * 6 + 7 };
    const uint32_t lows[6] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
    float *x = malloc(sizeof *x * N);
    uint16_t *a = malloc(sizeof *a * N), *b = malloc(sizeof *b * N);
    CHECK(t, x && a && b, "malloc");
    if (x && a && b) {
        const int32_t types[2] = {ATTN_F16, ATTN_BF16};
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < N; i++) /* bf16 ties, then a scramble of every pattern */
                x[i] = attn_bits_f32(pass == 0 ? (uint32_t)(i / 6) << 16 | lows[i % 6]
                                               : (uint32_t)(i * 2654435761u));
            for (int ti = 0; ti < 2; ti++)
                for (size_t off = 0; off < 3; off++) {
                    attn_narrow_portable(x + off, types[ti], a, N - off);
                    attn_narrow_best()(x + off, types[ti], b, N - off);
                    size_t bad = 0;
                    for (size_t i = 0; i < N - off; i++)
                        bad += a[i] != b[i];
                    CHECK(t, bad == 0,
                          "%s: narrow_best differs from portable at %zu of %zu "
                          "(pass %d, off %zu)",
                          attn_dtype_name(types[ti]), bad, N - off, pass, off);
                }
        }
    }
    free(x);
    free(a);
    free(b);
}

int main(void)
{
    check_tally t = {0};
    long count = 0;
    const int32_t types[2] = {ATTN_F16, ATTN_BF16};
    for (int i = 0; i < 2; i++) {
        test_every_pattern(&t, types[i]);
        test_ties(&t, types[i], &count);
        test_sweep(&t, types[i], &count);
    }
    test_boundaries(&t);
    test_widen_best(&t);
    test_narrow_best(&t);
    CHECK(&t, count > 1000000, "only %ld narrowings checked", count);
    return check_report("dtype", &t);
}
