#include "perf_cases.h"

#include <math.h>
#include <string.h>

#include "cases.h"
#include "dtype.h"
#include "variant.h"

/* The fused (single-pass, online-softmax) variants and the peer baseline:
 * the performance targets compare the best fused one with the baseline (blas). */
static int in_perf_targets(const attn_variant *v)
{
    return v->family == ATTN_FAMILY_ONLINE || v->cost == ATTN_COST_BASELINE;
}

static const attn_perf_preset_info presets[PERF_PRESET_COUNT] = {
    [PERF_QUICK] = {"quick",
                    "n 128..2048, d 64/128, heads 8, causal on/off, decode; 1 and all threads; "
                    "bf16 prefill n=512 and a bf16 KV cache decode at all threads",
                    NULL, 3, 0.1, 1.0},
    [PERF_FULL] = {"full",
                   "n 128..16384, d 64/80/128, heads 1/8/32, GQA 32/8, MQA 32/1, causal on/off, "
                   "decode to 32768; threads 1..all; bf16 prefill and f16/bf16 KV cache decode "
                   "for the fast variants",
                   NULL, 5, 0.5, 30.0},
    [PERF_DECODE] = {"decode",
                     "n_q 1 and 4 against KV caches of 256..32768, Hq 64 / Hkv 8 at 32768, "
                     "those two at 32768 also in bf16, bf16kv and f16kv; 1 and all threads",
                     NULL, 5, 0.2, 10.0},
    [PERF_SCALING] = {"scaling", "every thread count 1..all on prefill and decode shapes", NULL, 5,
                      0.3, 10.0},
    [PERF_TARGETS] =
        {"perf-targets",
         "the performance targets' rows: prefill n=4096 h8 d128/d64 (causal on/off at all "
         "threads; non-causal at 1, 2 and all), quick's prefill shapes (n 128..2048) at all "
         "threads, decode 1 x 4096..32768 Hq32/Hkv8 and Hq32/Hkv32 d128; prefill d128 in bf16 "
         "and f16, decode with an f16 and a bf16 KV cache",
         in_perf_targets, 5, 0.5, 10.0},
    [PERF_TEST] = {"test", "tiny shapes for ctest (seconds)", NULL, 2, 0.002, 1.0},
};

int attn_perf_preset_variants(attn_perf_preset p, const attn_variant **out, int cap)
{
    const attn_perf_preset_info *info = attn_perf_preset_get(p);
    int n = 0;
    for (int i = 0; info && i < attn_variant_table_size && n < cap; i++)
        if (!info->includes || info->includes(attn_variant_table[i]))
            out[n++] = attn_variant_table[i];
    return n;
}

int attn_perf_preset_parse(const char *name)
{
    for (int i = 0; name && i < PERF_PRESET_COUNT; i++)
        if (strcmp(name, presets[i].name) == 0)
            return i;
    return -1;
}

const attn_perf_preset_info *attn_perf_preset_get(attn_perf_preset p)
{
    return p >= 0 && p < PERF_PRESET_COUNT ? &presets[p] : NULL;
}

const char *attn_perf_preset_names(void)
{
    return "quick|full|decode|scaling|perf-targets|test";
}

/* Which thread counts a row of a preset runs at. */
typedef enum thread_set {
    T_ALL,         /* all */
    T_ONE_AND_ALL, /* 1 and all */
    T_ONE_TWO_ALL, /* 1, 2 and all (each once) */
    T_ONE_TWO,     /* 1 and 2, each only when below all */
    T_LADDER,      /* 1, 2, 4, ... and all */
    T_EVERY,       /* 1, 2, 3, ... all (powers of two past 16) */
} thread_set;

int attn_perf_case_runs(const attn_perf_case *c, const attn_variant *v)
{
    return !c->includes || c->includes(v);
}

/* The variants tiled and threaded for speed (the table's cost class): the
 * ones a low-precision slice of the full preset is worth hours for. */
static int is_fast(const attn_variant *v)
{
    return v->cost == ATTN_COST_FAST;
}

/* The element types of the preset's low-precision rows (--dtype's names). */
static const attn_types F32 = {ATTN_F32, ATTN_F32, ATTN_F32};
static const attn_types BF16 = {ATTN_BF16, ATTN_BF16, ATTN_BF16};
static const attn_types F16 = {ATTN_F16, ATTN_F16, ATTN_F16};
static const attn_types F16KV = {ATTN_F32, ATTN_F16, ATTN_F32};
static const attn_types BF16KV = {ATTN_F32, ATTN_BF16, ATTN_F32};

typedef struct case_builder {
    int all;
    const attn_perf_axes *axes; /* overrides; never NULL */
    attn_perf_case *out;
    int cap, n;
    attn_perf_pair pair; /* of the rows being pushed; kept only by the cells it fits */
} case_builder;

static void push_one(case_builder *b, const attn_shape *s, int threads, const attn_types *types,
                     int (*includes)(const attn_variant *))
{
    attn_perf_pair pair = b->pair;
    if ((pair == ATTN_PAIR_ONE_THREAD && threads < 2) ||
        (pair == ATTN_PAIR_F32 && attn_types_all_f32(types)) ||
        (pair == ATTN_PAIR_NON_CAUSAL && !s->causal) ||
        (pair == ATTN_PAIR_USUAL_SCALE && s->scale == 0.0f))
        pair = ATTN_PAIR_NONE;
    if (b->n < b->cap)
        b->out[b->n] = (attn_perf_case){*s, threads, *types, includes, pair};
    b->n++;
}

void attn_perf_case_name(const char *variant, const attn_shape *s, const attn_types *t, char *buf,
                         size_t cap)
{
    const attn_case c = {.shape = *s, .data = DATA_NORMAL, .types = *t};
    attn_case_name(variant, &c, buf, cap);
}

int attn_perf_twin(const attn_perf_case *c, attn_perf_case *twin)
{
    static const attn_types f32 = {ATTN_F32, ATTN_F32, ATTN_F32};
    if (c->pair == ATTN_PAIR_NONE)
        return 0;
    *twin = *c;
    twin->pair = ATTN_PAIR_NONE;
    if (c->pair == ATTN_PAIR_ONE_THREAD)
        twin->threads = 1;
    else if (c->pair == ATTN_PAIR_NON_CAUSAL)
        twin->shape.causal = 0;
    else if (c->pair == ATTN_PAIR_USUAL_SCALE)
        twin->shape.scale = 0.0f;
    else
        twin->types = f32;
    return 1;
}

/* The thread counts of a row, into t (room for 64); returns how many. */
static int thread_counts(const case_builder *b, thread_set set, int t[64])
{
    int n = 0;
    if (b->axes->n_threads > 0) {
        for (int i = 0; i < b->axes->n_threads && n < 64; i++)
            t[n++] = b->axes->threads[i];
        return n;
    }
    const int all = b->all;
    switch (set) {
    case T_ALL:
        t[n++] = all;
        break;
    case T_ONE_AND_ALL:
        t[n++] = 1;
        if (all > 1)
            t[n++] = all;
        break;
    case T_ONE_TWO_ALL:
        t[n++] = 1;
        if (all > 2)
            t[n++] = 2;
        if (all > 1)
            t[n++] = all;
        break;
    case T_ONE_TWO:
        for (int k = 1; k <= 2 && k < all; k++)
            t[n++] = k;
        break;
    case T_LADDER:
        for (int k = 1; k < all && n < 63; k *= 2)
            t[n++] = k;
        t[n++] = all;
        break;
    case T_EVERY:
        for (int k = 1; k < all && n < 63; k = k < 16 ? k + 1 : k * 2)
            t[n++] = k;
        t[n++] = all;
        break;
    }
    return n;
}

/* One row of a preset: a shape at its thread counts, each at `types`
 * (n_types of them), run by the variants `includes` takes. */
static void push_row(case_builder *b, attn_shape s, thread_set set, const attn_types *types,
                     int n_types, int (*includes)(const attn_variant *))
{
    int t[64];
    const int n = thread_counts(b, set, t);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n_types; k++)
            push_one(b, &s, t[i], &types[k], includes);
}

/* A shape in f32, or at every type --dtype gives. */
static void push(case_builder *b, attn_shape s, thread_set set)
{
    if (b->axes->n_types > 0)
        push_row(b, s, set, b->axes->types, b->axes->n_types, NULL);
    else
        push_row(b, s, set, &F32, 1, NULL);
}

/* A preset's own low-precision rows: left out when --dtype gives the
 * types, since then every shape is at those already. */
static void push_low(case_builder *b, attn_shape s, thread_set set, const attn_types *types,
                     int n_types, int (*includes)(const attn_variant *))
{
    if (b->axes->n_types == 0)
        push_row(b, s, set, types, n_types, includes);
}

static attn_shape mha(int32_t heads, int32_t n, int32_t d, int32_t causal)
{
    return (attn_shape){1, heads, heads, n, n, d, d, causal, 0.0f};
}

static attn_shape grouped(int32_t hq, int32_t hkv, int32_t n_q, int32_t n_kv, int32_t d,
                          int32_t causal)
{
    return (attn_shape){1, hq, hkv, n_q, n_kv, d, d, causal, 0.0f};
}

/* quick's prefill grid. perf-targets times it too, at all threads: its
 * blas and peer targets judge every prefill shape of both presets. */
static void quick_prefill(case_builder *b, thread_set set)
{
    const int32_t ns[] = {128, 512, 2048}, ds[] = {64, 128};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            for (int32_t causal = 0; causal <= 1; causal++)
                push(b, mha(8, ns[i], ds[j], causal), set);
}

static void quick(case_builder *b)
{
    quick_prefill(b, T_ONE_AND_ALL);
    push(b, grouped(32, 8, 1, 4096, 128, 0), T_ONE_AND_ALL);
    /* One cheap cell of each low-precision kind the targets judge. */
    push_low(b, mha(8, 512, 128, 0), T_ALL, &BF16, 1, NULL);
    push_low(b, grouped(32, 8, 1, 4096, 128, 0), T_ALL, &BF16KV, 1, NULL);
}

static void full(case_builder *b)
{
    const int32_t ds[] = {64, 80, 128};
    /* Multi-head attention at 1 and 8 heads over the whole n range ... */
    for (int32_t n = 128; n <= 16384; n *= 2)
        for (int j = 0; j < 3; j++)
            for (int32_t heads = 1; heads <= 8; heads *= 8)
                for (int32_t causal = 0; causal <= 1; causal++)
                    push(b, mha(heads, n, ds[j], causal), T_LADDER);
    /* ... at 32 heads every fourth n (n = 16384 x 32 heads is ~4 TFLOP a call) ... */
    for (int32_t n = 128; n <= 8192; n *= 4)
        for (int j = 0; j < 3; j++)
            for (int32_t causal = 0; causal <= 1; causal++)
                push(b, mha(32, n, ds[j], causal), T_LADDER);
    /* ... GQA 32/8 and MQA 32/1 ... */
    const int32_t kv_heads[] = {8, 1};
    for (int g = 0; g < 2; g++)
        for (int32_t n = 512; n <= 8192; n *= 4)
            for (int j = 0; j < 3; j += 2)
                for (int32_t causal = 0; causal <= 1; causal++)
                    push(b, grouped(32, kv_heads[g], n, n, ds[j], causal), T_LADDER);
    /* ... and decode: one query row per head against the KV cache. */
    const int32_t decode_kv[] = {32, 8, 1};
    for (int32_t n_kv = 512; n_kv <= 32768; n_kv *= 4)
        for (int g = 0; g < 3; g++)
            for (int j = 0; j < 3; j += 2)
                push(b, grouped(32, decode_kv[g], 1, n_kv, ds[j], 0), T_LADDER);
    /* A low-precision slice: bf16 prefill and narrow KV caches for decode,
     * the fast variants only (the others would spend the budget on rows
     * that say nothing new about their speed). */
    const attn_types narrow_kv[] = {F16KV, BF16KV};
    for (int32_t n = 1024; n <= 4096; n *= 4)
        for (int32_t causal = 0; causal <= 1; causal++)
            push_low(b, mha(8, n, 128, causal), T_LADDER, &BF16, 1, is_fast);
    for (int32_t n_kv = 4096; n_kv <= 32768; n_kv *= 8)
        push_low(b, grouped(32, 8, 1, n_kv, 128, 0), T_LADDER, narrow_kv, 2, is_fast);
}

static void decode(case_builder *b)
{
    const int32_t hkv[] = {32, 8, 1};
    for (int32_t n_kv = 256; n_kv <= 32768; n_kv *= 4) {
        for (int g = 0; g < 3; g++)
            for (int32_t d = 64; d <= 128; d *= 2)
                push(b, grouped(32, hkv[g], 1, n_kv, d, 0), T_ONE_AND_ALL);
        push(b, grouped(8, 8, 1, n_kv, 128, 0), T_ONE_AND_ALL);
    }
    push(b, grouped(32, 8, 1, 32768, 128, 0), T_ONE_AND_ALL);
    /* Groups of 8 query heads a K/V head (Hq 64 / Hkv 8): the decode
     * kernels' widest row tile, where they are bound by arithmetic more
     * than by the cache's bytes. */
    push(b, grouped(64, 8, 1, 32768, 128, 0), T_ONE_AND_ALL);
    /* The types models decode in, beside the f32 rows of the same shapes:
     * bf16 throughout (Q, cache, O), and a bf16 or f16 cache under f32
     * queries. */
    const attn_types low[] = {BF16, BF16KV, F16KV};
    push_low(b, grouped(32, 8, 1, 32768, 128, 0), T_ONE_AND_ALL, low, 3, NULL);
    push_low(b, grouped(64, 8, 1, 32768, 128, 0), T_ONE_AND_ALL, low, 3, NULL);
    /* A few query rows at once (speculative decoding, small chunks): still
     * memory-bound, causal with the rows at the end of the cache. */
    push(b, grouped(32, 8, 4, 4096, 128, 1), T_ONE_AND_ALL);
    push(b, grouped(32, 8, 4, 32768, 128, 1), T_ONE_AND_ALL);
}

static void scaling(case_builder *b)
{
    push(b, mha(8, 2048, 128, 0), T_EVERY);
    push(b, mha(8, 2048, 128, 1), T_EVERY);
    push(b, mha(8, 4096, 64, 0), T_EVERY);
    push(b, grouped(32, 8, 1, 32768, 128, 0), T_EVERY);
}

/* A variant built on a tensor path takes no f32 K/V (a bf16 kernel); the
 * rest take f32. perf-targets times each in its own types. */
static int takes_f32(const attn_variant *v)
{
    return attn_variant_takes_f32(v);
}

static int takes_no_f32(const attn_variant *v)
{
    return !attn_variant_takes_f32(v);
}

/* The cells perf_targets.c reads, each once (tests/test_perf_targets
 * checks the two agree). */
static void targets(case_builder *b)
{
    /* Non-causal at 1 and 2 threads too: the 1-thread roof targets and
     * every fused variant's 2-vs-1-thread speed-up, in f32 or, for a
     * variant that takes no f32 (avx512_bf16), in bf16: its speed-up over
     * the best f32 variant and its own 2-vs-1. */
    for (int32_t d = 128; d >= 64; d /= 2) {
        b->pair = ATTN_PAIR_ONE_THREAD;
        if (b->axes->n_types > 0) {
            push(b, mha(8, 4096, d, 0), T_ONE_TWO_ALL);
        } else {
            push_row(b, mha(8, 4096, d, 0), T_ONE_TWO_ALL, &F32, 1, takes_f32);
            /* bf16 d128 at all threads is the low-precision cell below
             * (every variant runs it; this one's f32 twin cannot, so it
             * is timed alone and its 2-vs-1 taken from two rows). */
            push_row(b, mha(8, 4096, d, 0), d == 128 ? T_ONE_TWO : T_ONE_TWO_ALL, &BF16, 1,
                     takes_no_f32);
        }
        /* The causal cell with its own non-causal twin: the causal target,
         * every fused variant in its own types (f32, or bf16). */
        b->pair = ATTN_PAIR_NON_CAUSAL;
        push(b, mha(8, 4096, d, 1), T_ALL);
        if (b->axes->n_types == 0)
            push_row(b, mha(8, 4096, d, 1), T_ALL, &BF16, 1, takes_no_f32);
        b->pair = ATTN_PAIR_NONE;
    }
    quick_prefill(b, T_ALL);
    /* Decode against KV caches of 4096..32768, GQA 32/8 and MHA 32/32: the
     * read-roof and the best-peer targets. 32/32 at 32768 is a 1 GiB cache. */
    for (int32_t heads_kv = 8; heads_kv <= 32; heads_kv *= 4)
        for (int32_t n_kv = 4096; n_kv <= 32768; n_kv *= 2)
            push(b, grouped(32, heads_kv, 1, n_kv, 128, 0), T_ALL);
    /* The low-precision targets: prefill with bf16/f16 inputs and decode
     * with a half-size KV cache, each beside its f32 row above. */
    const attn_types prefill_low[] = {BF16, F16}, decode_low[] = {F16KV, BF16KV};
    b->pair = ATTN_PAIR_F32;
    push_low(b, mha(8, 4096, 128, 0), T_ALL, prefill_low, 2, NULL);
    push_low(b, grouped(32, 8, 1, 32768, 128, 0), T_ALL, decode_low, 2, NULL);
    /* Peaked attention: scale 2 at d 128 puts most of a row's weights 87
     * or more below its max, where e^x is subnormal (a microcode assist on
     * every instruction that makes or reads one, on Intel cores), beside
     * its twin at the usual 1/sqrt(d): the peaked-logits target. */
    b->pair = ATTN_PAIR_USUAL_SCALE;
    attn_shape peaked = mha(8, PEAKED_N, 128, 0);
    peaked.scale = PEAKED_SCALE;
    if (b->axes->n_types > 0) {
        push(b, peaked, T_ALL);
    } else {
        push_row(b, peaked, T_ALL, &F32, 1, takes_f32);
        push_row(b, peaked, T_ALL, &BF16, 1, takes_no_f32);
    }
    b->pair = ATTN_PAIR_NONE;
}

static void test(case_builder *b)
{
    /* Its all-thread cell with its 1-thread twin, its causal cells with
     * their non-causal twins: the pairings under test. */
    b->pair = ATTN_PAIR_ONE_THREAD;
    push(b, mha(2, 64, 32, 0), T_ONE_AND_ALL);
    b->pair = ATTN_PAIR_NON_CAUSAL;
    push(b, mha(2, 64, 32, 1), T_ONE_AND_ALL);
    b->pair = ATTN_PAIR_NONE;
    push(b, grouped(4, 2, 1, 256, 32, 0), T_ONE_AND_ALL);
}

int attn_perf_case_list(attn_perf_preset p, int all, const attn_perf_axes *axes,
                        attn_perf_case *out, int cap)
{
    static const attn_perf_axes none = {NULL, 0, NULL, 0, NULL, 0};
    case_builder b = {all < 1 ? 1 : all, axes ? axes : &none, out, cap, 0, ATTN_PAIR_NONE};
    if (b.axes->n_shapes > 0) { /* --shape: the user's shapes, not the preset's */
        for (int i = 0; i < b.axes->n_shapes; i++)
            push(&b, b.axes->shapes[i], T_ALL);
        return b.n;
    }
    switch (p) {
    case PERF_QUICK:
        quick(&b);
        break;
    case PERF_FULL:
        full(&b);
        break;
    case PERF_DECODE:
        decode(&b);
        break;
    case PERF_SCALING:
        scaling(&b);
        break;
    case PERF_TARGETS:
        targets(&b);
        break;
    case PERF_TEST:
        test(&b);
        break;
    case PERF_PRESET_COUNT:
        break;
    }
    return b.n;
}

int attn_perf_same_cell(const attn_shape *a, const attn_shape *b)
{
    return a->batch == b->batch && a->heads_q == b->heads_q && a->heads_kv == b->heads_kv &&
           a->n_q == b->n_q && a->n_kv == b->n_kv && a->d_k == b->d_k && a->d_v == b->d_v &&
           a->causal == b->causal && a->scale == b->scale;
}

double attn_perf_flops(const attn_shape *s)
{
    double rows_keys = 0; /* sum over query rows of the keys each sees */
    if (!s->causal) {
        rows_keys = (double)s->n_q * s->n_kv;
    } else {
        for (int32_t i = 0; i < s->n_q; i++)
            rows_keys += attn_keys_seen(s, i);
    }
    return 2.0 * (s->d_k + s->d_v) * rows_keys * s->heads_q * s->batch;
}

double attn_perf_bytes(const attn_shape *s, const attn_types *t)
{
    const attn_types types = t ? *t : F32;
    double q = (double)s->batch * s->heads_q * s->n_q * s->d_k;
    double kv = (double)s->batch * s->heads_kv * s->n_kv * (s->d_k + s->d_v);
    double o = (double)s->batch * s->heads_q * s->n_q * s->d_v;
    return (double)attn_dtype_size(types.q) * q + (double)attn_dtype_size(types.kv) * kv +
           (double)attn_dtype_size(types.o) * o;
}

int attn_perf_bandwidth_bound(const attn_shape *s)
{
    return s->n_q <= 16;
}

int attn_perf_roofline_bandwidth_bound(const attn_shape *s, const attn_types *t, double gflops,
                                       double gbytes_per_s)
{
    if (!attn_perf_bandwidth_bound(s))
        return 0;
    if (!(gflops > 0.0 && gbytes_per_s > 0.0 && isfinite(gflops) && isfinite(gbytes_per_s)))
        return 1;
    return attn_perf_bytes(s, t) / gbytes_per_s >= attn_perf_flops(s) / gflops;
}
