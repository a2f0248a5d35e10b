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
        .exp_ulps = 1, /* glibc expf: < 1 ulp */
        .kv_block = 0, /* two-pass: one max per row */
        .tiles = {64, 8, 4, 0}, /* key tile = max query block, register tile NR, MR */
        .workspace_size = attn_blocked_workspace,
        .run = attn_blocked_run,
    },
};
const int attn_variants_count = (int)(sizeof attn_variants / sizeof attn_variants[0]);
