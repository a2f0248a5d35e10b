#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "cpu_features.h"
#include "variant.h"

int cli_flag_value(int argc, char **argv, int *i, const char *flag, const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(flag);
    if (strncmp(arg, flag, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", argv[0], flag);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_switch(char **argv, int i, const char *flag)
{
    return strcmp(argv[i], flag) == 0;
}

int cli_whole_number(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(text, &end, 10);
    /* strtol would skip leading blanks and take a '+': a flag value is
     * the digits alone. */
    int plain =
        (text[0] == '-' && isdigit((unsigned char)text[1])) || isdigit((unsigned char)text[0]);
    if (!plain || errno || end == text || *end != '\0' || x < min || x > max)
        return -1;
    *out = x;
    return 0;
}

int cli_parse_long(const char *cmd, const char *flag, const char *text, long min, long max,
                   long *out)
{
    if (cli_whole_number(text, min, max, out) != 0) {
        fprintf(stderr, "%s: %s = '%s' must be a whole number from %ld to %ld\n", cmd, flag, text,
                min, max);
        return -1;
    }
    return 0;
}

int cli_unknown(const char *cmd, const char *arg)
{
    fprintf(stderr, "%s: unknown option '%s' (see attnbench %s --help)\n", cmd, arg, cmd);
    return EXIT_USAGE;
}

int cli_check_cpu_mask(const char *cmd)
{
    const attn_cpu_info *cpu = attn_cpu();
    if (cpu->mask_error) {
        fprintf(stderr, "%s: %s\n", cmd, cpu->mask_message);
        return -1;
    }
    return 0;
}

int cli_add_variant(const char *cmd, const char *name, const attn_variant **list, int *n, int cap)
{
    const attn_variant *v = attn_find_variant(name);
    if (!v) {
        fprintf(stderr, "%s: --variant '%s' is not a variant (attnbench list)\n", cmd, name);
        return -1;
    }
    for (int i = 0; i < *n; i++)
        if (list[i] == v)
            return 0; /* named twice: run once */
    if (*n < cap)
        list[(*n)++] = v;
    return 0;
}

int cli_set_filter(const char *cmd, const char *pattern, regex_t *re, int *has)
{
    if (*has)
        regfree(re);
    *has = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB) == 0;
    if (!*has) {
        fprintf(stderr, "%s: --filter '%s' is not a valid regular expression\n", cmd, pattern);
        return -1;
    }
    return 0;
}

int cli_parse_dtypes(const char *cmd, const char *text, attn_types *out)
{
    char why[200];
    int n = attn_dtype_axis_parse(text, out, why, sizeof why);
    if (n < 0)
        fprintf(stderr, "%s: %s\n", cmd, why);
    return n;
}

int cli_parse_pages(const char *cmd, const char *text, attn_pages *out)
{
    if (attn_pages_parse(text, out) == 0)
        return 0;
    fprintf(stderr, "%s: --pages '%s' must be huge or base\n", cmd, text);
    return -1;
}

void cli_pages_help(int column)
{
    const int pad = column > 12 ? column - 11 : 1;
    printf("  --pages P%*spages under the inputs, their copies, the workspace and the\n"
           "%*sread roof's arrays: huge (transparent huge pages by madvise, the\n"
           "%*sdefault; NumPy gives the peers' arrays the same) or base (4 KiB)\n",
           pad, "", column, "", column, "");
}
