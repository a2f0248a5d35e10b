/* The peers in the matrix: PyTorch, ONNX Runtime and OpenVINO attention,
 * each in a worker process of its own (harness/peer_client.h), timed on
 * every (shape, threads) cell of the run in alternating rounds with the
 * fastest attnbench variant of that cell, and checked against the double
 * reference like a variant. One CSV row per peer and cell (kind = peer). */
#ifndef ATTN_MATRIX_PEERS_H
#define ATTN_MATRIX_PEERS_H

#include "matrix.h"
#include "results_csv.h"

/* Parses "torch,onnxruntime" or "all" into `p`. -1 (message printed) on a
 * name that is not a peer. */
int matrix_peers_parse(const char *list, matrix_peers *p);

/* Where the peers' run reports to: `emit` writes a row (0, or -1 to
 * stop the run); `started` hears each worker's library version as soon as
 * the worker says it, so an interrupted run's sidecar can still name the
 * library that timed its rows. */
typedef struct matrix_peer_sink {
    int (*emit)(void *ctx, const attn_result_row *row);
    void (*started)(void *ctx, const char *peer, const char *version);
    void *ctx;
} matrix_peer_sink;

/* Runs every peer on every cell of `cases` (n of them) not yet in `rf`,
 * pairing it with the fastest ok variant row of `rf` on that cell and,
 * with `roofs` (NULL: --roof run), with the cell's roof: one pass of it
 * per round, the row judged against their median.
 * sink->started hears the version each peer it starts reports (a resume
 * keeps the others': attn_meta_merge_peers). Returns 0, or -1 when emit
 * failed or the run was interrupted.
 * deadline_ns (0: none; --budget): the peers share the time to it (the
 * variants' plan ends where this share starts: matrix_budget_plan), each
 * what is left over the peers still to run when it starts. A peer's
 * cells past its share are skipped rows, "over budget", in case order; a
 * cell begun inside it starts no round that the last one's length says
 * would end past it (one round at least). */
int matrix_run_peers(const matrix_opts *o, const matrix_peers *peers, const attn_perf_case *cases,
                     int n, const attn_results_file *rf, const attn_peak *pk, int all,
                     matrix_roofs *roofs, int64_t deadline_ns, const matrix_peer_sink *sink);

#endif
