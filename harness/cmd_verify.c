/* attnbench verify: every available variant on the correctness cases,
 * judged by docs/accuracy.md's rules A, B, C and guard bytes around O. */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "cli.h"
#include "dtype.h"
#include "shape_arg.h"
#include "variant.h"

enum { MAX_VARIANTS = 32, MAX_SHAPES = 64 };
typedef struct verify_opts {
    const attn_variant *variants[MAX_VARIANTS];
    int n_variants;
    attn_case_set sets[4];
    int n_sets;
    /* --shape: the user's own cases, run after the sets' (alone without
     * --cases). */
    attn_shape shapes[MAX_SHAPES];
    attn_data_kind shape_data[MAX_SHAPES];
    int n_shapes;
    long seeds;
    regex_t filter;
    int has_filter;
    int verbose;
    /* The --dtype axis: the element types each case runs in. Without it,
     * f32 in "P in f32" only: verify's output from before the types; a
     * variant that takes no f32 K/V runs in its own types instead
     * (own_dtypes). all_classes is 1 exactly when --dtype was given. */
    attn_types dtypes[ATTN_DTYPE_AXIS_MAX];
    int n_dtypes;
    int all_classes;
} verify_opts;

typedef struct verify_tally {
    int passed, failed, skipped;
} verify_tally;

static void verify_help(void)
{
    printf("usage: attnbench verify [--variant NAME]... [--cases SET]...\n"
           "                        [--shape SHAPE]... [--dtype LIST] [--seeds N]\n"
           "                        [--filter REGEX] [--verbose]\n\n"
           "Runs each variant this CPU supports on the correctness cases and checks it\n"
           "against the double-precision reference by the rules of docs/accuracy.md:\n"
           "rule A (a-priori bound), rule B (max E_M <= 4 x naive's + 16u over the seeds),\n"
           "rule C (special values) and guard bytes around O and the workspace. One line\n"
           "per variant x case:\n"
           "  PASS|FAIL <case name> E_M E_D (in u = 2^-24) NMSE max_ulp slack\n"
           "slack is the bound divided by the worst error (> 1 passes). Exits 1 on any FAIL.\n\n"
           "  --variant NAME   only this variant (repeatable); default: all\n"
           "  --cases SET      quick (default), full (adds GQA/MQA, cross, decode, odd sizes\n"
           "                   and each variant's tile-edge sweep), adversarial (the special\n"
           "                   values and cases of docs/accuracy.md) or growth (E_M against\n"
           "                   n_kv = 64 ... 16384) (repeatable)\n"
           "  --shape SHAPE    a case of your own (repeatable; alone unless --cases is given\n"
           "                   too; the reference, in double, and naive are quadratic: n\n"
           "                   4096 with 8 heads takes a minute or two):\n");
    attn_shape_arg_help(19, 1);
    printf("  --dtype LIST     element types, comma-separated: f32 (default), bf16, f16 (Q, K/V\n"
           "                   and O of that type), f16kv, bf16kv (f32 Q and O, a narrow KV\n"
           "                   cache), all (those five). Each case runs in every precision\n"
           "                   class the variant declares (P in f32, P rounded to bf16/f16),\n"
           "                   rule B against naive in the same types and class; the line\n"
           "                   names them (q=,kv=,o=, p=). Without --dtype: f32 and\n"
           "                   P in f32 only (a variant that takes no f32 K/V: every\n"
           "                   combination of 'all' it takes, in its classes)\n"
           "  --seeds N        data seeds per case, 3 to 1000 (default 3: rule B needs 3;\n"
           "                   huge-logit cases always run at least 32, and enough for\n"
           "                   512 output rows in all: see cases.h)\n"
           "  --filter REGEX   only cases whose name matches (POSIX extended regex)\n"
           "  --verbose        also print the naive yardstick per case\n");
}

/* The case in the types and class of one verify line. */
static attn_case typed_case(const attn_case *c, const attn_types *types, int32_t p_round)
{
    attn_case t = *c;
    t.types = *types;
    t.p_round = p_round;
    return t;
}

/* Runs `v`, and naive as rule B's yardstick in the same types and class,
 * over the case's seeds; 0, or -1 with `why` set when a run failed. */
static int run_seeds(const verify_opts *o, const attn_variant *v, const attn_case *c,
                     attn_err_stats *total, attn_err_stats *naive_total, char *why, size_t cap)
{
    const attn_variant *naive = attn_find_variant("naive");
    attn_case_buffers b;
    attn_err_init(total);
    attn_err_init(naive_total);
    if (attn_case_buffers_alloc_typed(&b, &c->shape, &c->types) != 0) {
        attn_case_buffers_free(&b);
        snprintf(why, cap, "cannot allocate the case's buffers");
        return -1;
    }
    int rc = 0;
    const long least = attn_case_min_seeds(c), seeds = o->seeds > least ? o->seeds : least;
    for (long seed = 1; rc == 0 && seed <= seeds; seed++) {
        attn_shape s = attn_case_fill(c, (uint64_t)seed, b.q, b.k, b.v);
        attn_err_stats st, naive_st;
        /* naive against itself needs one run: the same call, the same bits. */
        if (naive && naive != v) {
            if (attn_verify_run_class(naive, &s, c->p_round, &b, &naive_st, why, cap) != 0) {
                rc = -1; /* the yardstick itself failed: report it against this line */
                break;
            }
            attn_err_merge(naive_total, &naive_st);
        }
        if (attn_verify_run_class(v, &s, c->p_round, &b, &st, why, cap) != 0) {
            rc = -1;
            break;
        }
        attn_err_merge(total, &st);
        if (naive == v)
            attn_err_merge(naive_total, &st);
    }
    attn_case_buffers_free(&b);
    return rc;
}

/* Verifies one variant on one case in one type combination and class over
 * all seeds; prints its line. */
static void verify_case(const verify_opts *o, const attn_variant *v, const attn_case *c,
                        verify_tally *tally)
{
    char name[256], why[400] = "";
    attn_case_name(v->name, c, name, sizeof name);
    if (o->has_filter && regexec(&o->filter, name, 0, NULL, 0) != 0)
        return;
    attn_err_stats total, naive_total;
    int failed = run_seeds(o, v, c, &total, &naive_total, why, sizeof why) != 0;
    if (!failed && total.failures) {
        snprintf(why, sizeof why, "%s", total.first_failure);
        failed = 1;
    }
    const double rule_b = 4.0 * naive_total.e_m + 16.0;
    if (!failed && !attn_rule_b_holds(total.e_m, naive_total.e_m)) {
        snprintf(why, sizeof why, "rule B: E_M %.2fu > 4 x naive %.2fu + 16u = %.2fu", total.e_m,
                 naive_total.e_m, rule_b);
        failed = 1;
    }
    double slack = total.worst_ratio > 0 ? 1.0 / total.worst_ratio : INFINITY;
    printf("%s %s E_M=%.2fu E_D=%.2fu NMSE=%.2e max_ulp=%.0f slack=%.3gx", failed ? "FAIL" : "PASS",
           name, total.e_m, total.e_d, attn_err_nmse(&total), total.max_ulp, slack);
    if (o->verbose)
        printf(" naive_E_M=%.2fu", naive_total.e_m);
    if (total.rows_skipped)
        printf(" inf_rows=%ld", total.rows_skipped);
    /* The reference flushes only narrow inputs (f32 ones are never
     * flushed): say so where it judged the instruction's definition. */
    if (v->denormals_are_zero && (c->types.q != ATTN_F32 || c->types.kv != ATTN_F32))
        printf(" (reference flushed subnormal inputs: the variant declares denormals-are-zero)");
    if (failed)
        printf("\n     %s", why);
    printf("\n");
    fflush(stdout);
    if (failed)
        tally->failed++;
    else
        tally->passed++;
}

/* The classes verify runs v in, P in f32 first; 0 when v does not take
 * the types (`why` says which field). */
static int verify_classes(const attn_variant *v, const attn_types *types, int all_classes,
                          int32_t out[3], char *why, size_t cap)
{
    static const int32_t order[3] = {ATTN_F32, ATTN_BF16, ATTN_F16};
    const uint32_t classes = all_classes ? attn_variant_p_rounds(v) : ATTN_DTYPE_BIT(ATTN_F32);
    int n = 0;
    for (int i = 0; i < 3; i++) {
        const attn_run_options opt = {*types, order[i]};
        if ((classes & ATTN_DTYPE_BIT(order[i])) &&
            attn_variant_check_types(v, &opt, why, cap) == ATTN_OK)
            out[n++] = order[i];
    }
    if (n == 0) {
        const attn_run_options opt = {*types, ATTN_F32};
        attn_variant_check_types(v, &opt, why, cap);
    }
    return n;
}

/* Without --dtype, a variant that takes no all-f32 tensors (avx512_bf16:
 * bf16 K/V only) would be skipped whole, and its ctest verify_* tests
 * would pass having checked nothing: it runs instead in every combination
 * of `--dtype all` it takes, in each class it declares. Returns how many. */
static int own_dtypes(const attn_variant *v, attn_types out[ATTN_DTYPE_AXIS_MAX])
{
    attn_types all[ATTN_DTYPE_AXIS_MAX];
    const int n_all = cli_parse_dtypes("verify", "all", all);
    int n = 0;
    for (int i = 0; i < n_all; i++) {
        int32_t classes[3];
        char why[200];
        if (verify_classes(v, &all[i], 1, classes, why, sizeof why) > 0)
            out[n++] = all[i];
    }
    return n;
}

static void verify_variant(const verify_opts *o, const attn_variant *v, verify_tally *tally)
{
    if (!attn_variant_runnable(v)) {
        char missing[128];
        attn_variant_missing(v, missing, sizeof missing);
        printf("SKIP impl=%s (every case): skipped: needs %s\n", v->name, missing);
        tally->skipped++;
        return;
    }
    attn_types own[ATTN_DTYPE_AXIS_MAX];
    const int use_own = !o->all_classes && !attn_variant_takes_f32(v);
    const attn_types *dtypes = use_own ? own : o->dtypes;
    const int n_dtypes = use_own ? own_dtypes(v, own) : o->n_dtypes;
    int32_t classes[ATTN_DTYPE_AXIS_MAX][3];
    int n_classes[ATTN_DTYPE_AXIS_MAX];
    for (int d = 0; d < n_dtypes; d++) {
        char why[200];
        n_classes[d] =
            verify_classes(v, &dtypes[d], use_own || o->all_classes, classes[d], why, sizeof why);
        if (n_classes[d] == 0) {
            const attn_types *t = &dtypes[d];
            printf("SKIP impl=%s (every case),q=%s,kv=%s,o=%s: skipped: %s\n", v->name,
                   attn_dtype_name(t->q), attn_dtype_name(t->kv), attn_dtype_name(t->o), why);
            tally->skipped++;
        }
    }
    int32_t tiles[ATTN_MAX_TILES];
    const int n_tiles = attn_variant_tile_sizes(v, tiles);
    for (int si = 0; si < o->n_sets; si++) {
        int n = attn_case_list(o->sets[si], tiles, n_tiles, NULL, 0);
        attn_case *cases = malloc(sizeof *cases * (size_t)n);
        if (!cases) {
            printf("FAIL impl=%s: cannot allocate the case list\n", v->name);
            tally->failed++;
            return;
        }
        attn_case_list(o->sets[si], tiles, n_tiles, cases, n);
        for (int i = 0; i < n; i++)
            for (int d = 0; d < n_dtypes; d++)
                for (int k = 0; k < n_classes[d]; k++) {
                    const attn_case c = typed_case(&cases[i], &dtypes[d], classes[d][k]);
                    verify_case(o, v, &c, tally);
                }
        free(cases);
    }
    for (int i = 0; i < o->n_shapes; i++) {
        const attn_case own = {.shape = o->shapes[i], .data = o->shape_data[i]};
        for (int d = 0; d < n_dtypes; d++)
            for (int k = 0; k < n_classes[d]; k++) {
                const attn_case c = typed_case(&own, &dtypes[d], classes[d][k]);
                verify_case(o, v, &c, tally);
            }
    }
}

/* --dtype LIST (repeatable): the lists' union, each combination once. */
static int add_dtypes(verify_opts *o, const char *value)
{
    attn_types parsed[ATTN_DTYPE_AXIS_MAX];
    int n = cli_parse_dtypes("verify", value, parsed);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < o->n_dtypes; j++)
            seen |= memcmp(&o->dtypes[j], &parsed[i], sizeof parsed[i]) == 0;
        if (!seen && o->n_dtypes < ATTN_DTYPE_AXIS_MAX)
            o->dtypes[o->n_dtypes++] = parsed[i];
    }
    return 0;
}

static int parse_verify_args(int argc, char **argv, verify_opts *o)
{
    const char *value;
    int r;
    for (int i = 1; i < argc; i++) {
        if (cli_switch(argv, i, "--help") || cli_switch(argv, i, "-h")) {
            verify_help();
            return 1;
        } else if (cli_switch(argv, i, "--verbose")) {
            o->verbose = 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--variant", &value)) != 0) {
            if (r < 0)
                return -1;
            if (cli_add_variant("verify", value, o->variants, &o->n_variants, MAX_VARIANTS) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--cases", &value)) != 0) {
            int set = r < 0 ? -1 : attn_case_set_parse(value);
            if (set < 0) {
                if (r > 0)
                    fprintf(stderr,
                            "verify: --cases '%s' must be quick, full, adversarial or growth\n",
                            value);
                return -1;
            }
            if (o->n_sets < 4)
                o->sets[o->n_sets++] = (attn_case_set)set;
        } else if ((r = cli_flag_value(argc, argv, &i, "--shape", &value)) != 0) {
            if (r < 0 || attn_shape_arg_add("verify", value, o->shapes, o->shape_data, &o->n_shapes,
                                            MAX_SHAPES) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--dtype", &value)) != 0) {
            if (r < 0 || add_dtypes(o, value) != 0)
                return -1;
            o->all_classes = 1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--seeds", &value)) != 0) {
            if (r < 0 ||
                cli_parse_long("verify", "--seeds", value, 3, ATTN_CASE_SEEDS_MAX, &o->seeds) != 0)
                return -1;
        } else if ((r = cli_flag_value(argc, argv, &i, "--filter", &value)) != 0) {
            if (r < 0 || cli_set_filter("verify", value, &o->filter, &o->has_filter) != 0)
                return -1;
        } else {
            cli_unknown("verify", argv[i]);
            return -1;
        }
    }
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    verify_opts o = {.seeds = 3};
    int rc = parse_verify_args(argc, argv, &o);
    if (rc != 0) {
        if (o.has_filter)
            regfree(&o.filter);
        return rc > 0 ? EXIT_OK : EXIT_USAGE;
    }
    if (cli_check_cpu_mask("verify") != 0)
        return EXIT_USAGE;
    if (o.n_variants == 0)
        for (int i = 0; i < attn_variant_table_size && i < MAX_VARIANTS; i++)
            o.variants[o.n_variants++] = attn_variant_table[i];
    if (o.n_sets == 0 && o.n_shapes == 0)
        o.sets[o.n_sets++] = CASES_QUICK;
    if (o.n_dtypes == 0)
        o.dtypes[o.n_dtypes++] = (attn_types){ATTN_F32, ATTN_F32, ATTN_F32};
    verify_tally tally = {0};
    for (int i = 0; i < o.n_variants; i++)
        verify_variant(&o, o.variants[i], &tally);
    printf("verify: %d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
    /* A filter that selects nothing is a typo, not a pass: say so, unless
     * every chosen variant was skipped before the filter was consulted. */
    if (o.has_filter && tally.passed + tally.failed == 0 && tally.skipped < o.n_variants) {
        fprintf(stderr, "verify: --filter matches no case of the chosen variants and sets\n");
        regfree(&o.filter);
        return EXIT_USAGE;
    }
    if (o.has_filter)
        regfree(&o.filter);
    return tally.failed ? EXIT_FAILED : EXIT_OK;
}
