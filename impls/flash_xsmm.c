/* xsmm — flash-attention-2 forward on the shared online-softmax driver
 * (flash_driver.c: tiles, threads, the key-block loop, causal skipping,
 * split/merge, unseen rows), whose block functions are libxsmm JIT GEMMs:
 *
 * The driver's tile layout is column-major as it stands (rows are the
 * contiguous axis): qt[d_k][rows] is a rows x d_k matrix, scores[j][r] a
 * rows x nb one, acc[c][r] a rows x d_v one, all with leading dimension
 * `rows`. So, for a key block [j0, j0 + nb):
 *   S  = Q·Kᵀ:  C(rows x nb) = A(rows x d_k, qt) · B(d_k x nb), B the K
 *        rows read in place (row-major [nb][d_k] is column-major d_k x nb);
 *   O += P·V:   C(rows x d_v, acc) += A(rows x nb, the weights) · Bᵀ with
 *        B the V rows in place (column-major d_v x nb; TRANS_B, which the
 *        JIT supports; libxsmm's JIT refuses TRANS_A).
 * The softmax between them (block_softmax.h) takes the widest vector exp
 * the CPU runs (exp_avx512.c 1.06 ulp, exp_avx2.c 0.77 ulp), as one step
 * of that ISA in two passes, else glibc's expf in plain C passes over
 * contiguous rows (five passes; the same bits for the same exp). In a masked
 * block (the causal diagonal) the scores of hidden keys come from the same
 * GEMM and are set to -inf; P·V is the whole block's GEMM too, but must
 * not let a hidden V row reach a row at all (0·NaN is NaN): when one that
 * some row does not see is Inf or NaN, the GEMM reads a cleaned copy and
 * those values are added to the rows that see them (masked_pv).
 *
 * Dispatch: libxsmm keeps the generated code in its registry, so a
 * dispatch of a shape seen before is a lookup (thread-safe); a block does
 * two, against ~1 MFLOP of GEMM. attnbench keeps no kernel cache of its own
 * (it would be mutable global state). A NULL kernel (no JIT for this CPU,
 * or LIBXSMM_TARGET=generic: test verify_full_xsmm_no_jit) falls back to a
 * plain C tile product.
 *
 * TQ = TK = 64: a 64 x 64 score tile is 16 KiB and qt (64 x d_k) 16-32 KiB
 * for d_k <= 128, so both stay in L1 (48 KiB) while each tile is used; the
 * accumulator (64 x d_v) sits in L2. */
#include <libxsmm.h>
#include <math.h>
#include <stddef.h>

#include "block_softmax.h"
#include "cpu_features.h"
#include "exp_array.h"
#include "flash_driver.h"

/* Rows per tile (a multiple of the driver's 16-float padding) and keys per
 * block. */
enum { LANES = 16, TQ = 64, TK = 64 };

/* One column-major tile product C(m x n) = A(m x k)·op(B) (+ C when
 * accumulating): the JIT kernel, or the plain C fallback when fn is NULL. */
typedef struct tile_gemm {
    libxsmm_smmfunction fn;
    int32_t m, n, k, lda, ldb, ldc;
    int accumulate, trans_b;
    int avx; /* fn is AVX or later code: clear the upper state after it */
} tile_gemm;

static tile_gemm make_gemm(int32_t m, int32_t n, int32_t k, int32_t lda, int32_t ldb, int32_t ldc,
                           int accumulate, int trans_b)
{
    tile_gemm g = {NULL, m, n, k, lda, ldb, ldc, accumulate, trans_b, 0};
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    const int flags = trans_b ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
    const libxsmm_blasint l_a = lda, l_b = ldb, l_c = ldc;
    g.fn = libxsmm_smmdispatch(m, n, k, &l_a, &l_b, &l_c, &alpha, &beta, &flags, NULL);
    g.avx = g.fn && libxsmm_get_target_archid() >= LIBXSMM_X86_AVX;
    return g;
}

/* libxsmm 1.17's AVX/AVX-512 kernels return without vzeroupper. With the
 * upper register halves left dirty, the SSE-encoded plain C that follows (and
 * glibc's expf) runs ~30x slower: n = 2048, d = 64, 1 thread, 1.9 GFLOP/s
 * without this, 62 with it. Executed only after AVX-or-later JIT code, so
 * the instruction never reaches a CPU without AVX. */
static void clear_upper_state(void)
{
    __asm__ volatile("vzeroupper");
}

static void gemm_fallback(const tile_gemm *g, const float *a, const float *b, float *c)
{
    for (int32_t j = 0; j < g->n; j++) {
        float *cj = c + (size_t)j * g->ldc;
        if (!g->accumulate)
            for (int32_t i = 0; i < g->m; i++)
                cj[i] = 0.0f;
        for (int32_t t = 0; t < g->k; t++) {
            float btj = g->trans_b ? b[j + (size_t)t * g->ldb] : b[t + (size_t)j * g->ldb];
            const float *at = a + (size_t)t * g->lda;
            for (int32_t i = 0; i < g->m; i++)
                cj[i] += at[i] * btj;
        }
    }
}

static void gemm_run(const tile_gemm *g, const float *a, const float *b, float *c)
{
    if (g->fn) {
        g->fn(a, b, c);
        if (g->avx)
            clear_upper_state();
    } else {
        gemm_fallback(g, a, b, c);
    }
}

/* The widest vector exp this CPU runs, behind its feature check: the
 * AVX-512 one (1.06 ulp; 16 lanes, 12 instructions) where AVX512F is
 * there, else the AVX2 one (0.77 ulp), glibc's expf only where neither is
 * (or a mask hides them). One decision for the kernel and for what the
 * descriptor reports (exp_in_use, perf-targets' exp row), so the report
 * cannot claim an exp the kernel does not call. On a Zen 5 the AVX-512 exp
 * runs 3.8x the AVX2 one's elements per second (attnbench peak). */
typedef enum xsmm_exp { XSMM_EXP_LIBM, XSMM_EXP_AVX2, XSMM_EXP_AVX512 } xsmm_exp;

static xsmm_exp exp_kind(void)
{
    const uint32_t f = attn_cpu()->features;
    const uint32_t avx512 = ATTN_CPU_AVX512F | ATTN_CPU_FMA, avx2 = ATTN_CPU_AVX2 | ATTN_CPU_FMA;
    return (f & avx512) == avx512 ? XSMM_EXP_AVX512
           : (f & avx2) == avx2   ? XSMM_EXP_AVX2
                                  : XSMM_EXP_LIBM;
}

static const char *xsmm_exp_in_use(void)
{
    static const char *const names[] = {"expf", "avx2", "avx512"};
    return names[exp_kind()];
}

/* glibc's expf over an array, for the plain C step. */
static void libm_exp_array(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = expf(x[i]);
}

/* P·V of a masked block (the causal diagonal) as one GEMM over the whole
 * block, as an open block's, so that every row gets the same bits whatever
 * the keys it does not see hold. A hidden key's weight is +0 (its score is
 * -inf): the GEMM adds it as 0·v, which is ±0 for a finite v and leaves
 * the sum as it was (x + ±0 = x; a -0 sum may come out +0, the same
 * value), but NaN for an Inf or NaN v. So when a V row from seen_min on
 * (a key some row does not see) is not finite, the GEMM reads a copy of
 * the block's V rows with every Inf and NaN made 0, and each of those
 * values then reaches exactly the rows that see its key, as p·v added to
 * their sums (Inf or NaN, as it would have been). Before, the masked P·V
 * was a staircase of GEMMs over exactly the keys each group of 8 rows
 * sees, mostly rank-1 updates with a dispatch each: the whole block's GEMM
 * is 1.01x faster at d 128 and 1.03x at d 64 (causal n 4096, 8 heads,
 * 2 threads on a Sapphire Rapids, alternating rounds). The staircase is
 * not the fallback for a non-finite V: libxsmm's kernels of other shapes
 * may round differently (m 8 against 64 at d_v 7), so a hidden NaN would
 * have changed a row's bits through the path taken (test_hidden_keys). */
static void masked_pv(const flash_tile *t, int32_t j0, int32_t nb)
{
    const int32_t rows = t->rows, d_v = t->d_v;
    tile_gemm pv = make_gemm(rows, d_v, nb, rows, d_v, rows, 1, 1);
    if (flash_hidden_v_finite(t, j0, nb)) {
        gemm_run(&pv, t->scores, flash_v_row(t, j0), t->acc);
        return;
    }
    const float *v = flash_v_row(t, j0);
    const size_t n = (size_t)nb * (size_t)d_v;
    for (size_t i = 0; i < n; i++)
        t->scratch[i] = isfinite(v[i]) ? v[i] : 0.0f;
    gemm_run(&pv, t->scores, t->scratch, t->acc);
    for (int32_t j = 0; j < nb; j++)
        for (int32_t c = 0; c < d_v; c++) {
            const float x = v[(size_t)j * d_v + c];
            if (isfinite(x))
                continue;
            const float *p = t->scores + (size_t)j * rows;
            float *acc = t->acc + (size_t)c * rows;
            for (int32_t r = 0; r < rows; r++)
                if (j0 + j < t->seen[r])
                    acc[r] += p[r] * x;
        }
}

static void fold_block(const flash_tile *t, int32_t j0, int32_t nb, int masked)
{
    const int32_t rows = t->rows, d_k = t->d_k, d_v = t->d_v;
    _Alignas(64) float alpha[TQ]; /* the vector steps store it whole */
    tile_gemm scores = make_gemm(rows, nb, d_k, rows, d_k, rows, 0, 0);
    gemm_run(&scores, t->qt, flash_k_row(t, j0), t->scores);
    /* The ISA's passes: n 1024, 4 heads, d 64, 1 thread on a Zen 3, the
     * plain C ones (SSE2 code) took 14 % of the call beside the exp's 10 %. */
    const xsmm_exp kind = exp_kind();
    /* The step also rescales the accumulator by alpha. */
    if (kind == XSMM_EXP_AVX512)
        attn_block_softmax_avx512(t, j0, nb, masked, alpha);
    else if (kind == XSMM_EXP_AVX2)
        attn_block_softmax_avx2(t, j0, nb, masked, alpha);
    else
        attn_block_softmax_c(t, j0, nb, masked, alpha, libm_exp_array);
    if (masked) {
        masked_pv(t, j0, nb);
        return;
    }
    tile_gemm pv = make_gemm(rows, d_v, nb, rows, d_v, rows, 1, 1);
    gemm_run(&pv, t->scores, flash_v_row(t, j0), t->acc);
}

static void block_open(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 0);
}

static void block_masked(const flash_tile *t, int32_t j0, int32_t nb)
{
    fold_block(t, j0, nb, 1);
}

/* The loops take the tile's row count at run time: one pair for all. */
static const flash_block_fn xsmm_blocks[2] = {block_open, block_masked};

static const flash_geometry xsmm_geometry = {
    .lanes = LANES,
    .max_rows = TQ,
    .kv_block = TK,
    .any_rows = xsmm_blocks,
    /* libxsmm's GEMMs prefetch nothing ahead of the block, so a 64-row tile
     * waits on each K/V block it re-reads when the L3 is busy (on this
     * project's shared Zen 3: n = 4096, 8 heads, d = 128, 2 threads, one
     * process alternating the two, three runs: medians 905 / 946 / 897 ms
     * alone, 696 / 662 / 653 ms with 4 tiles on each block; minima the same,
     * 600-630 ms; d = 64 and 96 unchanged). avx2's block kernels prefetch
     * the next block themselves: sharing changed nothing there. */
    .f32_groups = 1,
    .block_scratch_v = 1, /* masked_pv's cleaned copy of a block's V */
};

static int xsmm_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &xsmm_geometry, bytes);
}

static int xsmm_run(const attn_problem *p, void *workspace)
{
    libxsmm_init(); /* idempotent; JIT code is cached inside libxsmm */
    return flash_run(p, &xsmm_geometry, workspace);
}

static const char *xsmm_library_version(void)
{
    return LIBXSMM_CONFIG_VERSION;
}

const attn_variant attn_variant_xsmm = {
    .name = "xsmm",
    .required_features = 0, /* libxsmm JITs for the CPU it finds; plain C if it cannot */
    .description = "flash-attention-2 online softmax, Q.K^T and P.V tiles as libxsmm JIT GEMMs",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 2, /* attn_exp_avx512 1.06 ulp, attn_exp_avx2 0.77, glibc expf < 1 */
    .tiles = {.keys = TK, .rows = TQ, .lanes = LANES},
    .library = "libxsmm",
    .library_version = xsmm_library_version,
    .widening = ATTN_WIDEN_ON_LOAD, /* flash_driver.c: one key block at a time */
    .exp_in_use = xsmm_exp_in_use,
    .workspace_size = xsmm_workspace,
    .run = xsmm_run,
};
