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
 * GEMM and are set to -inf; P·V must not touch a hidden V row at all (a
 * GEMM would multiply it by p = 0, and 0·NaN is NaN), so it runs per group
 * of rows: a GEMM over the keys the whole group sees, and for the few that
 * only some of its rows see, a GEMM per step of the stair they form, on
 * the rows that see them (masked_pv).
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
#include <assert.h>
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

static int32_t clamp32(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* acc[c][r] += Σ_j p[j][r]·v[j][c] over exactly the keys row r sees, in
 * groups of MASKED_ROWS rows, all as GEMMs on the group's rows. seen[] is
 * nondecreasing in r (flash_driver.h), so with s_r = seen[r] clamped to
 * the block, the keys [s_(r-1), s_r) are seen by rows r.. of the group and
 * by none before: a staircase. The keys every row sees, [j0, s_0), are one
 * GEMM on the group's rows; each step of the stair one on the rows r..
 * (usually one key: a rank-1 update). Which keys take which GEMM follows
 * from seen[] alone, never from the values (a hidden NaN must not change a
 * single bit: test_hidden_keys). History, n = 4096, 8 heads, 2 threads on
 * a Zen 4: the diagonal block in plain C cost a causal call nearly what a
 * non-causal one took (1.38x / 1.40x faster than non-causal at d 128 /
 * 64); the common keys as a GEMM and the stair's keys in plain C (a
 * select per row) gave 1.86x / 1.88x; the stair as GEMMs 1.022x / 1.019x
 * faster than that (alternating rounds of one process, causal), within
 * 1.009x of the whole block as one GEMM (wrong under a hidden NaN); groups
 * of 16 rows the same as 8. */
enum { MASKED_ROWS = 8 };
_Static_assert(LANES % MASKED_ROWS == 0, "tile rows (a multiple of LANES) come in whole groups");

static void masked_pv(const flash_tile *t, int32_t j0, int32_t nb)
{
    const int32_t rows = t->rows, d_v = t->d_v;
    for (int32_t r0 = 0; r0 < rows; r0 += MASKED_ROWS) {
        int32_t s[MASKED_ROWS];
        for (int32_t r = 0; r < MASKED_ROWS; r++) {
            s[r] = clamp32(t->seen[r0 + r], j0, j0 + nb);
            assert(r == 0 || s[r] >= s[r - 1]);
        }
        if (s[0] > j0) {
            tile_gemm pv = make_gemm(MASKED_ROWS, d_v, s[0] - j0, rows, d_v, rows, 1, 1);
            gemm_run(&pv, t->scores + r0, flash_v_row(t, j0), t->acc + r0);
        }
        for (int32_t r = 1; r < MASKED_ROWS; r++) {
            if (s[r] == s[r - 1])
                continue;
            tile_gemm step =
                make_gemm(MASKED_ROWS - r, d_v, s[r] - s[r - 1], rows, d_v, rows, 1, 1);
            gemm_run(&step, t->scores + (size_t)(s[r - 1] - j0) * rows + r0 + r,
                     flash_v_row(t, s[r - 1]), t->acc + r0 + r);
        }
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
