/* The flash driver's transposes (transpose.h): each version this CPU runs
 * against the definition, bit for bit, over block-sized and ragged shapes,
 * strides wider than the rows, with and without the division (its divisors
 * and dividends including zeros, infinities, NaN and subnormals); nothing
 * outside the n_cols x n_rows destination is written. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_features.h"
#include "transpose.h"

static uint32_t bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Mostly ordinary values, one in 8 a special one. */
static float value(uint64_t *s)
{
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-41f, -3e-39f, 1.0f};
    uint64_t x = next(s);
    if (x % 8 == 0)
        return special[(x / 8) % 8];
    return (float)((int64_t)(x % 20001) - 10000) / 37.0f;
}

static const float SENTINEL = 12345.678f;

static void check_one(check_tally *t, const char *name, attn_transpose_fn fn, int32_t n_rows,
                      int32_t n_cols, size_t src_ld, size_t dst_ld, int with_div, uint64_t *seed)
{
    const size_t src_n = (size_t)n_rows * src_ld, dst_n = (size_t)n_cols * dst_ld;
    float *src = malloc(src_n * sizeof *src), *dst = malloc(dst_n * sizeof *dst);
    float *div = malloc((size_t)n_cols * sizeof *div);
    if (!src || !dst || !div) {
        CHECK(t, 0, "out of memory");
        free(src), free(dst), free(div);
        return;
    }
    for (size_t i = 0; i < src_n; i++)
        src[i] = value(seed);
    for (int32_t c = 0; c < n_cols; c++)
        div[c] = value(seed);
    for (size_t i = 0; i < dst_n; i++)
        dst[i] = SENTINEL;
    fn(src, src_ld, dst, dst_ld, n_rows, n_cols, with_div ? div : NULL);
    int wrong = 0, outside = 0;
    for (int32_t c = 0; c < n_cols; c++)
        for (size_t r = 0; r < dst_ld; r++) {
            const float got = dst[(size_t)c * dst_ld + r];
            if ((int32_t)r >= n_rows) {
                outside += bits(got) != bits(SENTINEL);
                continue;
            }
            const float x = src[r * src_ld + (size_t)c];
            const float want = with_div ? x / div[c] : x;
            if (bits(got) != bits(want) && !(isnan(got) && isnan(want)))
                wrong++;
        }
    CHECK(t, wrong == 0, "%s: %d x %d (ld %zu -> %zu, %s): %d elements wrong", name, (int)n_rows,
          (int)n_cols, src_ld, dst_ld, with_div ? "divided" : "moved", wrong);
    CHECK(t, outside == 0, "%s: %d x %d: %d elements written past the rows", name, (int)n_rows,
          (int)n_cols, outside);
    free(src);
    free(dst);
    free(div);
}

int main(void)
{
    check_tally t = {0};
    const uint32_t f = attn_cpu()->features;
    struct {
        const char *name;
        attn_transpose_fn fn;
        int runs;
    } impls[] = {
        {"portable", attn_transpose_portable, 1},
        {"avx2", attn_transpose_avx2, (f & ATTN_CPU_AVX2) != 0},
        {"avx512", attn_transpose_avx512, (f & ATTN_CPU_AVX512F) != 0},
    };
    const int32_t sizes[] = {1, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 64, 80, 128, 130};
    const int n_sizes = (int)(sizeof sizes / sizeof sizes[0]);
    uint64_t seed = 42;
    int ran = 0;
    for (size_t k = 0; k < sizeof impls / sizeof impls[0]; k++) {
        if (!impls[k].runs) {
            printf("test_transpose: %s not run (this CPU lacks it)\n", impls[k].name);
            continue;
        }
        ran++;
        for (int a = 0; a < n_sizes; a++)
            for (int b = 0; b < n_sizes; b++)
                for (int with_div = 0; with_div <= 1; with_div++) {
                    const int32_t rows = sizes[a], cols = sizes[b];
                    /* Strides equal to the width, and wider by an odd amount. */
                    check_one(&t, impls[k].name, impls[k].fn, rows, cols, (size_t)cols,
                              (size_t)rows, with_div, &seed);
                    check_one(&t, impls[k].name, impls[k].fn, rows, cols, (size_t)cols + 5,
                              (size_t)rows + 3, with_div, &seed);
                }
    }
    /* attn_transpose_best is one of those this CPU runs. */
    const attn_transpose_fn best = attn_transpose_best();
    CHECK(&t,
          best == ((f & ATTN_CPU_AVX512F) ? attn_transpose_avx512
                   : (f & ATTN_CPU_AVX2)  ? attn_transpose_avx2
                                          : attn_transpose_portable),
          "attn_transpose_best is not the widest this CPU runs");
    CHECK(&t, ran >= 1, "no version ran");
    return check_report("test_transpose", &t);
}
