/* For the tests that sweep every variant with f32 data: each variant runs
 * in its default element types (variant.h, attn_variant_default_types):
 * all f32 through attn_run for every variant that takes them, so those
 * tests stay what they were; a variant that takes no f32 K/V (avx512_bf16)
 * gets the data rounded to nearest even into its types, and its O widened
 * back to f32, so one f32 check serves it too. */
#ifndef ATTN_TEST_DEFAULT_TYPES_H
#define ATTN_TEST_DEFAULT_TYPES_H

#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "variant.h"

/* n f32 values rounded into a new buffer of type t (NULL stays NULL; the
 * caller frees). */
static inline void *default_types_narrow(const float *x, int32_t t, size_t n)
{
    if (!x)
        return NULL;
    void *y = malloc(n * attn_dtype_size(t) + 1);
    if (y)
        for (size_t i = 0; i < n; i++)
            attn_store_elem(y, t, i, x[i]);
    return y;
}

/* attn_run_typed of `name` in its default types on f32 q, k, v, O into o
 * as f32 (attn_run itself when those are all f32). O starts as o's
 * contents rounded to O's type, and an element whose bits the run left as
 * they were keeps o's own value: a canary the run never overwrote is still
 * the canary (so o must hold defined values before the call). A refused
 * call (bad shape, NULL buffer, a CPU without the variant's features) is
 * refused with the same code; ATTN_ENOMEM when the copies cannot be
 * allocated. */
static inline int run_default_types(const char *name, const attn_shape *s, const float *q,
                                    const float *k, const float *v, float *o)
{
    const attn_variant *var = attn_find_variant(name);
    if (!var || attn_variant_takes_f32(var) || !s || attn_check_shape(s, NULL, 0) != ATTN_OK)
        return attn_run(name, s, q, k, v, o);
    const attn_types t = attn_variant_default_types(var);
    const size_t nq = (size_t)s->batch * s->heads_q * s->n_q * s->d_k;
    const size_t nk = (size_t)s->batch * s->heads_kv * s->n_kv * s->d_k;
    const size_t nv = (size_t)s->batch * s->heads_kv * s->n_kv * s->d_v;
    const size_t no = (size_t)s->batch * s->heads_q * s->n_q * s->d_v;
    void *tq = default_types_narrow(q, t.q, nq), *tk = default_types_narrow(k, t.kv, nk);
    void *tv = default_types_narrow(v, t.kv, nv), *to = default_types_narrow(o, t.o, no);
    void *before = default_types_narrow(o, t.o, no);
    int rc = ATTN_ENOMEM;
    if ((tq || !q) && (tk || !k) && (tv || !v) && (to || !o) && (before || !o)) {
        rc = attn_run_typed(name, s, &t, tq, tk, tv, to);
        const size_t size = attn_dtype_size(t.o);
        for (size_t i = 0; rc == ATTN_OK && i < no; i++)
            if (memcmp((const char *)to + i * size, (const char *)before + i * size, size) != 0)
                o[i] = attn_load_elem(to, t.o, i);
    }
    free(tq);
    free(tk);
    free(tv);
    free(to);
    free(before);
    return rc;
}

#endif
