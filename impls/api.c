/* The public entry points: thin wrappers over the variant table that check
 * every argument before anything is allocated or written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_features.h"
#include "reference.h"
#include "variant.h"

size_t attn_workspace_limit(void)
{
    return attn_cpu()->workspace_limit;
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
    const attn_cpu_info *cpu = attn_cpu();
    attn_cpu_describe_missing(v->required_features & ~cpu->features, cpu->amx_refused, buf, cap);
}

int attn_variant_check_types(const attn_variant *var, const attn_run_options *opt, char *msg,
                             size_t cap)
{
    const struct {
        const char *field;
        int32_t value;
        uint32_t taken;
    } f[] = {{"types.q", opt->types.q, attn_variant_type_set(var->q_types)},
             {"types.kv", opt->types.kv, attn_variant_type_set(var->kv_types)},
             {"types.o", opt->types.o, attn_variant_type_set(var->o_types)},
             /* the class is no field of attn_types: named as it is */
             {"p_round", opt->p_round, attn_variant_p_rounds(var)}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!attn_dtype_valid(f[i].value)) {
            if (msg)
                snprintf(msg, cap, "%s = %d is not an attn_dtype (0 f32, 1 f16, 2 bf16)",
                         f[i].field, (int)f[i].value);
            return ATTN_EINVAL;
        }
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!(f[i].taken & ATTN_DTYPE_BIT(f[i].value))) {
            if (msg) {
                if (i == 3 && f[i].value == ATTN_F32)
                    snprintf(msg, cap, "variant %s does not compute the class \"P in f32\"",
                             var->name);
                else if (i == 3)
                    snprintf(msg, cap, "variant %s does not compute the class \"P rounded to %s\"",
                             var->name, attn_dtype_name(f[i].value));
                else
                    snprintf(msg, cap, "variant %s does not take %s = %s", var->name, f[i].field,
                             attn_dtype_name(f[i].value));
            }
            return ATTN_ENOTSUP;
        }
    return ATTN_OK;
}

enum { GUARD_BYTES = 64 };
static const unsigned char guard_pattern = 0xA5;

/* Elements of Q, K, V, O for a checked shape (no overflow: checked there). */
static void tensor_elems(const attn_shape *s, size_t n[4])
{
    n[0] = (size_t)s->batch * s->heads_q * s->n_q * s->d_k;
    n[1] = (size_t)s->batch * s->heads_kv * s->n_kv * s->d_k;
    n[2] = (size_t)s->batch * s->heads_kv * s->n_kv * s->d_v;
    n[3] = (size_t)s->batch * s->heads_q * s->n_q * s->d_v;
}

/* For an f32-only kernel with narrow tensors: where the f32 copies go in
 * the workspace, after the variant's own part (0: tensor already f32). */
typedef struct widen_plan {
    int active;
    int32_t type[4]; /* of Q, K, V, O */
    size_t elems[4];
    size_t at[4];     /* byte offsets of the copies, 64-byte aligned */
    size_t own_bytes; /* the variant's workspace */
} widen_plan;

static int plan_widening(const attn_variant *var, const attn_shape *s, const attn_types *t,
                         widen_plan *w, size_t *bytes)
{
    memset(w, 0, sizeof *w);
    w->type[0] = t->q;
    w->type[1] = t->kv;
    w->type[2] = t->kv;
    w->type[3] = t->o;
    w->active = var->widening == ATTN_WIDEN_BY_DISPATCHER &&
                (t->q != ATTN_F32 || t->kv != ATTN_F32 || t->o != ATTN_F32);
    w->own_bytes = *bytes;
    if (!w->active)
        return ATTN_OK;
    tensor_elems(s, w->elems);
    size_t end = (*bytes + 63) & ~(size_t)63;
    if (end < *bytes)
        return ATTN_ENOMEM;
    for (int i = 0; i < 4; i++) {
        if (w->type[i] == ATTN_F32)
            continue;
        size_t b;
        if (__builtin_mul_overflow(w->elems[i], sizeof(float), &b) ||
            __builtin_add_overflow(b, (size_t)63, &b) || __builtin_add_overflow(end, b, &b))
            return ATTN_ENOMEM;
        w->at[i] = end;
        end = b & ~(size_t)63;
    }
    *bytes = end;
    return ATTN_OK;
}

/* Whole tensors converted in chunks of CONVERT_CHUNK elements, in
 * parallel (memory-bound: every thread helps), one direction at a time. */
enum { CONVERT_CHUNK = 1 << 16 };

typedef struct tensor_convert {
    attn_widen_fn widen;   /* src narrow (type t) to dst f32, or */
    attn_narrow_fn narrow; /* src f32 to dst narrow (type t) */
    const void *src;
    void *dst;
    int32_t t;
    size_t n;
} tensor_convert;

static void convert_chunk(const tensor_convert *cv, int64_t c)
{
    const size_t at = (size_t)c * CONVERT_CHUNK;
    const size_t len = cv->n - at < CONVERT_CHUNK ? cv->n - at : CONVERT_CHUNK;
    const size_t narrow_at = at * attn_dtype_size(cv->t);
    if (cv->widen)
        cv->widen((const char *)cv->src + narrow_at, cv->t, (float *)cv->dst + at, len);
    else
        cv->narrow((const float *)cv->src + at, cv->t, (char *)cv->dst + narrow_at, len);
}

/* No more threads than chunks, and no team for one (as flash_run: a
 * libgomp team allocates its descriptor and ends with a futex syscall,
 * even a team of one). */
static void convert_tensor(const tensor_convert *cv, int threads)
{
    const int64_t chunks = (int64_t)((cv->n + CONVERT_CHUNK - 1) / CONVERT_CHUNK);
    const int team = chunks < threads ? (int)chunks : threads;
    if (team <= 1) {
        for (int64_t c = 0; c < chunks; c++)
            convert_chunk(cv, c);
        return;
    }
#pragma omp parallel for num_threads(team) schedule(static)
    for (int64_t c = 0; c < chunks; c++)
        convert_chunk(cv, c);
}

static void widen_tensor(const void *src, int32_t t, float *dst, size_t n, int threads)
{
    const tensor_convert cv = {.widen = attn_widen_best(), .src = src, .dst = dst, .t = t, .n = n};
    convert_tensor(&cv, threads);
}

static void narrow_tensor(const float *src, int32_t t, void *dst, size_t n, int threads)
{
    const tensor_convert cv = {
        .narrow = attn_narrow_best(), .src = src, .dst = dst, .t = t, .n = n};
    convert_tensor(&cv, threads);
}

/* The problem an f32 kernel is handed for a typed problem: the same, all
 * f32 (its tensors become the dispatcher's copies). */
static attn_problem kernel_problem(const attn_variant *var, const attn_problem *p)
{
    attn_problem k = *p;
    if (var->widening == ATTN_WIDEN_BY_DISPATCHER)
        k.types = (attn_types){ATTN_F32, ATTN_F32, ATTN_F32};
    return k;
}

int attn_variant_workspace_typed(const attn_variant *var, const attn_problem *p, size_t *bytes)
{
    attn_problem k = kernel_problem(var, p);
    widen_plan w;
    *bytes = 0;
    int rc = var->workspace_size(&k, bytes);
    if (rc == ATTN_OK)
        rc = plan_widening(var, &p->shape, &p->types, &w, bytes);
    return rc;
}

int attn_variant_run_in(const attn_variant *var, const attn_problem *p, void *workspace)
{
    attn_problem k = kernel_problem(var, p);
    size_t bytes = 0;
    widen_plan w;
    int rc = var->workspace_size(&k, &bytes);
    if (rc == ATTN_OK)
        rc = plan_widening(var, &p->shape, &p->types, &w, &bytes);
    if (rc != ATTN_OK)
        return rc;
    unsigned char *ws = workspace;
    if (w.active) {
        const void *src[3] = {p->q, p->k, p->v};
        const void **dst[3] = {&k.q, &k.k, &k.v};
        for (int i = 0; i < 3; i++)
            if (w.type[i] != ATTN_F32) {
                float *copy = (float *)(ws + w.at[i]);
                widen_tensor(src[i], w.type[i], copy, w.elems[i], k.threads);
                *dst[i] = copy;
            }
        if (w.type[3] != ATTN_F32)
            k.o = ws + w.at[3];
    }
    rc = var->run(&k, ws);
    if (rc == ATTN_OK && w.active && w.type[3] != ATTN_F32)
        narrow_tensor((const float *)(ws + w.at[3]), w.type[3], p->o, w.elems[3], k.threads);
    return rc;
}

int attn_run_variant_typed(const attn_variant *var, const attn_shape *s,
                           const attn_run_options *opt, const void *q, const void *k, const void *v,
                           void *o, attn_run_report *report, char *msg, size_t cap)
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
    if (!opt) {
        if (msg)
            snprintf(msg, cap, "types is NULL");
        return ATTN_EINVAL;
    }
    rc = attn_variant_check_types(var, opt, msg, cap);
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
    attn_problem p = attn_problem_make_typed(s, &opt->types, opt->p_round, q, k, v, o);
    size_t bytes = 0;
    rc = attn_variant_workspace_typed(var, &p, &bytes);
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
    rc = attn_variant_run_in(var, &p, block + GUARD_BYTES);
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

int attn_run_variant(const attn_variant *var, const attn_shape *s, const float *q, const float *k,
                     const float *v, float *o, attn_run_report *report, char *msg, size_t cap)
{
    const attn_run_options f32 = {{ATTN_F32, ATTN_F32, ATTN_F32}, ATTN_F32};
    return attn_run_variant_typed(var, s, &f32, q, k, v, o, report, msg, cap);
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
    /* attn_run_typed with all ATTN_F32 (attn.h), so the variant's own
     * class too: the same answer from either entry point. */
    static const attn_types all_f32 = {ATTN_F32, ATTN_F32, ATTN_F32};
    return attn_run_typed(variant, s, &all_f32, q, k, v, o);
}

int attn_run_typed(const char *variant, const attn_shape *s, const attn_types *t, const void *q,
                   const void *k, const void *v, void *o)
{
    const attn_variant *var = attn_find_variant(variant);
    if (!t)
        return var ? ATTN_EINVAL : ATTN_ENOTFOUND;
    const attn_run_options opt = {*t, var ? attn_variant_default_p_round(var) : ATTN_F32};
    return attn_run_variant_typed(var, s, &opt, q, k, v, o, NULL, NULL, 0);
}

int attn_variant_supports(const char *variant, const attn_types *t)
{
    const attn_variant *v = attn_find_variant(variant);
    if (!v)
        return ATTN_ENOTFOUND;
    if (!t || attn_cpu()->mask_error)
        return ATTN_EINVAL;
    const attn_run_options opt = {*t, attn_variant_default_p_round(v)};
    int rc = attn_variant_check_types(v, &opt, NULL, 0);
    if (rc == ATTN_EINVAL)
        return rc;
    return rc == ATTN_OK && attn_variant_runnable(v);
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
               "finite scale), an element type outside attn_dtype, a tensor size that overflows, "
               "or a "
               "malformed ATTN_CPU_MASK";
    case ATTN_ENOTSUP:
        return "not supported: this CPU (or ATTN_CPU_MASK) lacks a feature the variant needs, or "
               "the variant does not take these element types";
    case ATTN_ENOMEM:
        return "out of memory: the variant's workspace cannot be allocated or exceeds the limit "
               "(half the physical memory, at most 64 GiB)";
    case ATTN_ENOTFOUND:
        return "no variant of that name (attnbench list shows them)";
    default:
        return "unknown error code";
    }
}
