/* xsmm's softmax step in AVX2 and in AVX-512 (attn_block_softmax_avx2 and
 * _avx512, block_softmax.h) against the plain C form (attn_block_softmax_c,
 * which xsmm runs with libm's exp and ran with the vector exps before),
 * given the same ISA's exp over arrays: the same weights, m, l, alpha and
 * rescaled accumulator bit for bit (NaNs as NaNs), and the same answer to
 * "did some alpha move". Tiles of 8 to 64 rows (multiples of the step's lanes), blocks of
 * 1 to 64 keys, open and masked (rows that see none, some or all of the
 * block's keys), rows that have seen nothing yet (m = -inf), scores with
 * NaN, -inf and +inf, and scales from tiny to large. A step this CPU
 * cannot run is skipped (exit 77 when it runs neither). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "block_softmax.h"
#include "cases.h"
#include "check.h"
#include "cpu_features.h"
#include "exp_array.h"
#include "flash_driver.h"

enum { MAX_ROWS = 64, MAX_KEYS = 64, MAX_DV = 40 };

typedef int (*softmax_step_fn)(const flash_tile *t, int32_t j0, int32_t nb, int masked,
                               float *alpha);

/* A vector step, what it needs, its lanes and the exp over arrays that
 * gives the C form its bits. */
typedef struct vector_step {
    const char *name;
    uint32_t needs;
    int32_t lanes;
    softmax_step_fn step;
    attn_exp_array_fn exp_array;
} vector_step;

/* The same bits, or both NaN (a NaN's payload may follow the operand
 * order the compiler picked for an add). */
static int same(const float *a, const float *b, size_t n, size_t *where)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t x, y;
        memcpy(&x, a + i, 4);
        memcpy(&y, b + i, 4);
        if (x != y && !(isnan(a[i]) && isnan(b[i]))) {
            *where = i;
            return 0;
        }
    }
    return 1;
}

typedef struct tile_arrays {
    float *scores, *m, *l, *alpha, *acc;
    int32_t *seen;
} tile_arrays;

/* Compares one vector step with the C form over the case grid and checks
 * its "moved" answer; returns the cases run. */
static int check_step(check_tally *t, const vector_step *vs, tile_arrays *a, attn_rng *rng);

int main(void)
{
    check_tally t = {0};
    attn_rng rng = {0x9e3779b97f4a7c15u};
    const vector_step steps[] = {
        {"avx2", ATTN_CPU_AVX2 | ATTN_CPU_FMA, 8, attn_block_softmax_avx2, attn_exp_avx2_array},
        {"avx512", ATTN_CPU_AVX512F | ATTN_CPU_FMA, 16, attn_block_softmax_avx512,
         attn_exp_avx512_array},
    };
    tile_arrays a[2];
    for (int k = 0; k < 2; k++) {
        a[k].scores = aligned_alloc(64, MAX_ROWS * MAX_KEYS * sizeof(float));
        a[k].m = aligned_alloc(64, MAX_ROWS * sizeof(float));
        a[k].l = aligned_alloc(64, MAX_ROWS * sizeof(float));
        a[k].alpha = aligned_alloc(64, MAX_ROWS * sizeof(float));
        a[k].seen = aligned_alloc(64, MAX_ROWS * sizeof(int32_t));
        a[k].acc = aligned_alloc(64, MAX_ROWS * MAX_DV * sizeof(float));
        if (!a[k].scores || !a[k].m || !a[k].l || !a[k].alpha || !a[k].seen || !a[k].acc) {
            fprintf(stderr, "block_softmax: out of memory\n");
            return 1;
        }
    }
    int ran = 0;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if ((attn_cpu()->features & steps[i].needs) != steps[i].needs) {
            printf("block_softmax: %s step skipped, this CPU lacks its features\n", steps[i].name);
            continue;
        }
        printf("block_softmax: %s step, %d cases\n", steps[i].name,
               check_step(&t, &steps[i], a, &rng));
        ran++;
    }
    for (int k = 0; k < 2; k++)
        free(a[k].scores), free(a[k].m), free(a[k].l), free(a[k].alpha), free(a[k].seen),
            free(a[k].acc);
    if (!ran) {
        printf("block_softmax: skipped, this CPU runs neither step\n");
        return 77;
    }
    return check_report("block_softmax", &t);
}

static int check_step(check_tally *t, const vector_step *vs, tile_arrays *a, attn_rng *rng)
{
    const int32_t row_counts[] = {8, 16, 24, 32, 48, 64}, key_counts[] = {1, 5, 8, 63, 64};
    const float scales[] = {0.125f, 1.0f, 3.0f, 1e-30f};
    const int32_t j0 = 128;
    int cases = 0;
    for (size_t ri = 0; ri < sizeof row_counts / sizeof row_counts[0]; ri++)
        for (size_t ki = 0; ki < sizeof key_counts / sizeof key_counts[0]; ki++)
            for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++)
                for (int masked = 0; masked <= 1; masked++)
                    for (int special = 0; special <= 1; special++) {
                        const int32_t rows = row_counts[ri], nb = key_counts[ki];
                        /* 1 to MAX_DV columns of accumulator, with the
                         * special values too (a NaN or Inf in acc stays). */
                        const int32_t d_v = 1 + cases % MAX_DV;
                        if (rows % vs->lanes)
                            continue;
                        for (int32_t i = 0; i < rows * d_v; i++) {
                            float x = (float)(4.0 * attn_rng_uniform(rng) - 2.0);
                            if (special) {
                                double u = attn_rng_uniform(rng);
                                x = u < 0.05 ? NAN : u < 0.08 ? INFINITY : u < 0.1 ? -0.0f : x;
                            }
                            a[0].acc[i] = a[1].acc[i] = x;
                        }
                        flash_tile tile[2];
                        /* Inputs, the same in both copies. */
                        for (int32_t i = 0; i < rows * nb; i++) {
                            float x = (float)(8.0 * attn_rng_uniform(rng) - 4.0);
                            if (special) {
                                double u = attn_rng_uniform(rng);
                                x = u < 0.05 ? NAN : u < 0.1 ? -INFINITY : u < 0.12 ? INFINITY : x;
                            }
                            a[0].scores[i] = a[1].scores[i] = x;
                        }
                        for (int32_t r = 0; r < rows; r++) {
                            double u = attn_rng_uniform(rng);
                            /* m: nothing seen yet, below, inside or above
                             * the block's scores. */
                            float m = u < 0.25   ? -INFINITY
                                      : u < 0.5  ? -20.0f
                                      : u < 0.75 ? (float)(2.0 * attn_rng_uniform(rng) - 1.0)
                                                 : 30.0f;
                            a[0].m[r] = a[1].m[r] = m;
                            a[0].l[r] = a[1].l[r] =
                                m == -INFINITY ? 0.0f : (float)(1 + attn_rng_uniform(rng));
                            /* Rows that see none, some or all of the keys. */
                            int32_t seen = j0 - 2 + (int32_t)(attn_rng_uniform(rng) * (nb + 4));
                            a[0].seen[r] = a[1].seen[r] = seen;
                        }
                        for (int k = 0; k < 2; k++) {
                            memset(&tile[k], 0, sizeof tile[k]);
                            tile[k].rows = rows;
                            tile[k].d_v = d_v;
                            tile[k].acc = a[k].acc;
                            tile[k].scale = scales[si];
                            tile[k].scores = a[k].scores;
                            tile[k].m = a[k].m;
                            tile[k].l = a[k].l;
                            tile[k].seen = a[k].seen;
                        }
                        int moved = vs->step(&tile[0], j0, nb, masked, a[0].alpha);
                        int moved_c = attn_block_softmax_c(&tile[1], j0, nb, masked, a[1].alpha,
                                                           vs->exp_array);
                        size_t at = 0;
                        CHECK(t, same(a[0].scores, a[1].scores, (size_t)rows * nb, &at),
                              "%s: rows %d, keys %d, scale %g, masked %d, special %d: weight [%zu] "
                              "%a, want %a",
                              vs->name, rows, nb, scales[si], masked, special, at, a[0].scores[at],
                              a[1].scores[at]);
                        CHECK(t, same(a[0].m, a[1].m, (size_t)rows, &at),
                              "%s: rows %d, keys %d, masked %d, special %d: m[%zu] %a, want %a",
                              vs->name, rows, nb, masked, special, at, a[0].m[at], a[1].m[at]);
                        CHECK(t, same(a[0].l, a[1].l, (size_t)rows, &at),
                              "%s: rows %d, keys %d, masked %d, special %d: l[%zu] %a, want %a",
                              vs->name, rows, nb, masked, special, at, a[0].l[at], a[1].l[at]);
                        CHECK(t, same(a[0].alpha, a[1].alpha, (size_t)rows, &at),
                              "%s: rows %d, keys %d, masked %d, special %d: alpha[%zu] %a, want %a",
                              vs->name, rows, nb, masked, special, at, a[0].alpha[at],
                              a[1].alpha[at]);
                        CHECK(t, same(a[0].acc, a[1].acc, (size_t)rows * d_v, &at),
                              "%s: rows %d, keys %d, d_v %d, masked %d, special %d: acc[%zu] %a, "
                              "want %a",
                              vs->name, rows, nb, d_v, masked, special, at, a[0].acc[at],
                              a[1].acc[at]);
                        CHECK(t, moved == moved_c,
                              "%s: rows %d, keys %d, masked %d, special %d: moved %d, want %d",
                              vs->name, rows, nb, masked, special, moved, moved_c);
                        cases++;
                    }
    /* A block that moves no max: alpha is 1 in every row and the step says
     * so, the accumulator untouched; one row's max moved: it says that, and
     * that row's accumulator, only it, is scaled by its alpha. */
    for (int moves = 0; moves <= 1; moves++) {
        const int32_t rows = 16, nb = 64, d_v = 3;
        flash_tile tile = {.rows = rows, .d_v = d_v, .scale = 1.0f};
        for (int32_t i = 0; i < rows * d_v; i++)
            a[0].acc[i] = 1.5f;
        tile.acc = a[0].acc;
        tile.scores = a[0].scores;
        tile.m = a[0].m;
        tile.l = a[0].l;
        tile.seen = a[0].seen;
        for (int32_t i = 0; i < rows * nb; i++)
            a[0].scores[i] = (float)(8.0 * attn_rng_uniform(rng) - 4.0);
        for (int32_t r = 0; r < rows; r++)
            a[0].m[r] = 10.0f, a[0].l[r] = 1.0f;
        if (moves)
            a[0].scores[5 * rows + 11] = 12.0f;
        int moved = vs->step(&tile, j0, nb, 0, a[0].alpha);
        int ones = 0;
        for (int32_t r = 0; r < rows; r++)
            ones += a[0].alpha[r] == 1.0f;
        CHECK(t, moved == moves && ones == rows - moves, "%s, %s: moved %d, %d of %d alphas 1",
              vs->name, moves ? "one max moved" : "no max moved", moved, ones, rows);
        int kept = 0;
        for (int32_t i = 0; i < rows * d_v; i++)
            kept += a[0].acc[i] == (i % rows == 11 && moves ? 1.5f * a[0].alpha[11] : 1.5f);
        CHECK(t, kept == rows * d_v && (!moves || a[0].alpha[11] < 1.0f),
              "%s, %s: %d of %d accumulator values as expected (alpha[11] %g)", vs->name,
              moves ? "one max moved" : "no max moved", kept, rows * d_v, a[0].alpha[11]);
    }
    return cases;
}
