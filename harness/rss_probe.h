/* Peak resident memory of one attention call, for the memory target "stream
 * and SIMD variants at n = 65536, d = 64: peak RSS <= inputs + 64 MiB".
 * The figure is the whole process's peak (VmHWM), so it is measured in
 * a process of its own: `attnbench rss` runs one call and reports; the
 * perf-targets report spawns it once per variant. */
#ifndef ATTN_RSS_PROBE_H
#define ATTN_RSS_PROBE_H

#include <stddef.h>
#include <stdint.h>

typedef struct attn_rss_result {
    size_t input_bytes;    /* Q, K, V and O */
    size_t peak_rss_bytes; /* the process's peak resident set */
    size_t workspace_bytes;
    double seconds;
} attn_rss_result;

/* Overhead the target allows beyond the inputs. */
#define ATTN_RSS_ALLOWANCE ((size_t)64 << 20)

/* One call of `variant` on batch 1, one head, n_q = n_kv = n, d_k = d_v = d
 * (causal when asked: the same memory for half the time), in this process.
 * Returns an ATTN_* code; ATTN_ENOTSUP for a variant this CPU lacks. */
int attn_rss_probe_run(const char *variant, int32_t n, int32_t d, int causal, attn_rss_result *out);

/* The same in a child process (`self rss ...`, self = /proc/self/exe).
 * Returns 0, or -1 with `err` set (the child's refusal or failure). */
int attn_rss_probe_spawn(const char *variant, int32_t n, int32_t d, int causal,
                         attn_rss_result *out, char *err, size_t cap);

/* The memory target for each of the streaming variants `names`
 * (NULL-terminated) this CPU runs, probed in child processes at n = 65536,
 * d = 64 (causal: the same memory in half the time). Prints a ✓/✗ line per
 * variant; returns how many met it, *probed how many were measured. */
#include <stdio.h>
int attn_rss_targets_report(FILE *f, const char *const *names, int *probed);

#endif
