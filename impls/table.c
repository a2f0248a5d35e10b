/* The one table of variants: a list of pointers to the descriptors each
 * variant file exports, in the order of variants.inc. Nothing about a
 * variant is stated here; its file says it all (tiles from its kernel's own
 * constants, family, cost, exp accuracy). */
#include <string.h>

#include "variant.h"

#define ATTN_VARIANT(symbol, source) extern const attn_variant symbol;
#include "variants.inc"
#undef ATTN_VARIANT

const attn_variant *const attn_variant_table[] = {
#define ATTN_VARIANT(symbol, source) &symbol,
#include "variants.inc"
#undef ATTN_VARIANT
};
const int attn_variant_table_size = (int)(sizeof attn_variant_table / sizeof attn_variant_table[0]);

int attn_variant_tile_sizes(const attn_variant *v, int32_t out[ATTN_MAX_TILES])
{
    const int32_t all[ATTN_MAX_TILES] = {v->tiles.keys,     v->tiles.rows,     v->tiles.lanes,
                                         v->tiles.reg_rows, v->tiles.reg_keys, v->tiles.reg_cols};
    int n = 0;
    for (int i = 0; i < ATTN_MAX_TILES; i++) {
        int seen = all[i] <= 0;
        for (int j = 0; j < n && !seen; j++)
            seen = out[j] == all[i];
        if (!seen)
            out[n++] = all[i];
    }
    return n;
}

int attn_cost_too_slow(const attn_variant *v, const attn_shape *s)
{
    return v->cost == ATTN_COST_QUADRATIC_ONE_THREAD && s->n_q >= ATTN_QUADRATIC_ONE_THREAD_MAX_N &&
           s->n_kv >= ATTN_QUADRATIC_ONE_THREAD_MAX_N;
}
