/* Threads: for a fixed thread count every variant is bitwise reproducible;
 * across 1..4 threads each result passes rules A and B (each variant in
 * its default types and class). Shapes include a
 * decode step (split-KV across threads) and causal GQA prefill. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "variant.h"

static const attn_case cases[] = {
    {.shape = {2, 4, 2, 70, 70, 24, 24, 1, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 8, 2, 1, 3000, 64, 64, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 2, 1, 3, 1500, 16, 16, 1, 0.0f}, .data = DATA_RISING},
};

/* The case in v's default types and class (variant.h): all f32 for most,
 * bf16 for a variant that takes only bf16 K/V; naive in the same types and
 * class is rule B's yardstick. */
static void check_variant_case(check_tally *t, const attn_variant *v, const attn_case *c)
{
    const attn_types types = attn_variant_default_types(v);
    const int32_t p_round = attn_variant_default_p_round(v);
    attn_case_buffers b;
    if (attn_case_buffers_alloc_typed(&b, &c->shape, &types) != 0) {
        CHECK(t, 0, "allocation");
        attn_case_buffers_free(&b);
        return;
    }
    attn_shape s = attn_case_fill(c, 7, b.q, b.k, b.v);
    attn_case_buffers_narrow(&b, &s);
    const size_t o_bytes = attn_dtype_size(types.o) * b.o_elems;
    void *first = malloc(o_bytes);
    if (!first) {
        CHECK(t, 0, "allocation");
        attn_case_buffers_free(&b);
        return;
    }
    char name[256], why[400] = "";
    attn_case_name(v->name, c, name, sizeof name);
    attn_err_stats naive_st, st;
    omp_set_num_threads(1);
    CHECK(t,
          attn_verify_run_class(attn_find_variant("naive"), &s, p_round, &b, &naive_st, why,
                                sizeof why) == 0,
          "naive %s", why);
    for (int threads = 1; threads <= 4; threads++) {
        omp_set_num_threads(threads);
        int ok = attn_verify_run_class(v, &s, p_round, &b, &st, why, sizeof why) == 0;
        CHECK(t, ok && st.failures == 0, "%s threads=%d: %s %s", name, threads, why,
              st.first_failure);
        CHECK(t, attn_rule_b_holds(st.e_m, naive_st.e_m), "%s threads=%d: rule B %.2fu vs %.2fu",
              name, threads, st.e_m, naive_st.e_m);
        memcpy(first, b.o, o_bytes);
        ok = attn_verify_run_class(v, &s, p_round, &b, &st, why, sizeof why) == 0;
        CHECK(t, ok && memcmp(first, b.o, o_bytes) == 0, "%s threads=%d: two runs differ bitwise",
              name, threads);
    }
    free(first);
    attn_case_buffers_free(&b);
}

/* A fused variant's prefill with tiles enough that no thread count splits
 * the keys: O is bitwise the same at 1 and at 16 threads, though the
 * driver shares each K/V block among 4 query tiles of a head at 1 thread,
 * 2 at 8 threads and none at 16 (xsmm in f32 too; every variant with an
 * f16 cache). Order of the blocks per row never changes, so neither may a
 * bit. Each variant in its default types (bf16 for one that takes only
 * bf16 K/V: its staged, packed blocks shared the same way). */
static void check_groups(check_tally *t, const attn_variant *v)
{
    static const attn_case c[] = {
        {.shape = {1, 8, 8, 512, 512, 64, 64, 0, 0.0f}, .data = DATA_NORMAL},
        {.shape = {1, 8, 4, 500, 520, 48, 40, 1, 0.0f}, .data = DATA_NORMAL},
    };
    const attn_types types = attn_variant_default_types(v);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        attn_case_buffers b;
        if (attn_case_buffers_alloc_typed(&b, &c[i].shape, &types) != 0) {
            CHECK(t, 0, "allocation");
            attn_case_buffers_free(&b);
            return;
        }
        attn_shape s = attn_case_fill(&c[i], 5, b.q, b.k, b.v);
        attn_case_buffers_narrow(&b, &s);
        const size_t o_bytes = attn_dtype_size(types.o) * b.o_elems;
        void *one = malloc(o_bytes);
        char name[256];
        attn_case_name(v->name, &c[i], name, sizeof name);
        omp_set_num_threads(1);
        int rc1 = one ? attn_run_typed(v->name, &s, &types, b.tq, b.tk, b.tv, one) : -1;
        omp_set_num_threads(16);
        int rc16 = attn_run_typed(v->name, &s, &types, b.tq, b.tk, b.tv, b.o);
        CHECK(t, rc1 == ATTN_OK && rc16 == ATTN_OK && memcmp(one, b.o, o_bytes) == 0,
              "%s: O at 1 thread and at 16 differ bitwise (rc %d, %d)", name, rc1, rc16);
        free(one);
        attn_case_buffers_free(&b);
    }
}

int main(void)
{
    check_tally t = {0};
    for (int i = 0; i < attn_variant_table_size; i++) {
        if (!attn_variant_runnable(attn_variant_table[i]))
            continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            check_variant_case(&t, attn_variant_table[i], &cases[c]);
        if (attn_variant_table[i]->family == ATTN_FAMILY_ONLINE)
            check_groups(&t, attn_variant_table[i]);
    }
    return check_report("threads", &t);
}
