/* attnbench: list, verify, demo, bench, matrix, peak — one binary that runs
 * on any x86-64 and picks what this CPU can run at run time. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    attn_command_fn run;
    const char *summary;
} commands[] = {
    {"list", cmd_list, "every variant, whether this CPU runs it, and the detected features"},
    {"verify", cmd_verify, "check every variant against the double-precision reference"},
    {"demo", cmd_demo, "two worked examples, a softmax and one attention head, step by step"},
    {"bench", cmd_bench, "Google Benchmark timings of variants x shapes x threads"},
    {"matrix", cmd_matrix, "the results CSV: every variant x shape x threads, timed and checked"},
    {"rss", cmd_rss, "peak resident memory of one call, in a process of its own"},
    {"peak", cmd_peak, "the machine's roofline: FMA peak per ISA, exp rate, memory bandwidth"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: attnbench COMMAND [options]   (attnbench COMMAND --help for its options)\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nenvironment: OMP_NUM_THREADS (threads), ATTN_CPU_MASK (hide CPU features, "
               "e.g. -avx512f,-avx2 or -all)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "attnbench: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
