/* The public entry points: thin wrappers over the variant table that check
 * every argument before anything is allocated or written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_features.h"
#include "reference.h"
#include "variant.h"

size_t attn_workspace_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t cap = (size_t)64 << 30;
    if (pages <= 0 || page <= 0)
        return (size_t)4 << 30;
    size_t half = (size_t)pages / 2 * (size_t)page;
    return half < cap ? half : cap;
}

const attn_variant *attn_find_variant(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < attn_variant_table_size; i++)
        if (strcmp(attn_variant_table[i]->name, name) == 0)
            return attn_variant_table[i];
    return NULL;
}

int attn_variant_runnable(const attn_variant *v)
{
    uint32_t have = attn_cpu()->features;
    return (v->required_features & ~have) == 0;
}

void attn_variant_missing(const attn_variant *v, char *buf, size_t cap)
{
    attn_cpu_format(v->required_features & ~attn_cpu()->features, buf, cap);
}

enum { GUARD_BYTES = 64 };
static const unsigned char guard_pattern = 0xA5;

int attn_run_variant(const attn_variant *var, const attn_shape *s, const float *q, const float *k,
                     const float *v, float *o, attn_run_report *report, char *msg, size_t cap)
{
    if (report) {
        report->workspace_bytes = 0;
        report->workspace_guard_ok = 1;
    }
    if (msg && cap)
        msg[0] = '\0';
    if (!var) {
        if (msg)
            snprintf(msg, cap, "unknown variant");
        return ATTN_ENOTFOUND;
    }
    int rc = attn_check_shape(s, msg, cap);
    if (rc != ATTN_OK)
        return rc;
    const attn_cpu_info *cpu = attn_cpu();
    if (!q || !k || !v || !o || cpu->mask_error) {
        if (msg && cpu->mask_error && q && k && v && o)
            snprintf(msg, cap, "%s", cpu->mask_message);
        else if (msg)
            snprintf(msg, cap, "buffer %s is NULL", !q ? "q" : !k ? "k" : !v ? "v" : "o");
        return ATTN_EINVAL;
    }
    if (!attn_variant_runnable(var)) {
        if (msg) {
            char missing[128];
            attn_variant_missing(var, missing, sizeof missing);
            snprintf(msg, cap, "variant %s needs %s, which this CPU lacks", var->name, missing);
        }
        return ATTN_ENOTSUP;
    }
    attn_problem p = attn_problem_make(s, q, k, v, o);
    size_t bytes = 0;
    rc = var->workspace_size(&p, &bytes);
    size_t limit = attn_workspace_limit();
    if (rc != ATTN_OK || bytes > limit) {
        if (msg)
            snprintf(msg, cap, "variant %s needs %s%zu bytes of workspace; the limit is %zu",
                     var->name, rc != ATTN_OK ? "more than " : "", bytes, limit);
        return ATTN_ENOMEM;
    }
    if (report)
        report->workspace_bytes = bytes;
    /* Round up to the alignment and surround with guard bytes that must
     * survive the run: a variant that writes past its workspace is a bug. */
    size_t body = (bytes + 63) & ~(size_t)63;
    unsigned char *block = aligned_alloc(64, body + 2 * GUARD_BYTES);
    if (!block) {
        if (msg)
            snprintf(msg, cap, "cannot allocate %zu bytes of workspace for %s", bytes, var->name);
        return ATTN_ENOMEM;
    }
    memset(block, guard_pattern, GUARD_BYTES);
    memset(block + GUARD_BYTES + body, guard_pattern, GUARD_BYTES);
    rc = var->run(&p, block + GUARD_BYTES);
    int guard_ok = 1;
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (block[i] != guard_pattern || block[GUARD_BYTES + body + i] != guard_pattern)
            guard_ok = 0;
    free(block);
    if (report)
        report->workspace_guard_ok = guard_ok;
    if (rc != ATTN_OK && msg && !msg[0])
        snprintf(msg, cap, "variant %s failed: %s", var->name, attn_strerror(rc));
    return rc;
}

int attn_variant_count(void)
{
    return attn_variant_table_size;
}

const char *attn_variant_name(int index)
{
    if (index < 0 || index >= attn_variant_table_size)
        return NULL;
    return attn_variant_table[index]->name;
}

int attn_variant_supported(const char *name)
{
    const attn_variant *v = attn_find_variant(name);
    if (!v)
        return ATTN_ENOTFOUND;
    if (attn_cpu()->mask_error)
        return ATTN_EINVAL;
    return attn_variant_runnable(v);
}

int attn_run(const char *variant, const attn_shape *s, const float *q, const float *k,
             const float *v, float *o)
{
    return attn_run_variant(attn_find_variant(variant), s, q, k, v, o, NULL, NULL, 0);
}

/* The public reference: the problem layer checks the arguments as for
 * attn_run, then the independent judge (reference/) computes O. */
int attn_reference(const attn_shape *s, const float *q, const float *k, const float *v, double *o)
{
    int rc = attn_check_shape(s, NULL, 0);
    if (rc != ATTN_OK)
        return rc;
    if (!q || !k || !v || !o)
        return ATTN_EINVAL;
    return attn_ref_attention(s, q, k, v, o);
}

const char *attn_strerror(int code)
{
    switch (code) {
    case ATTN_OK:
        return "success";
    case ATTN_EINVAL:
        return "invalid argument: a NULL pointer, a shape field out of range (batch, heads_q, "
               "heads_kv, n_q, n_kv, d_k, d_v >= 1; heads_kv divides heads_q; causal 0 or 1; "
               "finite scale), a tensor size that overflows, or a malformed ATTN_CPU_MASK";
    case ATTN_ENOTSUP:
        return "not supported: this CPU (or ATTN_CPU_MASK) lacks a feature the variant needs";
    case ATTN_ENOMEM:
        return "out of memory: the variant's workspace cannot be allocated or exceeds the limit "
               "(half the physical memory, at most 64 GiB)";
    case ATTN_ENOTFOUND:
        return "no variant of that name (attnbench list shows them)";
    default:
        return "unknown error code";
    }
}
