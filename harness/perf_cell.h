/* One performance cell: a variant on a shape at a thread count, with its
 * inputs set up outside any timed loop. Shared by bench (Google Benchmark)
 * and matrix (its own timing loop).
 *
 * What is timed is the variant's run() on a workspace allocated (and
 * touched) once up front: attn_run() minus its per-call workspace
 * allocation, which for a large workspace would time the page faults of a
 * fresh mmap on every call rather than the kernel. The thread count is set
 * both ways a variant may read it: p->threads and the OpenMP ICV of the
 * calling thread (omp_set_num_threads), so a variant or library that asks
 * omp_get_max_threads() agrees with the workspace it was sized for.
 *
 * A cell has element types (attn_perf_case.types): its inputs are made in
 * f32 as always and rounded to nearest even into buffers of those types,
 * and what is timed is the dispatcher's typed path (attn_variant_run_in:
 * attn_run_variant_typed minus its allocation and argument checks), so an
 * f32 kernel's widening in the workspace is part of its time, as it is of
 * a caller's.
 *
 * Memory-bound cells (decode: n_q <= 16) rotate through enough copies of
 * Q, K, V and O to span twice the last-level cache, so every call streams
 * its KV cache from memory, as decode in a real model does (the other
 * layers' caches evict it in between); one copy would be judged against
 * DRAM bandwidth while being served from cache. */
#ifndef ATTN_PERF_CELL_H
#define ATTN_PERF_CELL_H

#include <stddef.h>

#include "big_alloc.h"
#include "perf_cases.h"
#include "variant.h"

typedef struct attn_perf_cell {
    const attn_variant *variant;
    attn_shape shape;
    attn_types types;
    int threads;
    attn_problem problem; /* typed; threads = `threads`; points at the copy in use */
    void *q, *k, *v, *o;  /* copy 0, of `types`: what the accuracy check reads */
    int copies, next;     /* copies of the four tensors; the one the next run uses */
    size_t q_stride, k_stride, v_stride, o_stride; /* bytes between copies (whole lines) */
    void *workspace;
    size_t workspace_bytes;
} attn_perf_cell;

/* Why a cell is not timed, or 0 when it can be: the CPU lacks a feature
 * ("needs avx512f": the reason alone, the caller says skipped), the variant
 * does not take the types ("variant blas does not take kv = bf16"), the workspace exceeds
 * attn_workspace_limit(), or the variant would take minutes per call (naive at n >= 8192).
 * *workspace_bytes gets the workspace size (with the widened copies of an
 * f32 kernel) when it is computable. */
int attn_perf_skip_reason(const attn_variant *v, const attn_perf_case *pc, size_t *workspace_bytes,
                          char *why, size_t cap);

/* How many copies of the inputs a cell rotates through, given the
 * last-level cache size in bytes (0: unknown). */
int attn_perf_copies(const attn_shape *s, const attn_types *t, long llc_bytes);

/* Allocates 64-byte aligned Q, K, V, O of the case's types
 * (attn_perf_copies of them) and the workspace, on `pages` (big_alloc.h:
 * the roof's arrays must be on the same), fills Q, K, V with N(0, 1)
 * data (cases.h, seed 1) rounded to those types and touches everything.
 * Returns 0, or -1 with `why` set. */
int attn_perf_cell_setup(attn_perf_cell *c, const attn_variant *v, const attn_perf_case *pc,
                         long llc_bytes, attn_pages pages, char *why, size_t cap);

/* One call of the variant on the cell's next copy. Returns what run()
 * returns. */
int attn_perf_cell_run(attn_perf_cell *c);

void attn_perf_cell_free(attn_perf_cell *c);

#endif
