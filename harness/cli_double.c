/* cli_parse_double: the floating-point sibling of cli_parse_long (cli.c),
 * for --min-time, --seconds and the like. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cli_parse_double(const char *cmd, const char *flag, const char *text, double min, double max,
                     double *out)
{
    /* As cli_parse_long: no leading blank or '+'. An underflow (ERANGE
     * with a subnormal or 0) is a number like any other; an overflow is
     * beyond max, and NaN within no range. */
    char *end;
    double x = strtod(text, &end);
    if (isspace((unsigned char)text[0]) || text[0] == '+' || end == text || *end != '\0' ||
        !(x >= min && x <= max)) {
        fprintf(stderr, "%s: %s = '%s' must be a number from %g to %g\n", cmd, flag, text, min,
                max);
        return -1;
    }
    *out = x;
    return 0;
}
