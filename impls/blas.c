/* blas — the peer a user would write with NumPy or a BLAS: per block of
 * query rows of a head,
 *   S = scale · Q·Kᵀ          (cblas_sgemm, the scale folded into alpha)
 *   P = softmax(S) by row     (max, expf, sum, divide: plain C)
 *   O = P·V                   (cblas_sgemm)
 * with a score buffer of ROW_BLOCK x n_kv floats per thread. Whole heads
 * (n_q x n_kv, NumPy's way) measured slower: n = 4096, h = 2, d = 64, one
 * thread, 29 GFLOP/s against 38-45 with 256-row blocks (a 64 MiB buffer per
 * call costs page faults and leaves the caches between the three passes).
 * A buffer beyond the workspace limit is ATTN_ENOMEM (n_kv in the millions).
 *
 * Causal: a block's S covers only the keys its last row sees (work ~halves)
 * and the softmax reads only the keys each row sees. P·V cannot be one sgemm
 * over the block: a V row the row must not see would be multiplied by p = 0,
 * and 0·NaN is NaN. So P·V goes in slices of SLICE_ROWS rows: one sgemm over
 * the keys the slice's first row sees, then per row one sgemv over its few
 * extra keys.
 *
 * Threads. OpenBLAS is the pthread build: its threads and OpenMP's must not
 * both fill the cores. Blocks are cut small enough that there are at least
 * as many as threads whenever n_q allows; then OpenMP runs the blocks and
 * OpenBLAS is set to 1 thread for the call. Only when there are fewer blocks
 * than threads (a decode row with fewer heads than threads) does OpenBLAS
 * thread each product itself, with the softmax in an OpenMP loop between.
 * Measured at 2 threads, GFLOP/s, OpenMP over blocks vs OpenBLAS-threaded:
 *   n = 4096, h = 8, d = 64:   114 vs 43-51 (causal 99 vs 27-48)
 *   n = 512,  h = 1, d = 64:   120 vs 78-82 (causal 73 vs 59-60)
 * Caveat: openblas_set_num_threads changes OpenBLAS's global setting; it is
 * restored on return, but another thread of the program calling OpenBLAS
 * during attn_run (or a concurrent attn_run of blas) sees or changes the
 * temporary value: results stay the same, the thread count may not.
 * Results are bitwise reproducible for a fixed thread count (OpenBLAS never
 * splits the k loop of a product across threads). */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <string.h>

#include "exp_range.h"
#include "variant.h"

enum {
    ROW_BLOCK = 256, /* rows per S block; causal: the masked part it computes
                        in vain is ROW_BLOCK / (2 n) of the work */
    SLICE_ROWS = 32, /* causal P·V slice: extra keys per row < 32 go to sgemv */
};

typedef struct plan {
    int32_t first;  /* rows before it see no key (causal, n_q > n_kv) */
    int32_t rows;   /* rows per block */
    int64_t blocks; /* row blocks per head */
    int64_t items;  /* batch x heads x blocks */
    int workers;    /* score buffers: threads when OpenMP runs the items, else 1 */
} plan;

static void make_plan(const attn_problem *p, plan *pl)
{
    const attn_shape *s = &p->shape;
    int64_t heads = (int64_t)s->batch * s->heads_q;
    pl->first = attn_first_seeing_row(s);
    int32_t n = s->n_q - pl->first;
    /* Fewer heads than threads: cut each head into enough blocks. */
    int64_t cuts = heads >= p->threads ? 1 : (p->threads + heads - 1) / heads;
    int64_t rows = (n + cuts - 1) / cuts;
    pl->rows = (int32_t)(rows < ROW_BLOCK ? rows : ROW_BLOCK);
    pl->blocks = ((int64_t)n + pl->rows - 1) / pl->rows;
    pl->items = heads * pl->blocks;
    pl->workers = pl->items >= p->threads ? p->threads : 1;
}

static int blas_workspace(const attn_problem *p_in, size_t *bytes)
{
    attn_problem f = attn_fold_decode_heads(p_in);
    plan pl;
    make_plan(&f, &pl);
    size_t per = attn_line_floats((size_t)pl.rows * (size_t)f.shape.n_kv);
    if (__builtin_mul_overflow(per, (size_t)pl.workers * sizeof(float), bytes))
        return ATTN_ENOMEM;
    return ATTN_OK;
}

/* One row block of one head: rows i0 .. i0+nr-1, each seeing >= 1 key. */
typedef attn_row_block block_job;

/* The row max, in LANES independent running maxima the compiler turns into
 * vector code (one running max is a serial chain of maxss, ~4 cycles per
 * score). A comparison, not fmaxf: a NaN score is skipped here and reaches
 * the sum through expf, so the row still comes out NaN. */
enum { LANES = 16 };
static float row_max(const float *restrict row, int32_t n)
{
    float lane[LANES];
    for (int l = 0; l < LANES; l++)
        lane[l] = -INFINITY;
    int32_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int l = 0; l < LANES; l++)
            lane[l] = row[j + l] > lane[l] ? row[j + l] : lane[l];
    for (; j < n; j++)
        lane[0] = row[j] > lane[0] ? row[j] : lane[0];
    float mx = lane[0];
    for (int l = 1; l < LANES; l++)
        mx = lane[l] > mx ? lane[l] : mx;
    return mx;
}

/* A weight below FLT_MIN becomes +0 (a NaN stays NaN), as the vector
 * exps give (exp_range.h, attn_exp_x_flush): a subnormal weight in P made
 * every sgemm instruction that read it take a microcode assist on Intel
 * cores (scale 2 at n 1024, d 128: 17x the time on a Sapphire Rapids),
 * and glibc's expf is itself slow that far out, so it is not called. */
static float flush_weight(float p)
{
    return p < FLT_MIN ? 0.0f : p;
}

static void softmax_row(float *restrict row, int32_t n)
{
    float mx = row_max(row, n);
    float sum = 0.0f;
    for (int32_t j = 0; j < n; j++) {
        const float x = row[j] - mx;
        row[j] = x < attn_exp_x_flush ? 0.0f : expf(x);
        sum += row[j];
    }
    for (int32_t j = 0; j < n; j++)
        row[j] = flush_weight(row[j] / sum);
}

static void scores(const block_job *jb, float *sc, int32_t ld)
{
    const attn_shape *s = &jb->p->shape;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, jb->nr,
                attn_row_block_seen(jb, jb->nr - 1), s->d_k, jb->p->scale, jb->q, s->d_k, jb->k,
                s->d_k, 0.0f, sc, ld);
}

static void weighted_sum(const block_job *jb, const float *sc, int32_t ld)
{
    const attn_shape *s = &jb->p->shape;
    int32_t d_v = s->d_v, slice = s->causal ? SLICE_ROWS : jb->nr;
    for (int32_t r0 = 0; r0 < jb->nr; r0 += slice) {
        int32_t m = jb->nr - r0 < slice ? jb->nr - r0 : slice;
        int32_t common = attn_row_block_seen(jb, r0);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, d_v, common, 1.0f,
                    sc + (size_t)r0 * ld, ld, jb->v, d_v, 0.0f, jb->o + (size_t)r0 * d_v, d_v);
        for (int32_t r = r0 + 1; r < r0 + m; r++) {
            int32_t extra = attn_row_block_seen(jb, r) - common;
            if (extra > 0)
                cblas_sgemv(CblasRowMajor, CblasTrans, extra, d_v, 1.0f,
                            jb->v + (size_t)common * d_v, d_v, sc + (size_t)r * ld + common, 1,
                            1.0f, jb->o + (size_t)r * d_v, 1);
        }
    }
}

static block_job job_of(const attn_problem *p, const plan *pl, int64_t it)
{
    return attn_row_block_at(p, it, pl->blocks, pl->first, pl->rows);
}

static int blas_run(const attn_problem *p_in, void *workspace)
{
    attn_problem f = attn_fold_decode_heads(p_in);
    const attn_problem *p = &f;
    plan pl;
    make_plan(p, &pl);
    int32_t ld = p->shape.n_kv;
    size_t per = attn_line_floats((size_t)pl.rows * (size_t)ld);
    int saved = openblas_get_num_threads();
    attn_zero_rows_before(p, pl.first);
    if (pl.workers > 1) {
        openblas_set_num_threads(1);
#pragma omp parallel num_threads(p->threads)
        {
            float *sc = (float *)workspace + per * (size_t)omp_get_thread_num();
            /* Round-robin: causal blocks grow in cost along the sequence. */
#pragma omp for schedule(static, 1)
            for (int64_t it = 0; it < pl.items; it++) {
                block_job jb = job_of(p, &pl, it);
                scores(&jb, sc, ld);
                for (int32_t r = 0; r < jb.nr; r++)
                    softmax_row(sc + (size_t)r * ld, attn_row_block_seen(&jb, r));
                weighted_sum(&jb, sc, ld);
            }
        }
    } else {
        openblas_set_num_threads(p->threads);
        float *sc = workspace;
        for (int64_t it = 0; it < pl.items; it++) {
            block_job jb = job_of(p, &pl, it);
            scores(&jb, sc, ld);
            /* No team for one row or one thread (as flash_run). */
            const int team = jb.nr < p->threads ? jb.nr : p->threads;
            if (team <= 1) {
                for (int32_t r = 0; r < jb.nr; r++)
                    softmax_row(sc + (size_t)r * ld, attn_row_block_seen(&jb, r));
            } else {
#pragma omp parallel for num_threads(team) schedule(static)
                for (int32_t r = 0; r < jb.nr; r++)
                    softmax_row(sc + (size_t)r * ld, attn_row_block_seen(&jb, r));
            }
            weighted_sum(&jb, sc, ld);
        }
    }
    openblas_set_num_threads(saved);
    return ATTN_OK;
}

const attn_variant attn_variant_blas = {
    .name = "blas",
    .required_features = 0, /* OpenBLAS picks its kernels at run time */
    .description = "NumPy-style peer: OpenBLAS sgemm for S and P.V, softmax by row between",
    .family = ATTN_FAMILY_TWO_PASS,
    .cost = ATTN_COST_BASELINE,
    .exp_ulps = 1,                                    /* glibc expf: < 1 ulp */
    .tiles = {.rows = ROW_BLOCK, .keys = SLICE_ROWS}, /* row block, causal P.V slice */
    .workspace_size = blas_workspace,
    .run = blas_run,
};
