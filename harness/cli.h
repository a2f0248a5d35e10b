/* What every attnbench subcommand shares: its signature, exit codes, and
 * the small helpers that parse "--flag value" / "--flag=value". */
#ifndef ATTN_CLI_H
#define ATTN_CLI_H

#include <stdint.h>

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* argv[0] is the subcommand's name. */
typedef int (*attn_command_fn)(int argc, char **argv);

int cmd_list(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_peak(int argc, char **argv);
int cmd_rss(int argc, char **argv);

/* 1 when argv[*i] is `flag` with a value ("--flag v" or "--flag=v"):
 * sets *value and advances *i past a separate value. -1 (after printing
 * the problem) when the value is missing; 0 when argv[*i] is another flag. */
int cli_flag_value(int argc, char **argv, int *i, const char *flag, const char **value);

/* 1 when argv[*i] is exactly the switch `flag`. */
int cli_switch(char **argv, int i, const char *flag);

/* A whole number in [min, max], the digits alone (an optional '-', no
 * blank, no '+'), into *out; -1 (out untouched) on anything else. */
int cli_whole_number(const char *text, long min, long max, long *out);

/* The same as a flag's value; prints "<cmd>: <flag> ..." and returns -1 on
 * anything else. */
int cli_parse_long(const char *cmd, const char *flag, const char *text, long min, long max,
                   long *out);

/* The same for a number in [min, max] (cli_double.c). */
int cli_parse_double(const char *cmd, const char *flag, const char *text, double min, double max,
                     double *out);

/* Parses a --dtype list (cases.h: f32, bf16, f16, f16kv, bf16kv, all) into
 * out[ATTN_DTYPE_AXIS_MAX]; returns how many, or prints "<cmd>: --dtype ..."
 * and returns -1. */
struct attn_types;
int cli_parse_dtypes(const char *cmd, const char *text, struct attn_types *out);

/* --pages: "huge" or "base" (big_alloc.h) into *out; prints "<cmd>: --pages
 * 'x' must be huge or base" and returns -1 on anything else. */
#include "big_alloc.h"
int cli_parse_pages(const char *cmd, const char *text, attn_pages *out);
/* The --pages lines of a command's help, the same in every command, its
 * text from `column` (where the command's other descriptions start). */
void cli_pages_help(int column);

/* Appends the variant named `name` to list[*n] (at most `cap`, each once);
 * prints "<cmd>: --variant 'x' is not a variant" and returns -1 when unknown. */
struct attn_variant;
int cli_add_variant(const char *cmd, const char *name, const struct attn_variant **list, int *n,
                    int cap);

/* Compiles `pattern` (POSIX extended) into *re, replacing a previous one
 * when *has is set; prints "<cmd>: --filter 'x' is not a valid regular
 * expression" and returns -1 (with *has cleared) when it does not compile. */
#include <regex.h>
int cli_set_filter(const char *cmd, const char *pattern, regex_t *re, int *has);

/* Prints "<cmd>: unknown option '<arg>'" plus a hint to --help; returns EXIT_USAGE. */
int cli_unknown(const char *cmd, const char *arg);

/* Checks ATTN_CPU_MASK; prints its problem and returns -1 when malformed. */
int cli_check_cpu_mask(const char *cmd);

#endif
