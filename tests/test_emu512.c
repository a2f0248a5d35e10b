/* The AVX-512 variants' own code, run where AVX-512 is missing: their
 * sources (flash_avx512.c, flash_avx512_decode.c, exp_avx512.c,
 * flash_avx512_bf16.c and flash_avx512_bf16_decode.c, vdpbf16ps and
 * vcvtne2ps2bf16 emulated to the bit)
 * compiled again on SIMDe (tests/emu512/), for AVX2 + FMA + F16C.
 * test_generic16 checks the avx512 block kernel's logic on portable
 * primitives; this runs the real files, vec_avx512.h's k-masks and the
 * decode kernel included:
 *   - verify's full (with the variant's tile sweeps) and adversarial cases,
 *     3 seeds, rules A, B and C against naive in the same types and class:
 *     avx512 in f32 and the narrow type combinations (f16 / bf16 K/V, all
 *     f16, all bf16), avx512_bf16 in all bf16 and over a bf16 KV cache, in
 *     "P rounded to bf16";
 *   - test_hidden_keys' sweep in each part's types: NaN in every key of a
 *     97 x 97 causal head in turn leaves the rows that cannot see it
 *     bitwise as they were (where the native variant cannot run, nothing
 *     else checks its causal masking against a hidden NaN);
 *   - avx512: an f16 / bf16 KV cache gives bitwise the O of f32 K/V
 *     holding the same values (the decode kernel's own narrow reads among
 *     them);
 *   - on a CPU with the variant's ISA, the emulated copy gives bitwise the
 *     O of the native one (so the emulation is the hardware's arithmetic:
 *     for avx512_bf16, vdpbf16ps's order of the two products, its
 *     denormals-are-zero and its rounding).
 * Skipped (77) on a CPU without AVX2, FMA or F16C. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "cpu_features.h"
#include "dtype.h"
#include "hidden_keys.h"
#include "variant.h"
#include "verify_case.h"

extern const attn_variant attn_variant_avx512_emu;
extern const attn_variant attn_variant_avx512_bf16_emu;

enum { EMU_FEATURES = ATTN_CPU_AVX2 | ATTN_CPU_FMA | ATTN_CPU_F16C, SEEDS = 3 };

/* What a part checks bitwise besides verify's cases. */
typedef enum emu_bitwise {
    EMU_BITWISE_NONE,
    EMU_BITWISE_NARROW_KV, /* f16/bf16 K/V against f32 K/V, and native against emulated */
    EMU_BITWISE_NATIVE,    /* native against emulated, in the part's types */
} emu_bitwise;

/* The variants and type combinations by part (argv: "f32", "narrow-kv",
 * "narrow", "bf16", "bf16kv"; all without arguments), so ctest runs the
 * parts as tests of their own. */
typedef struct emu_part {
    const char *name;
    const char *variant; /* the native variant whose sources the part runs */
    attn_types types[2];
    int n_types;
    emu_bitwise bitwise;
} emu_part;
static const emu_part PARTS[] = {
    {"f32", "avx512", {{ATTN_F32, ATTN_F32, ATTN_F32}}, 1, EMU_BITWISE_NARROW_KV},
    {"narrow-kv",
     "avx512",
     {{ATTN_F32, ATTN_F16, ATTN_F32}, {ATTN_F32, ATTN_BF16, ATTN_F32}},
     2,
     EMU_BITWISE_NONE},
    {"narrow",
     "avx512",
     {{ATTN_F16, ATTN_F16, ATTN_F16}, {ATTN_BF16, ATTN_BF16, ATTN_BF16}},
     2,
     EMU_BITWISE_NONE},
    {"bf16", "avx512_bf16", {{ATTN_BF16, ATTN_BF16, ATTN_BF16}}, 1, EMU_BITWISE_NATIVE},
    {"bf16kv", "avx512_bf16", {{ATTN_F32, ATTN_BF16, ATTN_F32}}, 1, EMU_BITWISE_NATIVE},
};
enum { N_PARTS = sizeof PARTS / sizeof PARTS[0] };

/* One case in one type combination and every class the variant declares,
 * as verify runs it. */
static void verify_case(check_tally *t, const attn_variant *emu, const attn_variant *naive,
                        const attn_case *c0, const attn_types *types)
{
    static const int32_t classes[] = {ATTN_F32, ATTN_BF16, ATTN_F16};
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        if (!(attn_variant_p_rounds(emu) & ATTN_DTYPE_BIT(classes[i])))
            continue;
        attn_case c = *c0;
        c.types = *types;
        c.p_round = classes[i];
        check_verify_case(t, emu, naive, &c, SEEDS);
    }
}

/* O of `v` on the case's data (seed 7) in `types`, K/V given as f32 or as
 * the case buffers' narrow copies; 0 or the run's code. */
static int run_o(const attn_variant *v, const attn_case *c, const attn_types *types,
                 attn_case_buffers *b, const float *k32, const float *v32, float *o)
{
    const attn_run_options opt = {*types, ATTN_F32};
    char msg[256];
    const void *k = types->kv == ATTN_F32 ? (const void *)k32 : b->tk;
    const void *vv = types->kv == ATTN_F32 ? (const void *)v32 : b->tv;
    return attn_run_variant_typed(v, &c->shape, &opt, b->q, k, vv, o, NULL, msg, sizeof msg);
}

static size_t first_difference(const float *a, const float *b, size_t n)
{
    size_t i = 0;
    while (i < n && memcmp(&a[i], &b[i], sizeof a[i]) == 0)
        i++;
    return i;
}

/* The narrow_kv test's shapes: grouped and per-tile staging in prefill,
 * the decode kernel (one tile of 1, 4 or 8 rows) with and without splits. */
static const attn_case BITWISE_CASES[] = {
    {.shape = {1, 8, 8, 300, 300, 64, 64, 1, 0.0f}, .data = DATA_NORMAL},
    {.shape = {2, 8, 2, 101, 333, 40, 24, 1, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 32, 8, 1, 3000, 128, 128, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 4, 4, 1, 1000, 64, 64, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 8, 1, 2, 777, 80, 80, 1, 0.0f}, .data = DATA_NORMAL},
    /* decode heads of 8 rows (avx512_bf16's pairs): an odd key count whose
     * last block (144 keys) has an odd count of 2-key groups, a last
     * chunk of 24 columns (the second half partly masked), then 8
     * columns and causal rows that see part of the last block */
    {.shape = {1, 8, 1, 1, 997, 88, 88, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 4, 1, 2, 513, 48, 40, 1, 0.0f}, .data = DATA_NORMAL},
    /* Q·Kᵀ on pairs (bf16 Q): 4 rows with a 1-column last chunk of K,
     * 8 rows with d_k != d_v and an 8-column last chunk */
    {.shape = {1, 16, 4, 1, 530, 33, 33, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {2, 16, 2, 1, 301, 200, 72, 0, 0.0f}, .data = DATA_NORMAL},
};

/* Narrow K/V against f32 K/V of the same values; the native variant
 * against the emulated one where the CPU runs both. */
static void bitwise_case(check_tally *t, const attn_variant *emu, const attn_variant *native,
                         const attn_case *c, int32_t kv)
{
    const attn_types narrow = {ATTN_F32, kv, ATTN_F32}, wide = {ATTN_F32, ATTN_F32, ATTN_F32};
    char name[256];
    attn_case_name(emu->name, c, name, sizeof name);
    attn_case_buffers b;
    if (attn_case_buffers_alloc_typed(&b, &c->shape, &narrow) != 0) {
        CHECK(t, 0, "%s: cannot allocate", name);
        attn_case_buffers_free(&b);
        return;
    }
    const attn_shape s = attn_case_fill(c, 7, b.q, b.k, b.v);
    attn_case_buffers_narrow(&b, &s);
    const size_t nk = attn_kv_elems(&s, s.d_k), nv = attn_kv_elems(&s, s.d_v),
                 no = attn_o_elems(&s);
    float *k32 = malloc(sizeof(float) * nk), *v32 = malloc(sizeof(float) * nv);
    float *o_narrow = malloc(sizeof(float) * no), *o_wide = malloc(sizeof(float) * no);
    float *o_native = malloc(sizeof(float) * no);
    if (!k32 || !v32 || !o_narrow || !o_wide || !o_native) {
        CHECK(t, 0, "%s: cannot allocate", name);
    } else {
        attn_widen_portable(b.tk, kv, k32, nk);
        attn_widen_portable(b.tv, kv, v32, nv);
        for (int threads = 1; threads <= 3; threads += 2) {
            omp_set_num_threads(threads);
            int rc1 = run_o(emu, c, &narrow, &b, k32, v32, o_narrow);
            int rc2 = run_o(emu, c, &wide, &b, k32, v32, o_wide);
            CHECK(t, rc1 == ATTN_OK && rc2 == ATTN_OK, "%s kv=%s threads=%d: runs returned %d, %d",
                  name, attn_dtype_name(kv), threads, rc1, rc2);
            size_t i = first_difference(o_narrow, o_wide, no);
            CHECK(t, i == no,
                  "%s kv=%s threads=%d: O[%zu] %.9g from the narrow cache, %.9g from f32 K/V of "
                  "the same values",
                  name, attn_dtype_name(kv), threads, i, i < no ? o_narrow[i] : 0.0,
                  i < no ? o_wide[i] : 0.0);
            if (!attn_variant_runnable(native))
                continue;
            int rc3 = run_o(native, c, &narrow, &b, k32, v32, o_native);
            i = first_difference(o_native, o_narrow, no);
            CHECK(t, rc3 == ATTN_OK && i == no,
                  "%s kv=%s threads=%d: native avx512 O[%zu] %.9g, emulated %.9g (rc %d)", name,
                  attn_dtype_name(kv), threads, i, i < no ? o_native[i] : 0.0,
                  i < no ? o_narrow[i] : 0.0, rc3);
        }
    }
    free(k32);
    free(v32);
    free(o_narrow);
    free(o_wide);
    free(o_native);
    attn_case_buffers_free(&b);
}

/* The native variant against its emulated copy, bitwise, in `types` (at 1
 * and 3 threads), where the CPU runs the native one. */
static void native_case(check_tally *t, const attn_variant *emu, const attn_variant *native,
                        const attn_case *c, const attn_types *types)
{
    char name[256];
    attn_case_name(emu->name, c, name, sizeof name);
    attn_case_buffers b;
    if (attn_case_buffers_alloc_typed(&b, &c->shape, types) != 0) {
        CHECK(t, 0, "%s: cannot allocate", name);
        attn_case_buffers_free(&b);
        return;
    }
    const attn_shape s = attn_case_fill(c, 7, b.q, b.k, b.v);
    attn_case_buffers_narrow(&b, &s);
    const size_t bytes = attn_dtype_size(types->o) * b.o_elems;
    unsigned char *o_emu = malloc(bytes), *o_native = malloc(bytes);
    const attn_run_options opt = {*types, attn_variant_default_p_round(native)};
    char msg[256];
    for (int threads = 1; o_emu && o_native && threads <= 3; threads += 2) {
        omp_set_num_threads(threads);
        int rc1 =
            attn_run_variant_typed(emu, &s, &opt, b.tq, b.tk, b.tv, o_emu, NULL, msg, sizeof msg);
        int rc2 = attn_run_variant_typed(native, &s, &opt, b.tq, b.tk, b.tv, o_native, NULL, msg,
                                         sizeof msg);
        size_t i = 0;
        while (i < bytes && o_emu[i] == o_native[i])
            i++;
        CHECK(t, rc1 == ATTN_OK && rc2 == ATTN_OK && i == bytes,
              "%s q=%s kv=%s threads=%d: native %s and emulated differ at byte %zu of O (rc %d, "
              "%d)",
              name, attn_dtype_name(types->q), attn_dtype_name(types->kv), threads, native->name, i,
              rc1, rc2);
    }
    CHECK(t, o_emu && o_native, "%s: cannot allocate", name);
    free(o_emu);
    free(o_native);
    attn_case_buffers_free(&b);
}

/* test_hidden_keys' sweep on the emulated copy, where the native variant
 * may not run (no AVX512_BF16 here): NaN in each key's K row, then V row,
 * of every K/V head of a 97 x 97 causal prefill in `types`; each O row
 * that cannot see the key keeps its bits, each that can is NaN. Wherever
 * the tiles, blocks and key pairs begin, some key is the first a tile's
 * first row cannot see. */
static void hidden_keys_case(check_tally *t, const attn_variant *emu, const attn_types *types)
{
    const attn_case c = {.shape = {1, 4, 4, 97, 97, 9, 7, 1, 0.0f}, .data = DATA_NORMAL};
    char name[256];
    attn_case_name(emu->name, &c, name, sizeof name);
    attn_case_buffers b;
    if (attn_case_buffers_alloc_typed(&b, &c.shape, types) != 0) {
        CHECK(t, 0, "%s: cannot allocate", name);
        attn_case_buffers_free(&b);
        return;
    }
    const attn_shape s = attn_case_fill(&c, 5, b.q, b.k, b.v);
    attn_case_buffers_narrow(&b, &s);
    const size_t o_size = attn_dtype_size(types->o), no = attn_o_elems(&s);
    const size_t kv_size = attn_dtype_size(types->kv);
    const size_t nk = attn_kv_elems(&s, s.d_k), nv = attn_kv_elems(&s, s.d_v);
    unsigned char *clean = malloc(o_size * no), *o = malloc(o_size * no);
    unsigned char *k = malloc(kv_size * nk), *v = malloc(kv_size * nv);
    const attn_run_options opt = {*types, attn_variant_default_p_round(emu)};
    char msg[256];
    int bad_hidden = 0, bad_seen = 0, rc = ATTN_OK;
    for (int threads = 1; clean && o && k && v && threads <= 3; threads += 2) {
        omp_set_num_threads(threads);
        memset(clean, 0, o_size * no);
        rc |= attn_run_variant_typed(emu, &s, &opt, b.tq, b.tk, b.tv, clean, NULL, msg, sizeof msg);
        for (int32_t j = 0; j < s.n_kv; j++)
            for (int which_k = 0; which_k <= 1; which_k++) {
                memcpy(k, b.tk, kv_size * nk);
                memcpy(v, b.tv, kv_size * nv);
                hidden_keys_plant(&s, which_k ? k : v, types->kv, which_k ? s.d_k : s.d_v, j);
                memset(o, 0, o_size * no);
                rc |= attn_run_variant_typed(emu, &s, &opt, b.tq, k, v, o, NULL, msg, sizeof msg);
                int changed, missed;
                hidden_keys_count(&s, types->o, o, clean, j, &changed, &missed);
                bad_hidden += changed;
                bad_seen += missed;
            }
    }
    CHECK(t, clean && o && k && v, "%s: cannot allocate", name);
    CHECK(t, rc == ATTN_OK && bad_hidden == 0 && bad_seen == 0,
          "%s q=%s kv=%s: a NaN in a key changed %d elements of rows that cannot see it, missed "
          "%d of rows that can (rc %d)",
          name, attn_dtype_name(types->q), attn_dtype_name(types->kv), bad_hidden, bad_seen, rc);
    free(clean);
    free(o);
    free(k);
    free(v);
    attn_case_buffers_free(&b);
}

/* Verify's full and adversarial cases in the part's types. */
static void verify_part(check_tally *t, const attn_variant *emu, const attn_variant *naive,
                        const emu_part *part)
{
    int32_t tiles[ATTN_MAX_TILES];
    const int n_tiles = attn_variant_tile_sizes(emu, tiles);
    const attn_case_set sets[] = {CASES_FULL, CASES_ADVERSARIAL};
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        int n = attn_case_list(sets[si], tiles, n_tiles, NULL, 0);
        attn_case *cases = malloc(sizeof *cases * (size_t)n);
        if (!cases) {
            CHECK(t, 0, "cannot allocate %d cases", n);
            return;
        }
        attn_case_list(sets[si], tiles, n_tiles, cases, n);
        for (int i = 0; i < n; i++)
            for (int ti = 0; ti < part->n_types; ti++)
                verify_case(t, emu, naive, &cases[i], &part->types[ti]);
        free(cases);
    }
}

/* The table's variant `name` as its emulated copy, runnable on what it
 * was built for here; its name says it is the emulated copy. */
static attn_variant emulated(const char *name, char *label, size_t cap)
{
    attn_variant emu =
        strcmp(name, "avx512") == 0 ? attn_variant_avx512_emu : attn_variant_avx512_bf16_emu;
    snprintf(label, cap, "%s-emu", name);
    emu.name = label;
    emu.required_features = EMU_FEATURES;
    return emu;
}

static void run_part(check_tally *t, const emu_part *part, const attn_variant *naive)
{
    char label[64];
    const attn_variant emu = emulated(part->variant, label, sizeof label);
    const attn_variant *native = attn_find_variant(part->variant);
    omp_set_num_threads(2);
    verify_part(t, &emu, naive, part);
    for (int ti = 0; ti < part->n_types; ti++)
        hidden_keys_case(t, &emu, &part->types[ti]);
    for (size_t c = 0; c < sizeof BITWISE_CASES / sizeof BITWISE_CASES[0]; c++) {
        if (part->bitwise == EMU_BITWISE_NARROW_KV) {
            bitwise_case(t, &emu, native, &BITWISE_CASES[c], ATTN_F16);
            bitwise_case(t, &emu, native, &BITWISE_CASES[c], ATTN_BF16);
        } else if (part->bitwise == EMU_BITWISE_NATIVE) {
            /* Against the reference too: a case only this list has would
             * otherwise be checked only where the native one runs, and
             * only against a copy of its own code. */
            for (int ti = 0; ti < part->n_types; ti++) {
                verify_case(t, &emu, naive, &BITWISE_CASES[c], &part->types[ti]);
                if (attn_variant_runnable(native))
                    native_case(t, &emu, native, &BITWISE_CASES[c], &part->types[ti]);
            }
        }
    }
    printf("emu512 %s: native %s %s\n", part->name, native->name,
           attn_variant_runnable(native) ? "runs here: compared bitwise"
                                         : "not runnable here: emulated copy only");
}

int main(int argc, char **argv)
{
    if ((attn_cpu()->features & EMU_FEATURES) != EMU_FEATURES) {
        printf("SKIP emu512: the emulated avx512 build needs avx2, fma and f16c\n");
        return 77;
    }
    const attn_variant *naive = attn_find_variant("naive");
    check_tally t = {0, 0};
    for (int p = 0; p < N_PARTS; p++)
        if (!naive || !attn_find_variant(PARTS[p].variant)) {
            printf("emu512: naive or %s missing from the table\n", PARTS[p].variant);
            return 1;
        }
    int run[N_PARTS] = {0};
    for (int a = 1; a < argc; a++) {
        int found = 0;
        for (int p = 0; p < N_PARTS; p++)
            if (strcmp(argv[a], PARTS[p].name) == 0)
                run[p] = found = 1;
        if (!found) {
            fprintf(stderr,
                    "test_emu512: unknown part '%s' (f32, narrow-kv, narrow, bf16, bf16kv)\n",
                    argv[a]);
            return 2;
        }
    }
    for (int p = 0; p < N_PARTS; p++)
        if (argc == 1 || run[p])
            run_part(&t, &PARTS[p], naive);
    return check_report("emu512 (the AVX-512 variants' sources on SIMDe)", &t);
}
