/* stream — online softmax (FlashAttention-2 forward) in portable C: one pass
 * over the key blocks with a running max, sum and rescaled accumulator per
 * query row; O(rows·(d_k + d_v + kv_block)) workspace per thread, no n×n
 * matrix. No intrinsics: the loops run over the tile's rows, which are
 * contiguous lanes (see flash_driver.h), so the compiler can vectorise them
 * for whatever the baseline ISA is. exp is libm's expf. */
#include <math.h>

#include "flash_driver.h"

/* Sizes. Tiles are padded to 4 rows (LANES: one SSE vector), so a GQA
 * decode tile of 4 query heads computes its 4 rows, not 16; the loops
 * take rows 16 at a time (WIDE: two SSE/one AVX-512 vector's worth, a
 * compile-time count so the compiler keeps a register tile of KEYS x WIDE
 * (or COLS x WIDE) scores in registers), then the last rows 4 at a time.
 * Up to 64 rows per tile: K/V are read once per 64 query rows. 64 keys per
 * block: the block's scores (64 x 64 floats = 16 KiB) and the queries
 * (d_k x 64 floats, 32 KiB at d_k = 128) stay within L1/L2 while K and V
 * stream past. */
enum { LANES = 4, WIDE = 16, MAX_ROWS = 64, KV_BLOCK = 64, KEYS = 4, COLS = 4 };

static int32_t min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* scores[jj + i][r] for rows [r0, r0 + lanes) and keys k[0..KEYS) of the
 * group starting at jj. The same roundings as naive's (products, sums, one
 * multiply by scale: the baseline ISA has no FMA and ISO C mode does not
 * contract), so huge logits, where score rounding dominates, come out as
 * naive's do. */
FLASH_INLINE void score_rows(const flash_tile *t, const float *const *k, int32_t j0, int32_t jj,
                             int32_t nb, int masked, int32_t r0, const int lanes)
{
    const int32_t rows = t->rows, d_k = t->d_k;
    float a[KEYS][WIDE] = {{0}};
    const float *q = t->qt + r0;
    for (int32_t c = 0; c < d_k; c++, q += rows)
        for (int i = 0; i < KEYS; i++)
            for (int r = 0; r < lanes; r++)
                a[i][r] += q[r] * k[i][c];
    for (int i = 0; i < KEYS && jj + i < nb; i++) {
        float *s = t->scores + (size_t)(jj + i) * rows + r0;
        for (int r = 0; r < lanes; r++) {
            float x = a[i][r] * t->scale;
            s[r] = masked && j0 + jj + i >= t->seen[r0 + r] ? -INFINITY : x;
        }
    }
}

/* scores[j][r] = (q_r · k_j)·scale for the block's keys, -inf where row r
 * does not see key j. */
static void block_scores(const flash_tile *t, int32_t j0, int32_t nb, int masked)
{
    const int32_t rows = t->rows;
    for (int32_t jj = 0; jj < nb; jj += KEYS) {
        /* A short last group repeats its last key: reads stay inside the
         * block, the extra results are dropped. */
        const float *k[KEYS];
        for (int i = 0; i < KEYS; i++)
            k[i] = flash_k_row(t, j0 + min32(jj + i, nb - 1));
        int32_t r0 = 0;
        for (; r0 + WIDE <= rows; r0 += WIDE)
            score_rows(t, k, j0, jj, nb, masked, r0, WIDE);
        for (; r0 < rows; r0 += LANES)
            score_rows(t, k, j0, jj, nb, masked, r0, LANES);
    }
}

/* Weights (and rescales) e^x below e^-69.3 = 2^-100 are +0. The vector
 * exps flush at FLT_MIN (exp_range.h: a subnormal costs a microcode
 * assist per instruction on Intel cores); this plain C multiplies and
 * adds apart, so a normal weight times a V element below 1 could still
 * round to a subnormal product: 2^-100 leaves 2^26 of room. What a
 * flushed weight leaves out of O, at most 2^-100·max|v| a key, stays far
 * inside rule A's u·M terms (docs/accuracy-classes.md). Peaked attention
 * (scale 2, n 512, d 128) took 2.2x the usual scale's time with the
 * FLT_MIN flush (the products), on a Sapphire Rapids. */
static const float STREAM_FLUSH = -69.3f;

/* Turns the block's scores into weights exp(s - m') in place, updates m and
 * l, and leaves in alpha the factor the accumulator must be scaled by.
 * Returns nonzero when some alpha differs from 1 (the max moved). */
static int block_softmax(const flash_tile *t, int32_t nb, float *alpha)
{
    const int32_t rows = t->rows;
    float shift[MAX_ROWS], sum[MAX_ROWS];
    int rescale = 0;
    for (int32_t r = 0; r < rows; r++)
        shift[r] = t->m[r];
    /* A comparison, not fmaxf: a NaN score is skipped here and reaches the
     * output through exp(NaN). */
    for (int32_t j = 0; j < nb; j++) {
        const float *s = t->scores + (size_t)j * rows;
        for (int32_t r = 0; r < rows; r++)
            shift[r] = s[r] > shift[r] ? s[r] : shift[r];
    }
    for (int32_t r = 0; r < rows; r++) {
        float m = shift[r];
        shift[r] = m == -INFINITY ? 0.0f : m;
        const float moved = t->m[r] - shift[r]; /* flushed as the weights below */
        alpha[r] = moved < STREAM_FLUSH ? 0.0f : expf(moved);
        rescale |= alpha[r] != 1.0f;
        t->m[r] = m;
        sum[r] = 0.0f;
    }
    for (int32_t j = 0; j < nb; j++) {
        float *s = t->scores + (size_t)j * rows;
        for (int32_t r = 0; r < rows; r++) {
            /* +0 below STREAM_FLUSH (NaN: expf): see there. */
            const float x = s[r] - shift[r];
            s[r] = x < STREAM_FLUSH ? 0.0f : expf(x);
            sum[r] += s[r];
        }
    }
    for (int32_t r = 0; r < rows; r++)
        t->l[r] = t->l[r] * alpha[r] + sum[r];
    return rescale;
}

/* acc[col[i]][r] for rows [r0, r0 + lanes): rescaled by alpha, then the
 * block's weighted V rows, skipping the keys a row does not see (0·v
 * would turn a hidden NaN/Inf into NaN). */
FLASH_INLINE void accumulate_rows(const flash_tile *t, const int32_t *col, int32_t j0, int32_t nb,
                                  int masked, const float *alpha, int rescale, int32_t r0,
                                  const int lanes)
{
    const int32_t rows = t->rows;
    float a[COLS][WIDE];
    for (int i = 0; i < COLS; i++)
        for (int r = 0; r < lanes; r++)
            a[i][r] = t->acc[(size_t)col[i] * rows + r0 + r] * (rescale ? alpha[r0 + r] : 1.0f);
    for (int32_t j = 0; j < nb; j++) {
        const float *p = t->scores + (size_t)j * rows + r0;
        const float *v = flash_v_row(t, j0 + j);
        for (int i = 0; i < COLS; i++) {
            float vc = v[col[i]];
            if (masked) {
                for (int r = 0; r < lanes; r++)
                    a[i][r] = j0 + j < t->seen[r0 + r] ? a[i][r] + p[r] * vc : a[i][r];
            } else {
                for (int r = 0; r < lanes; r++)
                    a[i][r] += p[r] * vc;
            }
        }
    }
    for (int i = 0; i < COLS; i++)
        for (int r = 0; r < lanes; r++)
            t->acc[(size_t)col[i] * rows + r0 + r] = a[i][r];
}

/* acc[c][r] = acc[c][r]·alpha[r] + Σ_j p[j][r]·v[j][c]. */
static void block_accumulate(const flash_tile *t, int32_t j0, int32_t nb, int masked,
                             const float *alpha, int rescale)
{
    const int32_t rows = t->rows, d_v = t->d_v;
    for (int32_t c0 = 0; c0 < d_v; c0 += COLS) {
        /* A short last group repeats its last column: both copies compute
         * and store the same value. */
        int32_t col[COLS];
        for (int i = 0; i < COLS; i++)
            col[i] = min32(c0 + i, d_v - 1);
        int32_t r0 = 0;
        for (; r0 + WIDE <= rows; r0 += WIDE)
            accumulate_rows(t, col, j0, nb, masked, alpha, rescale, r0, WIDE);
        for (; r0 < rows; r0 += LANES)
            accumulate_rows(t, col, j0, nb, masked, alpha, rescale, r0, LANES);
    }
}

/* A masked block's P·V runs as an open block's when the V rows some row
 * does not see are finite: a hidden key's weight is +0 (its score -inf),
 * and 0·v adds ±0 (flash_driver.h's hidden-key contract, checked by
 * flash_hidden_v_finite); only a NaN or Inf there needs the per-row test.
 * The test sat in the P·V's inner loop (a compare and a select per FMA);
 * without it, on a Sapphire Rapids (alternating rounds of one process,
 * 8 heads, 2 threads), causal n 4096 took 1.045x less time at d 64 and
 * 1.051x at d 128, causal n 512 d 64 1.255x. `masked` stays a constant
 * in each call of block_accumulate, so both instances keep their
 * vectorised loops. */
FLASH_INLINE void fold_block(const flash_tile *t, int32_t j0, int32_t nb, const int masked)
{
    float alpha[MAX_ROWS];
    block_scores(t, j0, nb, masked);
    int rescale = block_softmax(t, nb, alpha);
    if (masked && !flash_hidden_v_finite(t, j0, nb))
        block_accumulate(t, j0, nb, 1, alpha, rescale);
    else
        block_accumulate(t, j0, nb, 0, alpha, rescale);
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
static const flash_block_fn stream_blocks[2] = {block_open, block_masked};

static const flash_geometry stream_geometry = {
    .lanes = LANES,
    .max_rows = MAX_ROWS,
    .kv_block = KV_BLOCK,
    .any_rows = stream_blocks,
    .widen = attn_widen_portable, /* portable C throughout */
};

static int stream_workspace(const attn_problem *p, size_t *bytes)
{
    return flash_workspace_size(p, &stream_geometry, bytes);
}

static int stream_run(const attn_problem *p, void *workspace)
{
    return flash_run(p, &stream_geometry, workspace);
}

const attn_variant attn_variant_stream = {
    .name = "stream",
    .required_features = 0,
    .description = "flash-attention-2 online softmax, portable C: one pass over key blocks",
    .family = ATTN_FAMILY_ONLINE,
    .cost = ATTN_COST_FAST,
    .exp_ulps = 1, /* glibc expf: < 1 ulp */
    .tiles = {.keys = KV_BLOCK,
              .rows = MAX_ROWS,
              .lanes = LANES,
              .reg_rows = WIDE,
              .reg_keys = KEYS,
              .reg_cols = COLS},
    .widening = ATTN_WIDEN_ON_LOAD, /* flash_driver.c: one key block at a time */
    .workspace_size = stream_workspace,
    .run = stream_run,
};
