/* The blas variant and OpenBLAS's own threads. blas runs OpenMP over row
 * blocks with OpenBLAS set to 1 thread, or (fewer blocks than threads) lets
 * OpenBLAS thread each product; either way it changes OpenBLAS's global
 * thread count for the call only. Checked here, for both modes and several
 * OpenMP thread counts:
 *   - openblas_get_num_threads() after the call equals what it was before;
 *   - the result passes rules A and B and repeats bitwise;
 *   - the result does not depend on OpenBLAS's own setting before the call. */
#include <cblas.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "variant.h"

static const attn_case cases[] = {
    /* many row blocks: OpenMP over them, OpenBLAS at 1 thread */
    {.shape = {1, 2, 1, 300, 300, 32, 24, 1, 0.0f}, .data = DATA_NORMAL},
    /* one row: fewer blocks than threads, OpenBLAS threads the products */
    {.shape = {1, 1, 1, 1, 2000, 64, 64, 0, 0.0f}, .data = DATA_NORMAL},
    /* MQA decode: the 4 query heads fold into one block of 4 rows */
    {.shape = {1, 4, 1, 1, 700, 16, 16, 1, 0.0f}, .data = DATA_NAN_V},
};

static void check_case(check_tally *t, const attn_variant *blas, const attn_case *c)
{
    attn_case_buffers b;
    if (attn_case_buffers_alloc(&b, &c->shape) != 0) {
        CHECK(t, 0, "allocation");
        return;
    }
    attn_shape s = attn_case_fill(c, 3, b.q, b.k, b.v);
    char name[256], why[400] = "";
    attn_case_name(blas->name, c, name, sizeof name);
    float *first = malloc(sizeof(float) * b.o_elems);
    attn_err_stats naive_st, st;
    omp_set_num_threads(1);
    CHECK(t, attn_verify_run(attn_find_variant("naive"), &s, &b, &naive_st, why, sizeof why) == 0,
          "naive %s", why);
    for (int threads = 1; threads <= 3; threads++) {
        omp_set_num_threads(threads);
        for (int before = 1; before <= 3; before += 2) {
            openblas_set_num_threads(before);
            int ok = attn_verify_run(blas, &s, &b, &st, why, sizeof why) == 0;
            CHECK(t, openblas_get_num_threads() == before,
                  "%s threads=%d: OpenBLAS left at %d threads, was %d", name, threads,
                  openblas_get_num_threads(), before);
            CHECK(t, ok && st.failures == 0, "%s threads=%d: %s %s", name, threads, why,
                  st.first_failure);
            CHECK(t, attn_rule_b_holds(st.e_m, naive_st.e_m),
                  "%s threads=%d: rule B %.2fu vs naive %.2fu", name, threads, st.e_m,
                  naive_st.e_m);
            if (before == 1)
                memcpy(first, b.o, sizeof(float) * b.o_elems);
            else
                CHECK(t, memcmp(first, b.o, sizeof(float) * b.o_elems) == 0,
                      "%s threads=%d: result depends on OpenBLAS's prior setting", name, threads);
        }
    }
    free(first);
    attn_case_buffers_free(&b);
}

int main(void)
{
    check_tally t = {0};
    const attn_variant *blas = attn_find_variant("blas");
    if (!blas) {
        printf("SKIP blas_threads: no variant named blas in this build\n");
        return 0;
    }
    int saved = openblas_get_num_threads();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        check_case(&t, blas, &cases[c]);
    openblas_set_num_threads(saved);
    return check_report("blas_threads", &t);
}
