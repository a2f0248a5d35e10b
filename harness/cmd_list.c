#include <stdio.h>

#include "cli.h"
#include "cpu_features.h"
#include "machine.h"
#include "variant.h"

static void list_help(void)
{
    printf("usage: attnbench list [--slug | --names]\n\n"
           "Lists every variant with its description and whether this CPU runs it\n"
           "(or 'skipped: needs FEATURE'), then the detected and hidden CPU features.\n"
           "  --slug   print only the machine slug used for results/<slug>/ and exit\n"
           "  --names  print only the variant names, one a line, in table order\n");
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
    printf("%-8s %-26s %s\n", "variant", "status", "description");
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        char status[160] = "available";
        if (!attn_variant_runnable(v)) {
            char missing[128];
            attn_variant_missing(v, missing, sizeof missing);
            snprintf(status, sizeof status, "skipped: needs %s", missing);
        }
        printf("%-8s %-26s %s\n", v->name, status, v->description);
    }
    char buf[256];
    printf("\ncpu: %s (%d logical CPUs, slug %s)\n", m.model, m.cores, m.slug);
    printf("identity: %s family %d model %d stepping %d: %s; best FMA ISA %s\n", m.vendor, m.family,
           m.model_id, m.stepping, m.uarch, m.isa);
    attn_cpu_format(cpu->detected, buf, sizeof buf);
    printf("detected features: %s\n", buf[0] ? buf : "(none beyond x86-64)");
    if (cpu->hidden & cpu->detected) {
        attn_cpu_format(cpu->hidden & cpu->detected, buf, sizeof buf);
        printf("hidden by ATTN_CPU_MASK: %s\n", buf);
    }
    return EXIT_OK;
}
