/* The table is the one list everything derives from, so its
 * entries must be complete: unique names, the public index order, and the
 * fields the harness decides by (family, tiles, exp accuracy) consistent. */
#include <string.h>

#include "check.h"
#include "variant.h"

int main(void)
{
    check_tally t = {0};
    CHECK(&t, attn_variant_table_size >= 1, "empty table");
    CHECK(&t, attn_variant_count() == attn_variant_table_size, "public count %d vs table %d",
          attn_variant_count(), attn_variant_table_size);
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        CHECK(&t, v && v->name && v->name[0], "entry %d has no name", i);
        if (!v || !v->name)
            continue;
        CHECK(&t, v->description && v->description[0], "%s: no description", v->name);
        CHECK(&t, v->workspace_size && v->run, "%s: workspace_size or run missing", v->name);
        CHECK(&t, v->exp_ulps >= 1, "%s: exp_ulps %d (rule A's c_exp is at least 1)", v->name,
              v->exp_ulps);
        CHECK(&t, v->family != ATTN_FAMILY_ONLINE || v->tiles.keys > 0,
              "%s: an online variant needs tiles.keys (rule A's rescale block)", v->name);
        CHECK(&t, v->family == ATTN_FAMILY_ONLINE || attn_variant_rescales(v, 2, 4096) == 0,
              "%s: a two-pass variant has no rescales", v->name);
        CHECK(&t, !v->library == !v->library_version, "%s: library and its version go together",
              v->name);
        /* What attn_run_typed and the variant sweeps run it in must be taken. */
        const attn_run_options opt = {attn_variant_default_types(v),
                                      attn_variant_default_p_round(v)};
        CHECK(&t, attn_variant_check_types(v, &opt, NULL, 0) == ATTN_OK,
              "%s: takes neither all f32, bf16 nor f16 tensors in its default class", v->name);
        CHECK(&t, attn_find_variant(v->name) == v, "%s: find gives another entry", v->name);
        CHECK(&t, attn_variant_name(i) && strcmp(attn_variant_name(i), v->name) == 0,
              "%s: public index %d names %s", v->name, i,
              attn_variant_name(i) ? attn_variant_name(i) : "NULL");
        for (int j = 0; j < i; j++)
            CHECK(&t, strcmp(attn_variant_table[j]->name, v->name) != 0, "%s listed twice",
                  v->name);
    }
    return check_report("table", &t);
}
