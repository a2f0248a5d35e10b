/* Which Q·Kᵀ avx512_bf16's decode heads of 4 and 8 rows take: on vdpbf16ps
 * pairs under bf16 Q, f32 FMAs under f32 Q (a Q that is not bf16 must
 * never be narrowed). Rules A and B cannot tell the two apart; here the
 * order of the additions decides the score. d_k 32, q = k at column 0 is
 * 2^12, at column 1 is 1, and q·k at column 16 is -2^24:
 *   f32 lanes (16 columns apart): lane 0 = 2^24 - 2^24 = 0, lane 1 = 1:
 *       score 1, the exact one;
 *   pairs (columns 2c, 2c + 1 in lane c): lane 0 = 1 + 2^24, which rounds
 *       to 2^24 (a tie, to even), lane 8 = -2^24: score 0.
 * With a second key of score 0, V = 1 at the first key and 0 at the
 * second: O = 1/2 from the pairs, e/(e + 1) from f32 FMAs.
 * And the masked tail: d_k 33, the row after a key's 33 elements is the
 * next key's, whose first element is -Inf; Q's padding is zero, so an
 * unmasked load of the tail would give 0·(-Inf) = NaN in the first key's
 * score. The second key's score is -Inf (weight 0): O = V of the first. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dtype.h"
#include "variant.h"

enum { MAX_HEADS = 8, MAX_DK = 33, D_V = 16, KEYS = 2 };

typedef struct qk_case {
    int32_t heads; /* query heads over one K/V head, one row each */
    int32_t d_k;
    float q[MAX_DK];         /* every head's row */
    float k[KEYS][MAX_DK];   /* row-major, rows d_k apart */
    float v_first, v_second; /* every column of each key's V row */
} qk_case;

/* Runs the case in types ty; O (f32, heads x D_V) into o. */
static int run_case(const attn_variant *v, const qk_case *c, const attn_types *ty, float *o,
                    char *msg, size_t cap)
{
    const attn_shape s = {1, c->heads, 1, 1, KEYS, c->d_k, D_V, 0, 1.0f};
    uint16_t qh[MAX_HEADS * MAX_DK], kh[KEYS * MAX_DK], vh[KEYS * D_V], oh[MAX_HEADS * D_V];
    float qf[MAX_HEADS * MAX_DK];
    for (int32_t h = 0; h < c->heads; h++)
        for (int32_t i = 0; i < c->d_k; i++) {
            qf[h * c->d_k + i] = c->q[i];
            attn_store_elem(qh, ATTN_BF16, (size_t)(h * c->d_k + i), c->q[i]);
        }
    for (int32_t j = 0; j < KEYS; j++) {
        for (int32_t i = 0; i < c->d_k; i++)
            attn_store_elem(kh, ATTN_BF16, (size_t)(j * c->d_k + i), c->k[j][i]);
        for (int32_t i = 0; i < D_V; i++)
            attn_store_elem(vh, ATTN_BF16, (size_t)(j * D_V + i), j ? c->v_second : c->v_first);
    }
    const attn_run_options opt = {*ty, ATTN_BF16};
    const int bf16_q = ty->q == ATTN_BF16, bf16_o = ty->o == ATTN_BF16;
    int rc = attn_run_variant_typed(v, &s, &opt, bf16_q ? (const void *)qh : (const void *)qf, kh,
                                    vh, bf16_o ? (void *)oh : (void *)o, NULL, msg, cap);
    if (rc == ATTN_OK && bf16_o)
        for (int32_t i = 0; i < c->heads * D_V; i++)
            o[i] = attn_load_elem(oh, ATTN_BF16, (size_t)i);
    return rc;
}

/* Every element of O within tol of want. */
static void check_o(check_tally *t, const attn_variant *v, const qk_case *c, const attn_types *ty,
                    double want, double tol, const char *what)
{
    float o[MAX_HEADS * D_V];
    char msg[256];
    int rc = run_case(v, c, ty, o, msg, sizeof msg);
    CHECK(t, rc == ATTN_OK, "%s: %s", v->name, msg);
    if (rc != ATTN_OK)
        return;
    int bad = -1;
    for (int32_t i = 0; i < c->heads * D_V && bad < 0; i++)
        if (!(fabs((double)o[i] - want) <= tol))
            bad = (int)i;
    CHECK(t, bad < 0, "%s, %d rows a K/V head, d_k %d, q=%s: O[%d] = %.9g, want %.9g (%s)", v->name,
          (int)c->heads, (int)c->d_k, attn_dtype_name(ty->q), bad, bad < 0 ? 0.0 : (double)o[bad],
          want, what);
}

int main(void)
{
    const attn_variant *v = attn_find_variant("avx512_bf16");
    if (!v) {
        printf("decode_qk_pairs: avx512_bf16 missing from the table\n");
        return 1;
    }
    if (!attn_variant_runnable(v)) {
        char missing[128];
        attn_variant_missing(v, missing, sizeof missing);
        printf("SKIP decode_qk_pairs: avx512_bf16 needs %s\n", missing);
        return 77;
    }
    check_tally t = {0, 0};
    static const attn_types all_bf16 = {ATTN_BF16, ATTN_BF16, ATTN_BF16};
    static const attn_types f32_q = {ATTN_F32, ATTN_BF16, ATTN_F32};
    static const int32_t heads[] = {4, 8};
    for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++) {
        qk_case order = {.heads = heads[h], .d_k = 32, .v_first = 1.0f, .v_second = 0.0f};
        order.q[0] = order.k[0][0] = 4096.0f;
        order.q[1] = order.k[0][1] = 1.0f;
        order.q[16] = -4096.0f;
        order.k[0][16] = 4096.0f;
        const double e = exp(1.0);
        check_o(&t, v, &order, &all_bf16, 0.5, 0.0, "Q·Kᵀ on pairs: score 0");
        check_o(&t, v, &order, &f32_q, e / (e + 1.0), 1e-6, "f32 FMAs: score 1");

        qk_case tail = {.heads = heads[h], .d_k = 33, .v_first = 3.0f, .v_second = 5.0f};
        for (int32_t i = 0; i < tail.d_k; i++) {
            tail.q[i] = 1.0f;
            tail.k[0][i] = 0.5f;
        }
        tail.k[1][0] = -INFINITY;
        check_o(&t, v, &tail, &all_bf16, 3.0, 0.0, "the -Inf key weighs 0, no NaN from the tail");
        check_o(&t, v, &tail, &f32_q, 3.0, 0.0, "the -Inf key weighs 0, no NaN from the tail");
    }
    return check_report("decode_qk_pairs", &t);
}
