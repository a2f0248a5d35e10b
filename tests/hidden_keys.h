/* A key a row cannot see never reaches it: the rule test_hidden_keys
 * checks on every variant through the public API and test_emu512 on the
 * emulated AVX-512 copies, written once. Visibility is computed here, not
 * by the library's helper. */
#ifndef ATTN_TEST_HIDDEN_KEYS_H
#define ATTN_TEST_HIDDEN_KEYS_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "attn.h"
#include "dtype.h"

/* Row i (of n_q) sees key j: bottom-right causal alignment. */
static inline int hidden_keys_sees(const attn_shape *s, int32_t i, int32_t j)
{
    return !s->causal || j <= i + (s->n_kv - s->n_q);
}

/* NaN into row j of every K/V head of kv (elements of type t, rows of d). */
static inline void hidden_keys_plant(const attn_shape *s, void *kv, int32_t t, int32_t d, int32_t j)
{
    for (int32_t h = 0; h < s->batch * s->heads_kv; h++)
        for (int32_t e = 0; e < d; e++)
            attn_store_elem(kv, t, ((size_t)h * s->n_kv + (size_t)j) * (size_t)d + (size_t)e, NAN);
}

/* O (type t) of a run with NaN at key j against the clean O: how many
 * elements of rows that cannot see j changed bits (*changed), and how many
 * of rows that can are not NaN (*missed). */
static inline void hidden_keys_count(const attn_shape *s, int32_t t, const void *o,
                                     const void *clean, int32_t j, int *changed, int *missed)
{
    const size_t size = attn_dtype_size(t);
    const size_t rows = (size_t)s->batch * s->heads_q * s->n_q;
    *changed = *missed = 0;
    for (size_t r = 0; r < rows; r++) {
        const int sees = hidden_keys_sees(s, (int32_t)(r % (size_t)s->n_q), j);
        for (int32_t e = 0; e < s->d_v; e++) {
            const size_t at = r * (size_t)s->d_v + (size_t)e;
            if (!sees)
                *changed +=
                    memcmp((const char *)o + at * size, (const char *)clean + at * size, size) != 0;
            else
                *missed += !isnan(attn_load_elem(o, t, at));
        }
    }
}

#endif
