/* A narrow KV cache is an exact input: for every variant that widens on
 * load, O from f16/bf16 K and V is bitwise O from f32 K and V holding the
 * same values (widening is exact and the arithmetic after it the same). The
 * shapes make the online-softmax driver share each staged key block among a
 * group of query tiles (many tiles per head, few threads), stage per tile
 * (one tile per head), split the keys (decode) and read narrow K/V directly
 * (the avx2 and avx512 decode kernels); ragged tiles, GQA, causal and d_k != d_v, at 1 to
 * 3 threads. A variant that takes only narrow K/V: bitwise the same O at 1
 * to 3 threads on those shapes. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "dtype.h"
#include "variant.h"

static const attn_case cases[] = {
    /* 8 heads x 512 rows: tens of tiles a head, groups of 4 at <= 3 threads */
    {.shape = {1, 8, 8, 512, 512, 64, 64, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 8, 8, 512, 512, 64, 64, 1, 0.0f}, .data = DATA_NORMAL},
    /* GQA, ragged last group, d_k != d_v, a key range not a block multiple */
    {.shape = {2, 8, 2, 301, 333, 40, 24, 1, 0.0f}, .data = DATA_NORMAL},
    /* (the cases above split no key range at 1 to 3 threads) */
    /* one tile a head: no group */
    {.shape = {1, 2, 2, 20, 200, 32, 32, 0, 0.0f}, .data = DATA_NORMAL},
    /* decode: the few-rows kernels and the split */
    {.shape = {1, 32, 8, 1, 3000, 128, 128, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 4, 4, 1, 1000, 64, 64, 0, 0.0f}, .data = DATA_NORMAL},
};

enum { UNSPLIT_CASES = 3 };

static size_t elems(const attn_shape *s, int which)
{
    const size_t bh = (size_t)s->batch * (which == 1 ? s->heads_kv : s->heads_q);
    switch (which) {
    case 0:
        return bh * (size_t)s->n_q * (size_t)s->d_k; /* q */
    case 1:
        return bh * (size_t)s->n_kv * (size_t)s->d_k; /* k */
    case 2:
        return (size_t)s->batch * s->heads_kv * (size_t)s->n_kv * (size_t)s->d_v; /* v */
    default:
        return bh * (size_t)s->n_q * (size_t)s->d_v; /* o */
    }
}

static void check_case(check_tally *t, const attn_variant *v, const attn_case *c, int32_t kv)
{
    const attn_types narrow = {ATTN_F32, kv, ATTN_F32}, wide = {ATTN_F32, ATTN_F32, ATTN_F32};
    attn_case_buffers b;
    if (attn_case_buffers_alloc_typed(&b, &c->shape, &narrow) != 0) {
        CHECK(t, 0, "allocation");
        return;
    }
    const attn_shape s = attn_case_fill(c, 11, b.q, b.k, b.v);
    attn_case_buffers_narrow(&b, &s);
    const size_t nk = elems(&s, 1), nv = elems(&s, 2), no = elems(&s, 3);
    float *k32 = malloc(sizeof(float) * nk), *v32 = malloc(sizeof(float) * nv);
    float *o_narrow = malloc(sizeof(float) * no), *o_wide = malloc(sizeof(float) * no);
    char name[256];
    attn_case_name(v->name, c, name, sizeof name);
    if (!k32 || !v32 || !o_narrow || !o_wide) {
        CHECK(t, 0, "allocation");
    } else {
        attn_widen_portable(b.tk, kv, k32, nk);
        attn_widen_portable(b.tv, kv, v32, nv);
        for (int threads = 1; threads <= 3; threads++) {
            omp_set_num_threads(threads);
            memset(o_narrow, 0xFF, sizeof(float) * no);
            memset(o_wide, 0x7F, sizeof(float) * no);
            int rc1 = attn_run_typed(v->name, &s, &narrow, b.q, b.tk, b.tv, o_narrow);
            int rc2 = attn_run_typed(v->name, &s, &wide, b.q, k32, v32, o_wide);
            CHECK(t, rc1 == ATTN_OK && rc2 == ATTN_OK, "%s kv=%s threads=%d: runs returned %d, %d",
                  name, attn_dtype_name(kv), threads, rc1, rc2);
            size_t i = 0;
            while (i < no && memcmp(&o_narrow[i], &o_wide[i], sizeof(float)) == 0)
                i++;
            CHECK(t, i == no,
                  "%s kv=%s threads=%d: O[%zu] %.9g from the narrow cache, %.9g from f32 K/V "
                  "of the same values",
                  name, attn_dtype_name(kv), threads, i, i < no ? o_narrow[i] : 0.0,
                  i < no ? o_wide[i] : 0.0);
        }
    }
    free(k32);
    free(v32);
    free(o_narrow);
    free(o_wide);
    attn_case_buffers_free(&b);
}

/* A variant that takes no f32 K/V (avx512_bf16) has no f32 run to match:
 * its O in `types` must be bitwise the same at 1, 2 and 3 threads instead,
 * on the shapes with tiles enough that no thread count splits the keys
 * (a split's partial sums depend on the thread count by design): groups
 * of tiles sharing a staged block, causal diagonals, GQA, ragged tiles,
 * d_k != d_v. */
static void check_threads_only(check_tally *t, const attn_variant *v, const attn_case *c,
                               const attn_types *types)
{
    attn_case_buffers b;
    if (attn_case_buffers_alloc_typed(&b, &c->shape, types) != 0) {
        CHECK(t, 0, "allocation");
        attn_case_buffers_free(&b);
        return;
    }
    const attn_shape s = attn_case_fill(c, 11, b.q, b.k, b.v);
    attn_case_buffers_narrow(&b, &s);
    const size_t bytes = attn_dtype_size(types->o) * b.o_elems;
    void *one = malloc(bytes), *more = malloc(bytes);
    char name[256];
    attn_case_name(v->name, c, name, sizeof name);
    if (!one || !more) {
        CHECK(t, 0, "allocation");
    } else {
        omp_set_num_threads(1);
        int rc1 = attn_run_typed(v->name, &s, types, b.tq, b.tk, b.tv, one);
        for (int threads = 2; threads <= 3; threads++) {
            omp_set_num_threads(threads);
            memset(more, 0xFF, bytes);
            int rc = attn_run_typed(v->name, &s, types, b.tq, b.tk, b.tv, more);
            CHECK(t, rc1 == ATTN_OK && rc == ATTN_OK && memcmp(one, more, bytes) == 0,
                  "%s q=%s kv=%s: O at 1 thread and at %d differ bitwise (rc %d, %d)", name,
                  attn_dtype_name(types->q), attn_dtype_name(types->kv), threads, rc1, rc);
        }
    }
    free(one);
    free(more);
    attn_case_buffers_free(&b);
}

int main(void)
{
    check_tally t = {0, 0};
    const attn_types narrow_only[] = {{ATTN_F32, ATTN_BF16, ATTN_F32},
                                      {ATTN_BF16, ATTN_BF16, ATTN_BF16},
                                      {ATTN_F32, ATTN_F16, ATTN_F32},
                                      {ATTN_F16, ATTN_F16, ATTN_F16}};
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!attn_variant_runnable(v) || v->widening != ATTN_WIDEN_ON_LOAD)
            continue;
        if (!(attn_variant_type_set(v->kv_types) & ATTN_DTYPE_BIT(ATTN_F32))) {
            for (size_t c = 0; c < UNSPLIT_CASES; c++)
                for (size_t k = 0; k < sizeof narrow_only / sizeof narrow_only[0]; k++)
                    if (attn_variant_supports(v->name, &narrow_only[k]) == 1)
                        check_threads_only(&t, v, &cases[c], &narrow_only[k]);
            continue;
        }
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            check_case(&t, v, &cases[c], ATTN_F16);
            check_case(&t, v, &cases[c], ATTN_BF16);
        }
    }
    return check_report("narrow_kv", &t);
}
