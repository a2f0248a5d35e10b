/* The public entry points: thin wrappers over the variant table that check
 * every argument before anything is allocated or written. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_features.h"
#include "variant.h"

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (msg)                                                                                   \
            snprintf(msg, cap, __VA_ARGS__);                                                       \
        return ATTN_EINVAL;                                                                        \
    } while (0)

static int mul_size(size_t a, size_t b, size_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* Bytes of a [x][y][n][d] float tensor, or -1 on overflow. */
static int tensor_bytes(int32_t x, int32_t y, int32_t n, int32_t d, size_t *bytes)
{
    size_t t = sizeof(float);
    if (mul_size(t, (size_t)x, &t) || mul_size(t, (size_t)y, &t) || mul_size(t, (size_t)n, &t) ||
        mul_size(t, (size_t)d, &t))
        return -1;
    /* Element indices are computed in size_t but also as ptrdiff_t by callers. */
    if (t > (size_t)PTRDIFF_MAX)
        return -1;
    *bytes = t;
    return 0;
}

int attn_check_shape(const attn_shape *s, char *msg, size_t cap)
{
    if (msg && cap)
        msg[0] = '\0';
    if (!s)
        FAIL("shape is NULL");
    const struct {
        const char *name;
        int32_t value;
    } positive[] = {{"batch", s->batch}, {"heads_q", s->heads_q}, {"heads_kv", s->heads_kv},
                    {"n_q", s->n_q},     {"n_kv", s->n_kv},       {"d_k", s->d_k},
                    {"d_v", s->d_v}};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
        if (positive[i].value < 1)
            FAIL("%s = %d must be >= 1", positive[i].name, (int)positive[i].value);
    if (s->heads_q % s->heads_kv != 0)
        FAIL("heads_kv = %d does not divide heads_q = %d", (int)s->heads_kv, (int)s->heads_q);
    if (s->causal != 0 && s->causal != 1)
        FAIL("causal = %d must be 0 or 1", (int)s->causal);
    if (!isfinite(s->scale))
        FAIL("scale = %g must be finite (0 means 1/sqrt(d_k))", (double)s->scale);
    size_t bytes;
    if (tensor_bytes(s->batch, s->heads_q, s->n_q, s->d_k, &bytes))
        FAIL("Q of batch %d x heads_q %d x n_q %d x d_k %d floats overflows the address space",
             (int)s->batch, (int)s->heads_q, (int)s->n_q, (int)s->d_k);
    if (tensor_bytes(s->batch, s->heads_kv, s->n_kv, s->d_k, &bytes))
        FAIL("K of batch %d x heads_kv %d x n_kv %d x d_k %d floats overflows the address space",
             (int)s->batch, (int)s->heads_kv, (int)s->n_kv, (int)s->d_k);
    if (tensor_bytes(s->batch, s->heads_kv, s->n_kv, s->d_v, &bytes))
        FAIL("V of batch %d x heads_kv %d x n_kv %d x d_v %d floats overflows the address space",
             (int)s->batch, (int)s->heads_kv, (int)s->n_kv, (int)s->d_v);
    if (tensor_bytes(s->batch, s->heads_q, s->n_q, s->d_v, &bytes))
        FAIL("O of batch %d x heads_q %d x n_q %d x d_v %d floats overflows the address space",
             (int)s->batch, (int)s->heads_q, (int)s->n_q, (int)s->d_v);
    return ATTN_OK;
}

attn_problem attn_problem_make(const attn_shape *s, const float *q, const float *k, const float *v,
                               float *o)
{
    return (attn_problem){
        .shape = *s,
        .scale = s->scale != 0.0f ? s->scale : 1.0f / sqrtf((float)s->d_k),
        .group = s->heads_q / s->heads_kv,
        .threads = omp_get_max_threads(),
        .q = q,
        .k = k,
        .v = v,
        .o = o,
    };
}

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
    for (int i = 0; i < attn_variants_count; i++)
        if (strcmp(attn_variants[i].name, name) == 0)
            return &attn_variants[i];
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
    if (!q || !k || !v || !o)
        FAIL("buffer %s is NULL", !q ? "q" : !k ? "k" : !v ? "v" : "o");
    const attn_cpu_info *cpu = attn_cpu();
    if (cpu->mask_error)
        FAIL("%s", cpu->mask_message);
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
    return attn_variants_count;
}

const char *attn_variant_name(int index)
{
    if (index < 0 || index >= attn_variants_count)
        return NULL;
    return attn_variants[index].name;
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
