/* One correctness case as `attnbench verify` judges it, for tests that run
 * a variant descriptor of their own (test_generic16, test_emu512): the case
 * in its types and class (c->p_round) over max(min_seeds, the case's own)
 * seeds, each row through rules A and C, then rule B against naive in the
 * same types and class. */
#ifndef ATTN_TEST_VERIFY_CASE_H
#define ATTN_TEST_VERIFY_CASE_H

#include "accuracy.h"
#include "cases.h"
#include "check.h"

static inline void check_verify_case(check_tally *t, const attn_variant *v,
                                     const attn_variant *naive, const attn_case *c, long min_seeds)
{
    char name[256], why[400] = "";
    attn_case_name(v->name, c, name, sizeof name);
    attn_case_buffers b;
    if (attn_case_buffers_alloc_typed(&b, &c->shape, &c->types) != 0) {
        CHECK(t, 0, "%s: cannot allocate", name);
        attn_case_buffers_free(&b);
        return;
    }
    attn_err_stats total, naive_total;
    attn_err_init(&total);
    attn_err_init(&naive_total);
    int ran = 1;
    const long least = attn_case_min_seeds(c), seeds = least > min_seeds ? least : min_seeds;
    for (long seed = 1; ran && seed <= seeds; seed++) {
        attn_shape s = attn_case_fill(c, (uint64_t)seed, b.q, b.k, b.v);
        attn_err_stats st, naive_st;
        ran = attn_verify_run_class(naive, &s, c->p_round, &b, &naive_st, why, sizeof why) == 0 &&
              attn_verify_run_class(v, &s, c->p_round, &b, &st, why, sizeof why) == 0;
        if (ran) {
            attn_err_merge(&naive_total, &naive_st);
            attn_err_merge(&total, &st);
        }
    }
    CHECK(t, ran, "%s: %s", name, why);
    CHECK(t, !ran || total.failures == 0, "%s: %s", name, total.first_failure);
    CHECK(t, !ran || attn_rule_b_holds(total.e_m, naive_total.e_m),
          "%s: rule B: E_M %.2fu vs naive %.2fu", name, total.e_m, naive_total.e_m);
    attn_case_buffers_free(&b);
}

#endif
