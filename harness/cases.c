#include "cases.h"

#include "dtype.h"
#include "shape_arg.h"
#include "variant.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const data_names[DATA_KIND_COUNT] = {
    [DATA_NORMAL] = "normal",
    [DATA_HUGE_LOGITS] = "huge_logits",
    [DATA_ALL_NEGATIVE] = "all_negative",
    [DATA_TIED] = "tied",
    [DATA_ONE_HOT] = "one_hot",
    [DATA_RISING] = "rising",
    [DATA_FALLING] = "falling",
    [DATA_CANCELLING_V] = "cancelling_v",
    [DATA_NAN_Q] = "nan_q",
    [DATA_NAN_K] = "nan_k",
    [DATA_NAN_V] = "nan_v",
    [DATA_MASKED_NONFINITE] = "masked_nonfinite",
    [DATA_INF] = "inf",
    [DATA_SUBNORMAL] = "subnormal",
};

const char *attn_data_name(attn_data_kind kind)
{
    return kind >= 0 && kind < DATA_KIND_COUNT ? data_names[kind] : "?";
}

float attn_data_own_scale(attn_data_kind kind)
{
    switch (kind) {
    case DATA_HUGE_LOGITS:
        return 20.0f; /* with q and k of sd 4: scores far past expf's 88.7 */
    case DATA_ALL_NEGATIVE:
    case DATA_ONE_HOT:
    case DATA_RISING:
    case DATA_FALLING:
        return 1.0f; /* the keys are built as the scores themselves */
    default:
        return 0.0f;
    }
}

/* The shortest %g spelling (6 to 9 significant digits) that the scale
 * parser of --shape and the CSV (attn_scale_parse) reads back as the same
 * float, so a case name names its scale exactly: the matrix and resume
 * tell cells apart by it. Six digits first keeps every name that %g
 * already spelled; nine always read back. */
static int print_scale(char *buf, size_t cap, float scale)
{
    char text[32];
    int digits = 6;
    for (; digits < 9; digits++) {
        float back;
        snprintf(text, sizeof text, "%.*g", digits, (double)scale);
        if (attn_scale_parse(text, &back, NULL, 0) == 0 && back == scale)
            break;
    }
    return snprintf(buf, cap, ",scale=%.*g", digits, (double)scale);
}

void attn_case_name(const char *variant, const attn_case *c, char *buf, size_t cap)
{
    const attn_shape *s = &c->shape;
    int n = snprintf(buf, cap, "%s%s%sB=%d,Hq=%d,Hkv=%d,nq=%d,nkv=%d,dk=%d,dv=%d,causal=%d",
                     variant ? "impl=" : "", variant ? variant : "", variant ? "," : "",
                     (int)s->batch, (int)s->heads_q, (int)s->heads_kv, (int)s->n_q, (int)s->n_kv,
                     (int)s->d_k, (int)s->d_v, (int)s->causal);
    if (n < 0 || (size_t)n >= cap)
        return;
    if (s->scale != 0.0f)
        n += print_scale(buf + n, cap - (size_t)n, s->scale);
    if (n >= 0 && (size_t)n < cap && c->data != DATA_NORMAL)
        n += snprintf(buf + n, cap - (size_t)n, ",data=%s", attn_data_name(c->data));
    if (n >= 0 && (size_t)n < cap && !attn_types_all_f32(&c->types))
        n += snprintf(buf + n, cap - (size_t)n, ",q=%s,kv=%s,o=%s", attn_dtype_name(c->types.q),
                      attn_dtype_name(c->types.kv), attn_dtype_name(c->types.o));
    if (n >= 0 && (size_t)n < cap && c->p_round != ATTN_F32)
        snprintf(buf + n, cap - (size_t)n, ",p=%s", attn_dtype_name(c->p_round));
}

static const struct {
    const char *name;
    attn_types types;
} dtype_axis[ATTN_DTYPE_AXIS_MAX] = {
    {"f32", {ATTN_F32, ATTN_F32, ATTN_F32}},     {"bf16", {ATTN_BF16, ATTN_BF16, ATTN_BF16}},
    {"f16", {ATTN_F16, ATTN_F16, ATTN_F16}},     {"f16kv", {ATTN_F32, ATTN_F16, ATTN_F32}},
    {"bf16kv", {ATTN_F32, ATTN_BF16, ATTN_F32}},
};

int attn_types_all_f32(const attn_types *t)
{
    return t->q == ATTN_F32 && t->kv == ATTN_F32 && t->o == ATTN_F32;
}

const char *attn_dtype_axis_name(const attn_types *t)
{
    for (int i = 0; i < ATTN_DTYPE_AXIS_MAX; i++)
        if (memcmp(&dtype_axis[i].types, t, sizeof *t) == 0)
            return dtype_axis[i].name;
    return NULL;
}

static int add_types(attn_types *out, int n, const attn_types *t)
{
    for (int i = 0; i < n; i++)
        if (memcmp(&out[i], t, sizeof *t) == 0)
            return n;
    out[n] = *t;
    return n + 1;
}

int attn_dtype_axis_parse(const char *arg, attn_types *out, char *msg, size_t cap)
{
    int n = 0;
    const char *p = arg ? arg : "";
    do {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int found = 0;
        if (len == 3 && strncmp(p, "all", 3) == 0) {
            for (int i = 0; i < ATTN_DTYPE_AXIS_MAX; i++)
                n = add_types(out, n, &dtype_axis[i].types);
            found = 1;
        }
        for (int i = 0; i < ATTN_DTYPE_AXIS_MAX && !found; i++)
            if (strlen(dtype_axis[i].name) == len && strncmp(p, dtype_axis[i].name, len) == 0) {
                n = add_types(out, n, &dtype_axis[i].types);
                found = 1;
            }
        if (!found) {
            if (msg)
                snprintf(msg, cap,
                         "--dtype: '%.*s' is not one of f32, bf16, f16, f16kv, bf16kv, all",
                         (int)len, p);
            return -1;
        }
        p = comma ? comma + 1 : NULL;
    } while (p);
    return n;
}

int attn_case_min_seeds(const attn_case *c)
{
    if (c->data != DATA_HUGE_LOGITS)
        return 3;
    /* 32 seeds and at least HUGE_LOGIT_ROWS output rows in all (a shape of
     * a few rows a seed, as `--shape` may give, takes more seeds), at most
     * verify's --seeds limit (cases.h says why). */
    enum { HUGE_LOGIT_SEEDS = 32, HUGE_LOGIT_ROWS = 512 };
    const attn_shape *s = &c->shape;
    const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
    if (rows <= 0)
        return HUGE_LOGIT_SEEDS;
    const int64_t need = (HUGE_LOGIT_ROWS + rows - 1) / rows;
    return need <= HUGE_LOGIT_SEEDS      ? HUGE_LOGIT_SEEDS
           : need >= ATTN_CASE_SEEDS_MAX ? ATTN_CASE_SEEDS_MAX
                                         : (int)need;
}

int attn_case_set_parse(const char *name)
{
    if (!name)
        return -1;
    if (strcmp(name, "quick") == 0)
        return CASES_QUICK;
    if (strcmp(name, "full") == 0)
        return CASES_FULL;
    if (strcmp(name, "adversarial") == 0)
        return CASES_ADVERSARIAL;
    if (strcmp(name, "growth") == 0)
        return CASES_GROWTH;
    return -1;
}

/* Shapes: {batch, heads_q, heads_kv, n_q, n_kv, d_k, d_v, causal, scale}; every
 * case list below is float32 in the "P in f32" class (verify --dtype sets
 * the types of a run). */
#define F32_TYPES                                                                                  \
    {                                                                                              \
        ATTN_F32, ATTN_F32, ATTN_F32                                                               \
    }
static const attn_case quick_cases[] = {
    {{1, 2, 2, 37, 37, 16, 16, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 4, 2, 64, 64, 32, 24, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{2, 8, 2, 1, 300, 64, 64, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32}, /* decode, GQA */
    {{1, 2, 1, 20, 50, 8, 8, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32}, /* chunked prefill, MQA */
    {{1, 2, 2, 45, 45, 16, 16, 1, 0.0f}, DATA_RISING, F32_TYPES, ATTN_F32},
};

static const attn_case full_cases[] = {
    /* GQA, MQA, batch > 1 */
    {{3, 8, 2, 33, 33, 32, 32, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{2, 8, 1, 40, 40, 16, 16, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{2, 6, 3, 17, 17, 8, 8, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* cross attention and chunked prefill: n_q < n_kv, n_q > n_kv, both masks */
    {{1, 2, 2, 19, 131, 24, 24, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 19, 131, 24, 24, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 131, 19, 24, 24, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 131, 19, 24, 24, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* KV-cache decode: one query row against a long cache */
    {{1, 8, 2, 1, 1000, 64, 64, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 4, 4, 1, 777, 128, 128, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{2, 4, 1, 3, 513, 80, 80, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* few query rows per K/V head (n_q x group = 1 ... 8, the decode
     * kernels' row counts) against caches around the key-block edges */
    {{1, 2, 2, 1, 47, 160, 160, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 4, 2, 1, 49, 17, 129, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{2, 3, 1, 1, 97, 128, 128, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 8, 2, 1, 4099, 128, 128, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 5, 1, 1, 96, 1, 1, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 8, 1, 1, 1000, 64, 64, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 1, 3, 300, 33, 33, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 2, 1, 16, 16, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 1, 1, 8, 1500, 128, 256, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* 4 rows, d_v of 9 vectors of 8 (the last short): avx2's passes of 2 */
    {{1, 8, 2, 1, 333, 40, 70, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* d_k != d_v */
    {{1, 2, 2, 50, 50, 48, 20, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 1, 50, 70, 7, 129, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* odd and degenerate sizes */
    {{1, 1, 1, 1, 1, 1, 1, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 1, 1, 1, 1, 1, 1, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 3, 3, 5, 1, 3, 2, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 1, 1, 127, 129, 3, 5, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 1, 1, 257, 257, 65, 33, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 100, 100, 80, 80, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* custom and negative scale */
    {{1, 2, 2, 60, 60, 16, 16, 0, 0.5f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 60, 60, 16, 16, 1, -0.3f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* longer rows: several key blocks per row */
    {{1, 2, 2, 300, 1100, 64, 64, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
};

static const attn_case adversarial_cases[] = {
    {{1, 2, 2, 65, 65, 16, 16, 0, 0.0f}, DATA_HUGE_LOGITS, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 65, 65, 16, 16, 1, 0.0f}, DATA_HUGE_LOGITS, F32_TYPES, ATTN_F32},
    /* decode: 4 batches, so that its 32 seeds hold 512 query rows
     * (attn_case_min_seeds: one batch, 128 rows, left the maximum to luck) */
    {{4, 4, 2, 1, 600, 32, 32, 0, 0.0f}, DATA_HUGE_LOGITS, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 70, 70, 8, 8, 0, 0.0f}, DATA_ALL_NEGATIVE, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 70, 70, 8, 8, 1, 0.0f}, DATA_ALL_NEGATIVE, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 100, 100, 12, 12, 1, 0.0f}, DATA_TIED, F32_TYPES, ATTN_F32},
    {{1, 2, 1, 1, 500, 12, 12, 0, 0.0f}, DATA_TIED, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 80, 80, 16, 16, 0, 0.0f}, DATA_ONE_HOT, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 80, 80, 1, 3, 1, 0.0f}, DATA_ONE_HOT, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 1, 700, 16, 16, 0, 0.0f}, DATA_ONE_HOT, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 300, 300, 16, 16, 0, 0.0f}, DATA_RISING, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 300, 300, 16, 16, 1, 0.0f}, DATA_RISING, F32_TYPES, ATTN_F32},
    {{1, 4, 2, 1, 2000, 16, 16, 0, 0.0f}, DATA_RISING, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 300, 300, 16, 16, 0, 0.0f}, DATA_FALLING, F32_TYPES, ATTN_F32},
    {{1, 4, 2, 1, 2000, 16, 16, 1, 0.0f}, DATA_FALLING, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 64, 64, 16, 16, 0, 0.0f}, DATA_CANCELLING_V, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 1, 512, 16, 16, 0, 0.0f}, DATA_CANCELLING_V, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 40, 40, 8, 8, 0, 0.0f}, DATA_NAN_Q, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 40, 40, 8, 8, 1, 0.0f}, DATA_NAN_K, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 40, 40, 8, 8, 0, 0.0f}, DATA_NAN_K, F32_TYPES, ATTN_F32},
    {{1, 4, 2, 1, 600, 8, 8, 0, 0.0f}, DATA_NAN_K, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 40, 40, 8, 8, 1, 0.0f}, DATA_NAN_V, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 50, 50, 8, 8, 1, 0.0f}, DATA_MASKED_NONFINITE, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 20, 300, 8, 8, 1, 0.0f}, DATA_MASKED_NONFINITE, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 30, 30, 8, 8, 0, 0.0f}, DATA_INF, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 30, 30, 8, 8, 1, 0.0f}, DATA_INF, F32_TYPES, ATTN_F32},
    {{1, 2, 2, 33, 33, 9, 9, 1, 0.0f}, DATA_SUBNORMAL, F32_TYPES, ATTN_F32},
    /* decode heads of 8 and 4 rows (the few-rows kernels' widest tiles),
     * d_k 33: a key row's last element alone in its vector, the next key's
     * row right behind it */
    {{1, 8, 1, 1, 300, 33, 33, 0, 0.0f}, DATA_NAN_K, F32_TYPES, ATTN_F32},
    {{1, 4, 1, 1, 300, 33, 33, 0, 0.0f}, DATA_INF, F32_TYPES, ATTN_F32},
    {{1, 8, 1, 1, 200, 33, 33, 0, 0.0f}, DATA_SUBNORMAL, F32_TYPES, ATTN_F32},
    {{1, 4, 1, 2, 300, 33, 33, 1, 0.0f}, DATA_MASKED_NONFINITE, F32_TYPES, ATTN_F32},
    /* n_q > n_kv with causal: the first 30 rows see no key and give +0 */
    {{1, 2, 2, 40, 10, 8, 8, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
    /* a single key: every row equals V's only row */
    {{1, 2, 2, 9, 1, 16, 16, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int push(attn_case *out, int cap, int n, attn_case c)
{
    if (n < cap)
        out[n] = c;
    return n + 1;
}

/* docs/accuracy.md's edge sweep around one tile size T: n and d over 1, T-1, T,
 * T+1 and 2T+prime. n is swept with d fixed at an odd 37 and d with n fixed
 * at 2T+7, causal alternating; plus decode against a 2T+7 cache. */
static int tile_sweep(int32_t T, attn_case *out, int cap, int n)
{
    const int32_t edges[] = {1, T - 1, T, T + 1, 2 * T + 7};
    for (int e = 0; e < 5; e++) {
        int32_t x = edges[e];
        if (x < 1)
            continue;
        int32_t causal = e & 1;
        n = push(
            out, cap, n,
            (attn_case){{1, 2, 1, x, x, 37, 37, causal, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32});
        int32_t rows = 2 * T + 7 > 600 ? 600 : 2 * T + 7;
        int32_t dv = x > 1 ? x - 1 : 1; /* d_v != d_k too */
        if (x <= 1200)
            n = push(
                out, cap, n,
                (attn_case){
                    {1, 2, 2, rows, rows, x, dv, causal, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32});
    }
    n = push(
        out, cap, n,
        (attn_case){{1, 4, 2, 1, 2 * T + 7, 16, 16, 0, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32});
    return n;
}

int attn_case_list(attn_case_set set, const int32_t *tiles, int n_tiles, attn_case *out, int cap)
{
    int n = 0;
    switch (set) {
    case CASES_QUICK:
        for (int i = 0; i < COUNT(quick_cases); i++)
            n = push(out, cap, n, quick_cases[i]);
        break;
    case CASES_FULL:
        for (int i = 0; i < COUNT(quick_cases); i++)
            n = push(out, cap, n, quick_cases[i]);
        for (int i = 0; i < COUNT(full_cases); i++)
            n = push(out, cap, n, full_cases[i]);
        for (int t = 0; tiles && t < n_tiles; t++)
            n = tile_sweep(tiles[t], out, cap, n);
        break;
    case CASES_ADVERSARIAL:
        for (int i = 0; i < COUNT(adversarial_cases); i++)
            n = push(out, cap, n, adversarial_cases[i]);
        break;
    case CASES_GROWTH:
        /* N(0,1) scores (a few keys dominate each row) and tied scores (every
         * key weighs 1/n: the sums are as long as they get) */
        for (int32_t kv = 64; kv <= 16384; kv *= 4)
            n = push(
                out, cap, n,
                (attn_case){{1, 2, 1, 64, kv, 64, 64, 1, 0.0f}, DATA_NORMAL, F32_TYPES, ATTN_F32});
        for (int32_t kv = 64; kv <= 16384; kv *= 4)
            n = push(
                out, cap, n,
                (attn_case){{1, 2, 1, 64, kv, 64, 64, 1, 0.0f}, DATA_TIED, F32_TYPES, ATTN_F32});
        break;
    }
    return n;
}

size_t attn_q_elems(const attn_shape *s)
{
    return (size_t)s->batch * s->heads_q * s->n_q * s->d_k;
}
size_t attn_kv_elems(const attn_shape *s, int32_t d)
{
    return (size_t)s->batch * s->heads_kv * s->n_kv * d;
}
size_t attn_o_elems(const attn_shape *s)
{
    return (size_t)s->batch * s->heads_q * s->n_q * s->d_v;
}

uint64_t attn_rng_next(attn_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double attn_rng_uniform(attn_rng *r)
{
    return (double)(attn_rng_next(r) >> 11) * 0x1p-53;
}

double attn_rng_normal(attn_rng *r)
{
    double u1 = attn_rng_uniform(r), u2 = attn_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

static void fill_normal(attn_rng *r, float *x, size_t n, double sigma)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(attn_rng_normal(r) * sigma);
}

/* Row `j` of kv head `g` in batch `b` of a K or V tensor with width d. */
static float *kv_row(const attn_shape *s, float *base, int32_t d, int32_t b, int32_t g, int32_t j)
{
    return base + (((size_t)b * s->heads_kv + g) * s->n_kv + j) * d;
}
static float *q_row(const attn_shape *s, float *q, int32_t b, int32_t h, int32_t i)
{
    return q + (((size_t)b * s->heads_q + h) * s->n_q + i) * s->d_k;
}

/* Applies `fn` to every (batch, kv head). */
#define FOR_KV_HEADS(s, b, g)                                                                      \
    for (int32_t b = 0; b < (s)->batch; b++)                                                       \
        for (int32_t g = 0; g < (s)->heads_kv; g++)

static void fill_structured_keys(const attn_shape *s, attn_data_kind kind, attn_rng *r, float *q,
                                 float *k)
{
    /* q rows point along axis 0 with a little noise elsewhere; the key's
     * axis-0 component sets the score. */
    for (size_t i = 0; i < attn_q_elems(s); i++)
        q[i] = (float)(attn_rng_normal(r) * 0.1);
    for (int32_t b = 0; b < s->batch; b++)
        for (int32_t h = 0; h < s->heads_q; h++)
            for (int32_t i = 0; i < s->n_q; i++)
                q_row(s, q, b, h, i)[0] = kind == DATA_ONE_HOT ? 10.0f : 1.0f;
    FOR_KV_HEADS(s, b, g)
    {
        int32_t hot = (int32_t)(attn_rng_next(r) % (uint64_t)s->n_kv);
        for (int32_t j = 0; j < s->n_kv; j++) {
            float *kj = kv_row(s, k, s->d_k, b, g, j);
            for (int32_t t = 1; t < s->d_k; t++)
                kj[t] = (float)(attn_rng_normal(r) * 0.1);
            double frac = (double)j / s->n_kv;
            kj[0] = kind == DATA_ONE_HOT  ? (j == hot ? 20.0f : 0.0f)
                    : kind == DATA_RISING ? (float)(40.0 * frac)
                                          : (float)(40.0 * (1.0 - frac));
        }
    }
}

attn_shape attn_case_fill(const attn_case *c, uint64_t seed, float *q, float *k, float *v)
{
    attn_shape s = c->shape;
    attn_rng r = {seed * 0x2545F4914F6CDD1Dull + (uint64_t)c->data};
    const size_t nq = attn_q_elems(&s), nk = attn_kv_elems(&s, s.d_k),
                 nv = attn_kv_elems(&s, s.d_v);
    fill_normal(&r, q, nq, 1.0);
    fill_normal(&r, k, nk, 1.0);
    fill_normal(&r, v, nv, 1.0);
    switch (c->data) {
    case DATA_NORMAL:
        break;
    case DATA_HUGE_LOGITS:
        fill_normal(&r, q, nq, 4.0);
        fill_normal(&r, k, nk, 4.0);
        s.scale = attn_data_own_scale(c->data);
        break;
    case DATA_ALL_NEGATIVE:
        for (size_t i = 0; i < nq; i++)
            q[i] = 1.0f;
        for (size_t i = 0; i < nk; i++)
            k[i] = (float)((-200.0 + attn_rng_normal(&r) * 0.5) / s.d_k);
        s.scale = attn_data_own_scale(c->data);
        break;
    case DATA_TIED:
        FOR_KV_HEADS(&s, b, g)
        for (int32_t j = 1; j < s.n_kv; j++)
            memcpy(kv_row(&s, k, s.d_k, b, g, j), kv_row(&s, k, s.d_k, b, g, 0),
                   sizeof(float) * (size_t)s.d_k);
        break;
    case DATA_ONE_HOT:
    case DATA_RISING:
    case DATA_FALLING:
        fill_structured_keys(&s, c->data, &r, q, k);
        s.scale = attn_data_own_scale(c->data);
        break;
    case DATA_CANCELLING_V:
        FOR_KV_HEADS(&s, b, g)
        for (int32_t j = 0; j + 1 < s.n_kv; j += 2) {
            memcpy(kv_row(&s, k, s.d_k, b, g, j + 1), kv_row(&s, k, s.d_k, b, g, j),
                   sizeof(float) * (size_t)s.d_k);
            float *v0 = kv_row(&s, v, s.d_v, b, g, j), *v1 = kv_row(&s, v, s.d_v, b, g, j + 1);
            for (int32_t t = 0; t < s.d_v; t++)
                v1[t] = -v0[t];
        }
        break;
    case DATA_NAN_Q:
        for (int32_t b = 0; b < s.batch; b++)
            for (int32_t h = 0; h < s.heads_q; h++)
                q_row(&s, q, b, h,
                      (int32_t)(attn_rng_next(&r) %
                                (uint64_t)s.n_q))[attn_rng_next(&r) % (uint64_t)s.d_k] = NAN;
        break;
    case DATA_NAN_K:
        FOR_KV_HEADS(&s, b, g)
        kv_row(&s, k, s.d_k, b, g,
               (int32_t)(attn_rng_next(&r) %
                         (uint64_t)s.n_kv))[attn_rng_next(&r) % (uint64_t)s.d_k] = NAN;
        break;
    case DATA_NAN_V:
        FOR_KV_HEADS(&s, b, g)
        kv_row(&s, v, s.d_v, b, g,
               (int32_t)(attn_rng_next(&r) %
                         (uint64_t)s.n_kv))[attn_rng_next(&r) % (uint64_t)s.d_v] = NAN;
        break;
    case DATA_MASKED_NONFINITE:
        FOR_KV_HEADS(&s, b, g)
        {
            kv_row(&s, k, s.d_k, b, g, s.n_kv - 1)[0] = NAN;
            if (s.n_kv >= 2)
                kv_row(&s, v, s.d_v, b, g, s.n_kv - 2)[0] = INFINITY;
        }
        break;
    case DATA_INF:
        q_row(&s, q, 0, 0, s.n_q > 1 ? 1 : 0)[0] = INFINITY;
        kv_row(&s, k, s.d_k, 0, 0, s.n_kv - 1)[0] = -INFINITY;
        kv_row(&s, v, s.d_v, 0, 0, s.n_kv > 2 ? 2 : 0)[s.d_v > 1 ? 1 : 0] = INFINITY;
        break;
    case DATA_SUBNORMAL:
        fill_normal(&r, q, nq, 1e-39);
        fill_normal(&r, k, nk, 1e-39);
        FOR_KV_HEADS(&s, b, g)
        for (int32_t j = 0; j < s.n_kv; j += 2) {
            float *vj = kv_row(&s, v, s.d_v, b, g, j);
            for (int32_t t = 0; t < s.d_v; t++)
                vj[t] *= 1e-40f;
        }
        break;
    case DATA_KIND_COUNT:
        break;
    }
    return s;
}
