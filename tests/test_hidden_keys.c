/* A key a row cannot see never reaches it (README, "Causal masking"): with
 * NaN written into one K row or one V row, every output row that cannot
 * see that key is bitwise what it was, and every row that sees it is NaN
 * (rule C). Verify's masked_nonfinite case plants its NaN and Inf at the
 * last two keys of small heads; these shapes put them where a kernel that
 * stages a key block for a group of query tiles meets a tile whose keys
 * end before the block's, at an odd key: 256 query heads over 4 K/V heads
 * at 2 query rows, so a tile is the 64 heads of one row (every row of it
 * sees the same keys: its last block is an unmasked one) and two such
 * tiles share each staged block at 1 thread; and a causal prefill whose
 * tiles end on odd keys inside shared blocks; and a causal decode of 4
 * rows a K/V head. Every variant in its default
 * types (default_types.h), at 1 and 3 threads; visibility computed here,
 * not by the library's helper. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "default_types.h"
#include "hidden_keys.h"
#include "variant.h"

static const attn_case cases[] = {
    {.shape = {1, 256, 4, 2, 290, 8, 8, 1, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 4, 4, 97, 97, 9, 7, 1, 0.0f}, .data = DATA_NORMAL},
    /* Causal decode, 2 query rows x 2 heads a K/V head: the few-rows
     * kernels' 4-row tile, whose first row does not see the last key, with
     * d_v wide enough (8 vectors and a tail) for avx512's one-pass P.V. */
    {.shape = {1, 8, 4, 2, 100, 40, 136, 1, 0.0f}, .data = DATA_NORMAL},
    /* Causal prefill whose diagonal blocks hold whole 32-key chunks that
     * every row of a 64-row tile sees, before and beside keys only some
     * see, with d_v over 16-column groups and a tail: what amx's tiles
     * may take and must stop short of (MHA; GQA, rows of 4 heads). */
    {.shape = {1, 2, 2, 200, 200, 32, 48, 1, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 4, 1, 96, 96, 40, 40, 1, 0.0f}, .data = DATA_NORMAL},
};

/* O with NaN in row j of K (which_k) or V of every K/V head, against the
 * clean O. */
static void check_key(check_tally *t, const attn_variant *v, const attn_case *c, const float *q,
                      const float *k, const float *vv, const float *clean, int32_t j, int which_k)
{
    const attn_shape *s = &c->shape;
    const int32_t d = which_k ? s->d_k : s->d_v;
    const size_t nk = (size_t)s->batch * s->heads_kv * s->n_kv * s->d_k;
    const size_t nv = (size_t)s->batch * s->heads_kv * s->n_kv * s->d_v;
    const size_t no = (size_t)s->batch * s->heads_q * s->n_q * s->d_v;
    float *kd = malloc(sizeof(float) * nk), *vd = malloc(sizeof(float) * nv);
    float *o = malloc(sizeof(float) * no);
    char name[256];
    attn_case_name(v->name, c, name, sizeof name);
    if (!kd || !vd || !o) {
        CHECK(t, 0, "allocation");
        free(kd);
        free(vd);
        free(o);
        return;
    }
    memcpy(kd, k, sizeof(float) * nk);
    memcpy(vd, vv, sizeof(float) * nv);
    memset(o, 0, sizeof(float) * no); /* as clean's: default_types.h keeps unwritten bits */
    hidden_keys_plant(s, which_k ? kd : vd, ATTN_F32, d, j);
    int rc = run_default_types(v->name, s, q, kd, vd, o);
    CHECK(t, rc == ATTN_OK, "%s: rc %d", name, rc);
    int changed = 0, missed = 0;
    if (rc == ATTN_OK)
        hidden_keys_count(s, ATTN_F32, o, clean, j, &changed, &missed);
    CHECK(t, changed == 0, "%s threads=%d: NaN in %s row %d changed a row that cannot see it", name,
          omp_get_max_threads(), which_k ? "K" : "V", (int)j);
    CHECK(t, missed == 0, "%s threads=%d: NaN in %s row %d did not reach every row that sees it",
          name, omp_get_max_threads(), which_k ? "K" : "V", (int)j);
    free(kd);
    free(vd);
    free(o);
}

static void check_case(check_tally *t, const attn_variant *v, const attn_case *c)
{
    const attn_shape *s = &c->shape;
    attn_case_buffers b;
    if (attn_case_buffers_alloc(&b, s) != 0) {
        CHECK(t, 0, "allocation");
        attn_case_buffers_free(&b);
        return;
    }
    attn_case_fill(c, 3, b.q, b.k, b.v);
    float *clean = calloc(b.o_elems, sizeof(float));
    CHECK(t, clean != NULL, "allocation");
    /* The last key (the first query row's tiles end just before it), the
     * one before, and one in the middle of a block; in a head of at most
     * ALL_KEYS keys, every key: wherever the library's tiles, blocks or
     * key pairs begin, some key is the first a tile's first row cannot
     * see (a kernel that takes keys before that one unmasked must stop
     * exactly there). */
    enum { ALL_KEYS = 128 };
    const int32_t some[] = {s->n_kv - 1, s->n_kv - 2, s->n_kv / 2 + 1};
    const int all = s->n_kv <= ALL_KEYS;
    const int32_t n_keys = all ? s->n_kv : (int32_t)(sizeof some / sizeof some[0]);
    for (int threads = 1; clean && threads <= 3; threads += 2) {
        omp_set_num_threads(threads);
        CHECK(t, run_default_types(v->name, s, b.q, b.k, b.v, clean) == ATTN_OK, "%s clean run",
              v->name);
        for (int32_t i = 0; i < n_keys; i++)
            for (int which_k = 0; which_k <= 1; which_k++)
                check_key(t, v, c, b.q, b.k, b.v, clean, all ? i : some[i], which_k);
    }
    free(clean);
    attn_case_buffers_free(&b);
}

int main(void)
{
    check_tally t = {0, 0};
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!attn_variant_runnable(v))
            continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            check_case(&t, v, &cases[c]);
    }
    return check_report("hidden_keys", &t);
}
