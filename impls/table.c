/* The one table of variants, in the order `attnbench list` shows them.
 * Adding a variant is one new file in impls/ and one entry here. Each entry
 * is plain data: name, required CPU features, a one-line description, the
 * exp accuracy and rescale block rule A needs, workspace size and run. */
#include "cpu_features.h"
#include "variant.h"

int attn_naive_workspace(const attn_problem *p, size_t *bytes);
int attn_naive_run(const attn_problem *p, void *workspace);
int attn_blocked_workspace(const attn_problem *p, size_t *bytes);
int attn_blocked_run(const attn_problem *p, void *workspace);
int attn_xsmm_workspace(const attn_problem *p, size_t *bytes);
int attn_xsmm_run(const attn_problem *p, void *workspace);
int attn_blas_workspace(const attn_problem *p, size_t *bytes);
int attn_blas_run(const attn_problem *p, void *workspace);
int attn_stream_workspace(const attn_problem *p, size_t *bytes);
int attn_stream_run(const attn_problem *p, void *workspace);
int attn_avx2_workspace(const attn_problem *p, size_t *bytes);
int attn_avx2_run(const attn_problem *p, void *workspace);
int attn_avx512_workspace(const attn_problem *p, size_t *bytes);
int attn_avx512_run(const attn_problem *p, void *workspace);

const attn_variant attn_variants[] = {
    {
        .name = "naive",
        .required_features = 0,
        .description = "textbook: n_q x n_kv float32 scores, softmax by row, then P.V; one thread",
        .exp_ulps = 1, /* glibc expf: < 1 ulp */
        .kv_block = 0,
        .tiles = {0},
        .workspace_size = attn_naive_workspace,
        .run = attn_naive_run,
    },
    {
        .name = "blocked",
        .required_features = 0,
        .description = "cache-blocked plain C: query block's score rows in L2, two-pass softmax",
        .exp_ulps = 1,          /* glibc expf: < 1 ulp */
        .kv_block = 0,          /* two-pass: one max per row */
        .tiles = {64, 8, 4, 0}, /* key tile = max query block, register tile NR, MR */
        .workspace_size = attn_blocked_workspace,
        .run = attn_blocked_run,
    },
    {
        .name = "xsmm",
        .required_features = 0, /* libxsmm JITs for the CPU it finds; plain C if it cannot */
        .description = "flash-attention-2 online softmax, Q.K^T and P.V tiles as libxsmm JIT GEMMs",
        .exp_ulps = 1,    /* glibc expf: < 1 ulp */
        .kv_block = 64,   /* TK: keys per running-max rescale */
        .tiles = {64, 0}, /* TQ = TK */
        .workspace_size = attn_xsmm_workspace,
        .run = attn_xsmm_run,
    },
    {
        .name = "blas",
        .required_features = 0, /* OpenBLAS picks its kernels at run time */
        .description = "NumPy-style peer: OpenBLAS sgemm for S and P.V, softmax by row between",
        .exp_ulps = 1,         /* glibc expf: < 1 ulp */
        .kv_block = 0,         /* two-pass */
        .tiles = {256, 32, 0}, /* causal row block, causal P.V slice */
        .workspace_size = attn_blas_workspace,
        .run = attn_blas_run,
    },
    {
        .name = "stream",
        .required_features = 0,
        .description = "flash-attention-2 online softmax, portable C: one pass over key blocks",
        .exp_ulps = 1,           /* glibc expf: < 1 ulp */
        .kv_block = 64,          /* keys per running-max rescale */
        .tiles = {64, 16, 4, 0}, /* rows per tile = kv block, lanes, register tile */
        .workspace_size = attn_stream_workspace,
        .run = attn_stream_run,
    },
    {
        .name = "avx2",
        .required_features = ATTN_CPU_AVX2 | ATTN_CPU_FMA, /* flash_avx2.c: -mavx2 -mfma */
        .description = "flash-attention-2 online softmax, AVX2+FMA; query rows as vector lanes",
        .exp_ulps = 1,           /* attn_exp_avx2: 0.765 ulp (tests/test_exp --all) */
        .kv_block = 64,          /* keys per running-max rescale */
        .tiles = {64, 32, 8, 6}, /* kv block, rows per tile, lanes, register tile */
        .workspace_size = attn_avx2_workspace,
        .run = attn_avx2_run,
    },
    {
        .name = "avx512",
        /* flash_avx512.c is built with -mavx512f -mfma; AVX512F implies AVX2 */
        .required_features = ATTN_CPU_AVX512F | ATTN_CPU_FMA,
        .description = "flash-attention-2 online softmax, AVX-512F; query rows as vector lanes",
        .exp_ulps = 2,            /* attn_exp_avx512: 1.062 ulp (tests/test_exp --all) */
        .kv_block = 48,           /* keys per running-max rescale */
        .tiles = {64, 48, 16, 6}, /* rows per tile, kv block, lanes, register tile */
        .workspace_size = attn_avx512_workspace,
        .run = attn_avx512_run,
    },
};
const int attn_variants_count = (int)(sizeof attn_variants / sizeof attn_variants[0]);
