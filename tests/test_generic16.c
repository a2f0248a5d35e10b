/* The avx512 block kernel's logic, verified where AVX-512 is missing: the
 * generic kernel (impls/flash_block_generic.h) instantiated on the portable
 * 16-lane primitives (impls/vec_portable16.h) with the avx512 variant's own
 * tile sizes (impls/flash_avx512_tiles.h) and run through the same driver,
 * on verify's full (with this geometry's tile sweeps) and adversarial
 * cases, 3 seeds each, against the reference: rules A, B, C and guards.
 * Only the primitives differ from the avx512 build (fmaf and expf for
 * vfmadd and attn_exp_avx512). The decode kernel is AVX-512 only. */
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "flash_avx512_tiles.h"
#include "flash_driver.h"
#include "vec_portable16.h"
#include "verify_case.h"

#include "flash_block_generic.h"
#include "generic16_variant.h"

int main(void)
{
    check_tally t = {0};
    const attn_variant *naive = attn_find_variant("naive");
    int32_t tiles[ATTN_MAX_TILES];
    const int n_tiles = attn_variant_tile_sizes(&generic16, tiles);
    const attn_case_set sets[] = {CASES_FULL, CASES_ADVERSARIAL};
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        int n = attn_case_list(sets[si], tiles, n_tiles, NULL, 0);
        attn_case *cases = malloc(sizeof *cases * (size_t)n);
        if (!cases)
            return 2;
        attn_case_list(sets[si], tiles, n_tiles, cases, n);
        for (int i = 0; i < n; i++)
            check_verify_case(&t, &generic16, naive, &cases[i], 3);
        free(cases);
    }
    return check_report("generic16 (the avx512 kernel on portable primitives)", &t);
}
