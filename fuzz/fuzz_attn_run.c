/* libFuzzer target: attn_run on shapes and data taken from the input bytes,
 * hostile ones included (zero, negative, INT32_MAX, products that overflow
 * size_t, causal not 0/1, NaN/Inf/huge scale, NULL buffers), for every
 * variant in the table.
 *
 * - A shape attn_check_shape refuses, or a NULL buffer: attn_run gets small
 *   dummy buffers and must return an error code and write nothing.
 * - A shape it accepts whose tensors are small: exactly-sized heap buffers
 *   (AddressSanitizer sees a read one float past any of them), filled from
 *   the input (NaN, Inf and subnormals included). Every runnable variant
 *   must return ATTN_OK, keep its workspace guards, write every element of
 *   O, and give exactly +0 for rows that see no key; variants this CPU
 *   cannot run must return ATTN_ENOTSUP and write nothing. With tame data
 *   (small multiples of 1/16, optionally NaN/Inf/subnormal) and scores far
 *   from float overflow, the result must also pass docs/accuracy.md's rules A
 *   and C against the double reference.
 * - Any accepted shape, however large: each variant's workspace_size must
 *   answer ATTN_OK or ATTN_ENOMEM without overflowing (UBSan watches).
 *
 * - Element types (attn_run_typed, attn_run_variant_typed): when knob bit 7
 *   is set, four bytes after the shape pick Q's, K/V's and O's types and
 *   the precision class, valid ones mostly, else values outside attn_dtype
 *   or NULL types. Invalid ones must be refused (ATTN_EINVAL) with O
 *   untouched; a class a variant does not compute, ATTN_ENOTSUP; valid ones
 *   run as above on exactly-sized f16/bf16 tensors (raw 16-bit patterns in
 *   raw mode: every NaN payload and subnormal) and, with tame data, pass
 *   the class's rules A and C.
 *
 * Input: byte 0 = knobs (threads, data mode, NULL buffer, typed), then nine
 * 5-byte records (batch, heads_q, heads_kv, n_q, n_kv, d_k, d_v, causal,
 * scale): a selector byte (small / hostile table / raw 4 bytes) and 4
 * bytes; then (typed) 4 type bytes; then the tensor data, cycled. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "attn.h"
#include "cases.h"
#include "dtype.h"
#include "metrics.h"
#include "reference.h"
#include "variant.h"

#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_attn_run: %s:%d: violated: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Tensors above this many floats, or more work than this, only get the
 * workspace probe: the fuzzer must stay fast and far below its RSS limit. */
enum { MAX_ELEMS = 1 << 16 };
static const uint64_t max_work = (uint64_t)1 << 19;

enum { HEADER = 1 + 9 * 5 };
enum { FIELD_BATCH, FIELD_HQ, FIELD_HKV, FIELD_NQ, FIELD_NKV, FIELD_DK, FIELD_DV, FIELD_CAUSAL };

static const int32_t hostile_ints[] = {
    0,       -1,          1,     2,      3,       INT32_MAX,     INT32_MIN, INT32_MAX - 1,
    65536,   65537,       46341, 300000, 1 << 20, 1 << 30,       -65536,    63,
    64,      65,          127,   128,    129,     (1 << 24) + 1, 1 << 15,   7,
    1000003, -2147483647, 255,   256,
};
static const float small_scales[] = {0.5f, -0.3f, 1.0f, 2.0f, 20.0f, -1.0f, 1e-3f, 0.125f};
static const float hostile_scales[] = {NAN,    INFINITY, -INFINITY, FLT_MAX,   -FLT_MAX,
                                       1e30f,  -1e30f,   FLT_MIN,   0x1p-149f, -0.0f,
                                       1e-45f, 1e20f,    -1e20f,    0x1p-126f, 88.7f};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A small value most of the time, so that accepted shapes are common. */
static int32_t small_int(int field, const uint8_t *raw, int32_t heads_q)
{
    switch (field) {
    case FIELD_BATCH:
        return 1 + raw[0] % 3;
    case FIELD_HQ:
        return 1 + raw[0] % 8;
    case FIELD_HKV: { /* one of heads_q's divisors */
        if (heads_q < 1 || heads_q > 4096)
            return 1 + raw[0] % 8;
        int32_t divisors[64], n = 0;
        for (int32_t d = 1; d <= heads_q && n < 64; d++)
            if (heads_q % d == 0)
                divisors[n++] = d;
        return divisors[raw[0] % n];
    }
    case FIELD_CAUSAL:
        return raw[0] & 1;
    default: /* n and d: 1 .. 140, around the tiles of 4, 8, 16, 64 */
        return 1 + (int32_t)(le32(raw) % 140);
    }
}

static int32_t pick_int(int field, const uint8_t *rec, int32_t heads_q)
{
    if (rec[0] < 128)
        return small_int(field, rec + 1, heads_q);
    if (rec[0] < 192)
        return hostile_ints[rec[1] % COUNT(hostile_ints)];
    return (int32_t)le32(rec + 1);
}

static float pick_scale(const uint8_t *rec)
{
    if (rec[0] < 128)
        return 0.0f;
    if (rec[0] < 160)
        return small_scales[rec[1] % COUNT(small_scales)];
    if (rec[0] < 192)
        return hostile_scales[rec[1] % COUNT(hostile_scales)];
    uint32_t bits = le32(rec + 1);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

typedef enum { DATA_TAME, DATA_SPECIALS, DATA_RAW_BITS } data_mode;

/* The bytes that stand for special values in DATA_SPECIALS mode. */
static const struct {
    uint8_t byte;
    float value;
} specials[] = {{0x7f, NAN},        {0x7e, INFINITY},
                {0x81, -INFINITY},  {0x80, 0x1p-140f} /* subnormal */,
                {0x82, -0x1p-130f}, {0x83, -0.0f}};

/* Tame: small multiples of 1/16 (products and sums exact for a while, and
 * every one a bf16 and an f16 value); specials: tame with NaN, +-Inf,
 * subnormals and -0 mixed in; raw: any bits. */
static float tame_value(uint8_t b, data_mode mode)
{
    float t = (float)(int8_t)b / 16.0f;
    for (size_t j = 0; mode == DATA_SPECIALS && j < COUNT(specials); j++)
        if (b == specials[j].byte)
            t = specials[j].value;
    return t;
}

/* Element i of a tensor of type t is subnormal (an f16 subnormal widens to
 * an f32 normal: decided on the bits). */
static int subnormal_elem(const void *x, int32_t t, size_t i)
{
    if (t == ATTN_F32)
        return fpclassify(((const float *)x)[i]) == FP_SUBNORMAL;
    const uint16_t h = ((const uint16_t *)x)[i];
    return t == ATTN_F16 ? (h & 0x7C00u) == 0 && (h & 0x3FFu) : (h & 0x7F80u) == 0 && (h & 0x7Fu);
}

/* n elements of type t from the input: raw bits of the type's width in raw
 * mode, else tame or special values rounded to t. */
static void fill(void *x, int32_t t, size_t n, const uint8_t *data, size_t size, size_t *pos,
                 data_mode mode, int *subnormal)
{
    for (size_t i = 0; i < n; i++) {
        if (mode == DATA_RAW_BITS) {
            uint8_t b[4] = {0};
            for (size_t j = 0; j < attn_dtype_size(t); j++)
                b[j] = data[(*pos)++ % size];
            if (t == ATTN_F32) {
                uint32_t bits = le32(b);
                memcpy((float *)x + i, &bits, sizeof bits);
            } else {
                ((uint16_t *)x)[i] = (uint16_t)(b[0] | b[1] << 8);
            }
            continue;
        }
        attn_store_elem(x, t, i, tame_value(data[(*pos)++ % size], mode));
        *subnormal |= subnormal_elem(x, t, i);
    }
}

static const uint32_t unset_bits = 0x7FA00001u; /* a signalling NaN no arithmetic produces */

/* The same for f16 and bf16 O: signalling NaNs, which no conversion gives
 * (narrowing quiets every NaN). */
static uint16_t unset_bits16(int32_t t)
{
    return t == ATTN_F16 ? 0x7D01u : 0x7FA1u;
}

static void set_unset(void *o, int32_t t, size_t n)
{
    if (t == ATTN_F32) {
        for (size_t i = 0; i < n; i++)
            memcpy((float *)o + i, &unset_bits, sizeof unset_bits);
        return;
    }
    for (size_t i = 0; i < n; i++)
        ((uint16_t *)o)[i] = unset_bits16(t);
}

/* Elements of O (of type t) still holding the "never written" pattern. */
static size_t count_unset(const void *o, int32_t t, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        if (t == ATTN_F32) {
            uint32_t b;
            memcpy(&b, (const float *)o + i, sizeof b);
            c += b == unset_bits;
        } else {
            c += ((const uint16_t *)o)[i] == unset_bits16(t);
        }
    }
    return c;
}

/* The typed call an input asks for: its types and class (valid or not),
 * or NULL types. */
typedef struct fuzz_types {
    int null_types;
    attn_run_options opt;
} fuzz_types;

static int32_t pick_dtype(uint8_t b)
{
    static const int32_t hostile[] = {3, 7, -1, 255, 65536, INT32_MIN, INT32_MAX};
    return b < 224 ? (int32_t)(b % 3) : hostile[b % COUNT(hostile)];
}

static fuzz_types pick_types(const uint8_t *rec)
{
    fuzz_types ft = {.null_types = rec[3] == 0xFF};
    ft.opt.types.q = pick_dtype(rec[0]);
    ft.opt.types.kv = pick_dtype(rec[1]);
    ft.opt.types.o = pick_dtype(rec[2]);
    ft.opt.p_round = pick_dtype(rec[3]);
    return ft;
}

static int types_valid(const fuzz_types *ft)
{
    return !ft->null_types && attn_dtype_valid(ft->opt.types.q) &&
           attn_dtype_valid(ft->opt.types.kv) && attn_dtype_valid(ft->opt.types.o);
}

/* What the descriptor says it takes (0 in a field: everything). */
static int takes(const attn_variant *v, const attn_run_options *opt)
{
    return (attn_variant_type_set(v->q_types) & ATTN_DTYPE_BIT(opt->types.q)) &&
           (attn_variant_type_set(v->kv_types) & ATTN_DTYPE_BIT(opt->types.kv)) &&
           (attn_variant_type_set(v->o_types) & ATTN_DTYPE_BIT(opt->types.o)) &&
           (attn_variant_p_rounds(v) & ATTN_DTYPE_BIT(opt->p_round));
}

static void set_bits(float *x, size_t n, uint32_t bits)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &bits, sizeof bits);
}

static size_t count_bits(const float *x, size_t n, uint32_t bits)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        c += b == bits;
    }
    return c;
}

/* Every variant's workspace_size on any accepted shape: no overflow, and an
 * answer that is a code the dispatcher understands. */
static void probe_workspace(const attn_shape *s, const attn_run_options *opt)
{
    for (int t = 1; t <= 4; t *= 2)
        for (int i = 0; i < attn_variant_table_size; i++) {
            attn_problem p =
                attn_problem_make_typed(s, &opt->types, opt->p_round, NULL, NULL, NULL, NULL);
            p.threads = t;
            size_t bytes = 0;
            int rc = attn_variant_table[i]->workspace_size(&p, &bytes);
            REQUIRE(rc == ATTN_OK || rc == ATTN_ENOMEM, "%s: workspace_size returned %d",
                    attn_variant_table[i]->name, rc);
        }
}

/* The code a call of var with valid types in class p_round and a NULL
 * buffer gets: the types and class are checked before the buffers, so
 * ATTN_ENOTSUP when var does not take them (avx512_bf16 and all-f32), else
 * ATTN_EINVAL. The public entry points run the variant's own class,
 * attn_run_variant the f32 one. */
static int null_buffer_code(const attn_variant *var, const attn_shape *s, const attn_types *t,
                            int32_t p_round)
{
    const attn_run_options opt = {*t, p_round};
    return attn_check_shape(s, NULL, 0) == ATTN_OK && !takes(var, &opt) ? ATTN_ENOTSUP
                                                                        : ATTN_EINVAL;
}

/* A refused call: an error code for every variant, no write to O. */
static void run_refused(const attn_shape *s, unsigned null_which)
{
    const attn_types all_f32 = {ATTN_F32, ATTN_F32, ATTN_F32};
    float q[16] = {0}, k[16] = {0}, v[16] = {0}, o[16];
    const float *qp = null_which == 1 ? NULL : q, *kp = null_which == 2 ? NULL : k,
                *vp = null_which == 3 ? NULL : v;
    float *op = null_which == 4 ? NULL : o;
    char msg[512];
    for (int i = -1; i < attn_variant_table_size; i++) {
        const char *name = i < 0 ? "no-such-variant" : attn_variant_table[i]->name;
        set_bits(o, 16, unset_bits);
        const attn_variant *var = i < 0 ? NULL : attn_variant_table[i];
        const int want = var ? null_buffer_code(var, s, &all_f32, attn_variant_default_p_round(var))
                             : ATTN_ENOTFOUND;
        int rc = attn_run(name, s, qp, kp, vp, op);
        REQUIRE(rc == want, "%s: refused call returned %d (want %d)", name, rc, want);
        REQUIRE(count_bits(o, 16, unset_bits) == 16, "%s wrote O on a refused call", name);
        if (var) {
            const int want_f32 = null_buffer_code(var, s, &all_f32, ATTN_F32);
            rc = attn_run_variant(var, s, qp, kp, vp, op, NULL, msg, sizeof msg);
            REQUIRE(rc == want_f32 && msg[0] != '\0', "%s: rc %d msg '%s' (want %d)", name, rc, msg,
                    want_f32);
        }
    }
    double ref[16];
    REQUIRE(attn_reference(s, qp, kp, vp, null_which == 4 ? NULL : ref) == ATTN_EINVAL,
            "reference accepted a refused call");
}

/* A typed call that must be refused: a refused shape, NULL buffers, NULL
 * or invalid types or class. ATTN_EINVAL (ATTN_ENOTFOUND for an unknown
 * name), except ATTN_ENOTSUP where everything but the buffers is valid and
 * the variant does not compute the class (the class is checked before the
 * buffers); O untouched either way. */
static void run_refused_typed(const attn_shape *s, unsigned null_which, const fuzz_types *ft)
{
    float q[16] = {0}, k[16] = {0}, v[16] = {0}, o[16];
    const float *qp = null_which == 1 ? NULL : q, *kp = null_which == 2 ? NULL : k,
                *vp = null_which == 3 ? NULL : v;
    float *op = null_which == 4 ? NULL : o;
    const attn_types *types = ft->null_types ? NULL : &ft->opt.types;
    const int shape_ok = attn_check_shape(s, NULL, 0) == ATTN_OK;
    char msg[512];
    for (int i = -1; i < attn_variant_table_size; i++) {
        const char *name = i < 0 ? "no-such-variant" : attn_variant_table[i]->name;
        set_bits(o, 16, unset_bits);
        /* The public entry point names no class (the variant's default):
         * it refuses for the rest. */
        if (!shape_ok || null_which || !types_valid(ft)) {
            const int want =
                i < 0 ? ATTN_ENOTFOUND
                : !types_valid(ft)
                    ? ATTN_EINVAL
                    : null_buffer_code(attn_variant_table[i], s, types,
                                       attn_variant_default_p_round(attn_variant_table[i]));
            int rc = attn_run_typed(name, s, types, qp, kp, vp, op);
            REQUIRE(rc == want, "%s: refused typed call returned %d (want %d)", name, rc, want);
            REQUIRE(count_bits(o, 16, unset_bits) == 16, "%s wrote O on a refused typed call",
                    name);
        }
        if (i < 0)
            continue;
        const attn_variant *var = attn_variant_table[i];
        const int valid = types_valid(ft) && attn_dtype_valid(ft->opt.p_round);
        const int want = shape_ok && valid && !takes(var, &ft->opt) ? ATTN_ENOTSUP : ATTN_EINVAL;
        int rc = attn_run_variant_typed(var, s, ft->null_types ? NULL : &ft->opt, qp, kp, vp, op,
                                        NULL, msg, sizeof msg);
        REQUIRE(rc == want && msg[0] != '\0', "%s: typed rc %d (want %d) msg '%s'", name, rc, want,
                msg);
        REQUIRE(count_bits(o, 16, unset_bits) == 16, "%s wrote O on a refused typed call", name);
    }
}

/* Scores no larger than |scale|·max|q|·max|k|·d_k stay far from float
 * overflow and the rounding of the scores (sigma) far below 1, so rules A
 * and C apply as written. Not with subnormal inputs: rule A has no term for
 * gradual underflow (its bound scales with M_ic, so an output in the
 * subnormal range, where float spacing is 2^-149, cannot meet it; reported
 * to the lead with the fuzzer's counterexamples). */
static int oracle_applies(const attn_shape *s, data_mode mode, int subnormal_input)
{
    if (mode == DATA_RAW_BITS || subnormal_input)
        return 0;
    double scale = s->scale != 0.0f ? s->scale : 1.0 / sqrt((double)s->d_k);
    double worst = fabs(scale) * 64.0 * s->d_k;
    return worst * (s->d_k + 2) * 0x1p-24 < 0.5;
}

/* Rules A and C of the class for every variant's output, the reference
 * computed once per row (it is the expensive part of an execution). The
 * oracle runs without subnormal inputs only, so no variant's
 * denormals-are-zero changes what the reference reads. */
static void check_rules(const attn_shape *s, const attn_run_options *opt, const void *q,
                        const void *k, const void *v, void *const *outs, const int *ran)
{
    const attn_ref_input in = attn_ref_input_make_typed(s, &opt->types, q, k, v, 0);
    const attn_err_class cls = {opt->types.o, opt->p_round};
    const int threads = omp_get_max_threads();
    double *scratch = malloc(sizeof(double) * (3 * (size_t)s->d_v + (size_t)s->n_kv));
    float *got = malloc(sizeof(float) * (size_t)s->d_v);
    REQUIRE(scratch && got, "malloc");
    attn_ref_row r = {.o = scratch,
                      .D = scratch + s->d_v,
                      .M = scratch + 2 * (size_t)s->d_v,
                      .scores = scratch + 3 * (size_t)s->d_v};
    const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
    for (int64_t row = 0; row < rows; row++) {
        const int32_t i = (int32_t)(row % s->n_q), h = (int32_t)(row / s->n_q % s->heads_q),
                      b = (int32_t)(row / s->n_q / s->heads_q);
        attn_reference_row(&in, b, h, i, &r);
        for (int vi = 0; vi < attn_variant_table_size; vi++) {
            if (!ran[vi])
                continue;
            const attn_variant *var = attn_variant_table[vi];
            for (int32_t c = 0; c < s->d_v; c++)
                got[c] = attn_load_elem(outs[vi], opt->types.o, (size_t)row * s->d_v + c);
            attn_err_stats st;
            attn_err_init(&st);
            attn_err_row(&st, &in, b, h, i, &r, got, var->exp_ulps,
                         attn_variant_rescales(var, threads, r.n_seen), &cls);
            REQUIRE(st.failures == 0,
                    "%s on B=%d,Hq=%d,Hkv=%d,nq=%d,nkv=%d,dk=%d,dv=%d,causal=%d,"
                    "scale=%g,q=%s,kv=%s,o=%s,p=%s: %s",
                    var->name, (int)s->batch, (int)s->heads_q, (int)s->heads_kv, (int)s->n_q,
                    (int)s->n_kv, (int)s->d_k, (int)s->d_v, (int)s->causal, (double)s->scale,
                    attn_dtype_name(opt->types.q), attn_dtype_name(opt->types.kv),
                    attn_dtype_name(opt->types.o), attn_dtype_name(opt->p_round), st.first_failure);
        }
    }
    free(scratch);
    free(got);
}

/* A tensor of n elements of type t, exactly sized (ASan sees any overrun). */
static void *tensor(int32_t t, size_t n)
{
    void *x = malloc(attn_dtype_size(t) * (n ? n : 1));
    REQUIRE(x, "malloc");
    return x;
}

static void run_accepted(const attn_shape *s, const uint8_t *data, size_t size, data_mode mode,
                         const attn_run_options *opt)
{
    const attn_types *ty = &opt->types;
    const size_t nq = attn_q_elems(s), nk = attn_kv_elems(s, s->d_k), nv = attn_kv_elems(s, s->d_v),
                 no = attn_o_elems(s), o_bytes = attn_dtype_size(ty->o);
    void *q = tensor(ty->q, nq), *k = tensor(ty->kv, nk), *v = tensor(ty->kv, nv);
    void *outs[64] = {0};
    int ran[64] = {0};
    REQUIRE(attn_variant_table_size <= 64, "table larger than the fuzzer's arrays");
    size_t pos = 0;
    int subnormal = 0;
    fill(q, ty->q, nq, data, size, &pos, mode, &subnormal);
    fill(k, ty->kv, nk, data, size, &pos, mode, &subnormal);
    fill(v, ty->kv, nv, data, size, &pos, mode, &subnormal);
    char name[256], msg[512];
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *var = attn_variant_table[i];
        attn_case c = {.shape = *s, .data = DATA_NORMAL, .types = *ty, .p_round = opt->p_round};
        attn_case_name(var->name, &c, name, sizeof name);
        void *o = outs[i] = tensor(ty->o, no);
        set_unset(o, ty->o, no);
        attn_run_report report;
        int rc = attn_run_variant_typed(var, s, opt, q, k, v, o, &report, msg, sizeof msg);
        if (!takes(var, opt) || !attn_variant_runnable(var)) {
            REQUIRE(rc == ATTN_ENOTSUP, "%s: a call it cannot take returned %d", name, rc);
            REQUIRE(count_unset(o, ty->o, no) == no, "%s: refused but wrote O", name);
            continue;
        }
        REQUIRE(rc == ATTN_OK, "%s: returned %d: %s", name, rc, msg);
        REQUIRE(report.workspace_guard_ok, "%s: wrote past its workspace", name);
        /* Raw f32 inputs may carry the marker NaN itself into an f32 O;
         * narrowing quiets every NaN, so a narrow O never holds its marker. */
        if (mode != DATA_RAW_BITS || ty->o != ATTN_F32)
            REQUIRE(count_unset(o, ty->o, no) == 0, "%s: left elements of O unwritten", name);
        const int64_t rows = (int64_t)s->batch * s->heads_q * s->n_q;
        const size_t row_bytes = o_bytes * (size_t)s->d_v;
        for (int64_t r = 0; r < rows; r++)
            if (attn_keys_seen(s, (int32_t)(r % s->n_q)) == 0) {
                const unsigned char *bytes = (const unsigned char *)o + (size_t)r * row_bytes;
                size_t nonzero = 0;
                for (size_t b = 0; b < row_bytes; b++)
                    nonzero += bytes[b] != 0;
                REQUIRE(nonzero == 0, "%s: row %lld sees no key but is not +0", name, (long long)r);
            }
        ran[i] = 1;
    }
    if (oracle_applies(s, mode, subnormal))
        check_rules(s, opt, q, k, v, outs, ran);
    if (no <= 4096 && attn_types_all_f32(ty)) { /* the public reference too, on the small shapes */
        double *ref = malloc(sizeof(double) * no);
        REQUIRE(ref && attn_reference(s, q, k, v, ref) == ATTN_OK, "reference refused");
        free(ref);
    }
    for (int i = 0; i < attn_variant_table_size; i++)
        free(outs[i]);
    free(q);
    free(k);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEADER)
        return 0;
    const uint8_t knobs = data[0];
    const uint8_t *rec = data + 1;
    attn_shape s;
    s.batch = pick_int(FIELD_BATCH, rec, 0);
    s.heads_q = pick_int(FIELD_HQ, rec + 5, 0);
    s.heads_kv = pick_int(FIELD_HKV, rec + 10, s.heads_q);
    s.n_q = pick_int(FIELD_NQ, rec + 15, 0);
    s.n_kv = pick_int(FIELD_NKV, rec + 20, 0);
    s.d_k = pick_int(FIELD_DK, rec + 25, 0);
    s.d_v = pick_int(FIELD_DV, rec + 30, 0);
    s.causal = pick_int(FIELD_CAUSAL, rec + 35, 0);
    s.scale = pick_scale(rec + 40);

    omp_set_num_threads(1 + knobs % 3);
    const data_mode mode = (knobs >> 2) % 4 == 1   ? DATA_SPECIALS
                           : (knobs >> 2) % 4 == 2 ? DATA_RAW_BITS
                                                   : DATA_TAME;
    const unsigned null_which = knobs & 0x10 ? 1 + (knobs >> 5) % 4 : 0; /* q, k, v or o */

    /* The typed record, when knob bit 7 asks for it; else attn_run's f32. */
    const int typed = (knobs & 0x80) && size >= HEADER + 4;
    fuzz_types ft = {.opt = {{ATTN_F32, ATTN_F32, ATTN_F32}, ATTN_F32}};
    if (typed)
        ft = pick_types(data + HEADER);
    const size_t head = HEADER + (typed ? 4 : 0);

    char msg[512];
    if (attn_check_shape(&s, msg, sizeof msg) != ATTN_OK) {
        REQUIRE(msg[0] != '\0', "refused without a message");
        run_refused(&s, null_which);
        if (typed)
            run_refused_typed(&s, null_which, &ft);
        return 0;
    }
    const int valid = types_valid(&ft) && attn_dtype_valid(ft.opt.p_round);
    if (valid)
        probe_workspace(&s, &ft.opt);
    if (null_which || !valid) {
        if (null_which)
            run_refused(&s, null_which);
        if (typed)
            run_refused_typed(&s, null_which, &ft);
        return 0;
    }
    /* Accepted shapes have byte counts that fit: no overflow here. */
    if (attn_q_elems(&s) > MAX_ELEMS || attn_kv_elems(&s, s.d_k) > MAX_ELEMS ||
        attn_kv_elems(&s, s.d_v) > MAX_ELEMS || attn_o_elems(&s) > MAX_ELEMS)
        return 0;
    /* With every tensor below 2^16 floats this product stays below 2^50. */
    const uint64_t work = (uint64_t)s.batch * (uint64_t)s.heads_q * (uint64_t)s.n_q *
                          (uint64_t)s.n_kv * ((uint64_t)s.d_k + (uint64_t)s.d_v);
    if (work > max_work)
        return 0;
    const uint8_t *body = size > head ? data + head : data;
    run_accepted(&s, body, size > head ? size - head : size, mode, &ft.opt);
    return 0;
}
