#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cpu_features.h"
#include "dtype.h"
#include "machine.h"
#include "variant.h"

static void list_help(void)
{
    printf("usage: attnbench list [--slug | --names]\n\n"
           "Lists every variant with its description and whether this CPU runs it\n"
           "(or 'skipped: needs FEATURE'); below each, the element types it takes\n"
           "for Q, K/V and O and how (widened on load, or an f32 kernel the\n"
           "dispatcher widens for), its precision classes and denormals-are-zero\n"
           "when declared; then the detected and hidden CPU features.\n"
           "  --slug   print only the machine slug used for results/<slug>/ and exit\n"
           "  --names  print only the variant names, one a line, in table order\n");
}

/* "f32|f16|bf16": the types of a set, in attn_dtype order. */
static void type_set(uint32_t set, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int32_t t = 0; t < ATTN_DTYPE_COUNT; t++)
        if (set & ATTN_DTYPE_BIT(t)) {
            size_t n = strlen(buf);
            snprintf(buf + n, cap - n, "%s%s", n ? "|" : "", attn_dtype_name(t));
        }
}

/* The variant's types, how they reach its kernel, its classes (P in f32
 * first, as verify runs them) and DAZ: the second line of its entry. */
static void print_types(const attn_variant *v, int w)
{
    char q[32], kv[32], o[32], classes[96] = "";
    type_set(attn_variant_type_set(v->q_types), q, sizeof q);
    type_set(attn_variant_type_set(v->kv_types), kv, sizeof kv);
    type_set(attn_variant_type_set(v->o_types), o, sizeof o);
    static const int32_t order[3] = {ATTN_F32, ATTN_BF16, ATTN_F16};
    for (int i = 0; i < 3; i++)
        if (attn_variant_p_rounds(v) & ATTN_DTYPE_BIT(order[i])) {
            size_t n = strlen(classes);
            snprintf(classes + n, sizeof classes - n, "%s%s%s", n ? ", " : "",
                     order[i] == ATTN_F32 ? "P in f32" : "P rounded to ",
                     order[i] == ATTN_F32 ? "" : attn_dtype_name(order[i]));
        }
    printf("%-*s types: q %s, kv %s, o %s (%s); classes: %s%s\n", w, "", q, kv, o,
           v->widening == ATTN_WIDEN_ON_LOAD ? "widened on load"
                                             : "f32 kernel: the dispatcher widens",
           classes, v->denormals_are_zero ? "; denormals-are-zero" : "");
}

int cmd_list(int argc, char **argv)
{
    int slug_only = 0, names_only = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_switch(argv, i, "--help") || cli_switch(argv, i, "-h")) {
            list_help();
            return EXIT_OK;
        } else if (cli_switch(argv, i, "--slug")) {
            slug_only = 1;
        } else if (cli_switch(argv, i, "--names")) {
            names_only = 1;
        } else {
            return cli_unknown("list", argv[i]);
        }
    }
    if (names_only) {
        /* Every variant of the table, runnable here or not: what ctest's
         * per-variant tests are generated from (a skip is visible there). */
        for (int i = 0; i < attn_variant_table_size; i++)
            printf("%s\n", attn_variant_table[i]->name);
        return EXIT_OK;
    }
    if (cli_check_cpu_mask("list") != 0)
        return EXIT_USAGE;
    attn_machine m;
    attn_machine_read(&m);
    if (slug_only) {
        printf("%s\n", m.slug);
        return EXIT_OK;
    }
    const attn_cpu_info *cpu = attn_cpu();
    /* The name column as wide as the longest name in the table. */
    int w = (int)strlen("variant");
    for (int i = 0; i < attn_variant_table_size; i++)
        w = (int)strlen(attn_variant_table[i]->name) > w ? (int)strlen(attn_variant_table[i]->name)
                                                         : w;
    printf("%-*s %-26s %s\n", w, "variant", "status", "description");
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        char status[160] = "available";
        if (!attn_variant_runnable(v)) {
            char missing[128];
            attn_variant_missing(v, missing, sizeof missing);
            snprintf(status, sizeof status, "skipped: needs %s", missing);
        }
        printf("%-*s %-26s %s\n", w, v->name, status, v->description);
        print_types(v, w);
    }
    char buf[256];
    printf("\ncpu: %s (%d logical CPUs, slug %s)\n", m.model, m.cores, m.slug);
    printf("identity: %s family %d model %d stepping %d: %s%s%s%s; best FMA ISA %s\n", m.vendor,
           m.family, m.model_id, m.stepping, m.uarch, m.uarch_note[0] ? " (" : "", m.uarch_note,
           m.uarch_note[0] ? ")" : "", m.isa);
    attn_cpu_format(cpu->detected, buf, sizeof buf);
    printf("detected features: %s\n", buf[0] ? buf : "(none beyond x86-64)");
    printf("caches (one core, CPUID): L1D %lld KiB, L2 %lld KiB; avx512 sizes its key blocks "
           "from them and the head size\n",
           (long long)(cpu->l1d_bytes >> 10), (long long)(cpu->l2_bytes >> 10));
    if (cpu->hidden & cpu->detected) {
        attn_cpu_format(cpu->hidden & cpu->detected, buf, sizeof buf);
        printf("hidden by ATTN_CPU_MASK: %s\n", buf);
    }
    return EXIT_OK;
}
