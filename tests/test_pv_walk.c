/* The order in which avx512's P·V reads a key block's V rows: its column
 * tiles walk the block's keys alternately forward and backward
 * (PV_SERPENTINE in impls/flash_avx512_tiles.h), so each tile starts on
 * the V rows the tile before it ended on, still in L1. A block's V rows
 * (96 keys x 512 bytes at d_v = 128) beside its weights outgrow a 48 KiB
 * L1D; walked in one order every tile found them evicted (Sapphire Rapids:
 * 1.05-1.08x from the alternation). The order leaves no trace in O's
 * accuracy, so it is checked here by watching the reads: the generic
 * kernel on the portable 16-lane primitives with avx512's tile sizes
 * (generic16_variant.h, the variant test_generic16 verifies), every
 * broadcast it makes logged (the kernel broadcasts K in Q·Kᵀ and V in P·V,
 * each straight from the caller's tensors when they are f32). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "flash_avx512_tiles.h"
#include "flash_driver.h"
#include "vec_portable16.h"

/* One broadcast: from K (is_v 0) or V, its row and column. */
typedef struct read_at {
    int is_v;
    int32_t row, col;
} read_at;

/* The reads of one call, at one thread (omp_set_num_threads(1)). */
static struct {
    const float *k, *v;
    int32_t d_k, d_v, n_kv;
    read_at *at;
    size_t n, cap;
    int overflow;
} reads;

static void log_read(const float *p)
{
    read_at r = {0, 0, 0};
    if (p >= reads.v && p < reads.v + (size_t)reads.n_kv * reads.d_v) {
        r.is_v = 1;
        r.row = (int32_t)((p - reads.v) / reads.d_v);
        r.col = (int32_t)((p - reads.v) % reads.d_v);
    } else if (p >= reads.k && p < reads.k + (size_t)reads.n_kv * reads.d_k) {
        r.row = (int32_t)((p - reads.k) / reads.d_k);
        r.col = (int32_t)((p - reads.k) % reads.d_k);
    } else {
        return; /* not a tensor read (none in this kernel today) */
    }
    if (reads.n == reads.cap) {
        reads.overflow = 1;
        return;
    }
    reads.at[reads.n++] = r;
}

static inline vec_f logged_broadcast(const float *p)
{
    log_read(p);
    return vec_broadcast(p);
}

/* After the primitives: the kernel's broadcasts go through the log. */
#define vec_broadcast logged_broadcast
#include "flash_block_generic.h"
#undef vec_broadcast
#include "generic16_variant.h"

/* A walk: one column tile's pass over a block's keys, each key's columns
 * [c0, c1] read in a row. */
typedef struct walk {
    int32_t c0, c1, first, last, keys;
    int monotone; /* +1 or -1 when every step moved one key that way, 0 when not */
} walk;

/* Splits a block's V reads [b, e) into walks; returns how many (at most cap). */
static int walks_of(const read_at *at, size_t b, size_t e, walk *w, int cap)
{
    int n = 0;
    size_t i = b;
    while (i < e && n < cap) {
        /* One step: one key's consecutive columns, at most the current
         * walk's when it starts on the walk's first column (at a turn the
         * next tile's first key is the same key, its columns next). */
        walk *cur = n > 0 ? &w[n - 1] : NULL;
        const size_t width =
            cur && at[i].col == cur->c0 ? (size_t)(cur->c1 - cur->c0 + 1) : SIZE_MAX;
        size_t s = i + 1;
        while (s < e && s - i < width && at[s].row == at[i].row && at[s].col == at[s - 1].col + 1)
            s++;
        const int32_t c0 = at[i].col, c1 = at[s - 1].col;
        if (cur && cur->c0 == c0 && cur->c1 == c1) {
            const int32_t dir = at[i].row - cur->last;
            if (cur->keys == 1 && (dir == 1 || dir == -1))
                cur->monotone = dir;
            else if (dir != cur->monotone)
                cur->monotone = 0;
            cur->last = at[i].row;
            cur->keys++;
        } else {
            w[n++] = (walk){c0, c1, at[i].row, at[i].row, 1, 1};
        }
        i = s;
    }
    return n;
}

/* Checks one call's P·V walks; returns the blocks checked, -1 on a failure. */
static int check_walks(check_tally *t, const char *name)
{
    enum { MAX_WALKS = 512 };
    walk w[MAX_WALKS];
    int blocks = 0;
    size_t i = 0;
    while (i < reads.n) {
        /* A block's P·V: the V reads between two runs of K reads. */
        while (i < reads.n && !reads.at[i].is_v)
            i++;
        const size_t b = i;
        while (i < reads.n && reads.at[i].is_v)
            i++;
        if (b == i)
            break;
        const int n = walks_of(reads.at, b, i, w, MAX_WALKS);
        if (w[0].keys < 2)
            continue; /* a one-key block has no direction */
        blocks++;
        int32_t next_col = 0;
        for (int k = 0; k < n; k++) {
            const int want = k % 2 ? -1 : 1;
            const int ok = w[k].monotone == want && w[k].keys == w[0].keys && w[k].c0 == next_col &&
                           (k == 0 || w[k].first == (want > 0 ? w[0].first : w[0].last));
            CHECK(t, ok,
                  "%s: block of keys %d..%d, column tile %d (columns %d..%d): walked keys "
                  "%d..%d (%d keys, step %+d), want %s from key %d over %d keys starting at "
                  "column %d",
                  name, w[0].first, w[0].last, k, w[k].c0, w[k].c1, w[k].first, w[k].last,
                  w[k].keys, w[k].monotone, want > 0 ? "forward" : "backward",
                  want > 0 ? w[0].first : w[0].last, w[0].keys, next_col);
            if (!ok)
                return -1;
            next_col = w[k].c1 + 1;
        }
        CHECK(t, next_col == reads.d_v, "%s: block's column tiles end at %d of d_v %d", name,
              next_col, reads.d_v);
        if (next_col != reads.d_v)
            return -1;
    }
    return blocks;
}

int main(void)
{
    check_tally t = {0};
    omp_set_num_threads(1);
    /* batch, heads_q, heads_kv, n_q, n_kv, d_k, d_v, causal, scale: 4, 3, 2
     * and 1 row vectors (6, 8, 12 and 16 columns a tile), d_v with the
     * narrow tiles at its end, several blocks and a ragged last one, the
     * causal diagonal's masked blocks. */
    const attn_shape shapes[] = {
        {1, 1, 1, 64, 300, 32, 128, 0, 0.0f}, {1, 1, 1, 48, 200, 16, 80, 1, 0.0f},
        {1, 1, 1, 32, 250, 16, 27, 0, 0.0f},  {1, 1, 1, 16, 150, 8, 35, 0, 0.0f},
        {1, 2, 1, 64, 64, 16, 64, 1, 0.0f},
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const attn_shape *s = &shapes[si];
        char name[96];
        snprintf(name, sizeof name, "Hq %d, n_q %d, n_kv %d, d_v %d, causal %d", s->heads_q, s->n_q,
                 s->n_kv, s->d_v, s->causal);
        attn_case_buffers buf;
        const attn_case c = {.shape = *s, .data = DATA_NORMAL};
        const int alloc_rc = attn_case_buffers_alloc(&buf, s);
        CHECK(&t, alloc_rc == 0, "%s: no memory", name);
        if (alloc_rc != 0)
            continue;
        const attn_shape filled = attn_case_fill(&c, 3, buf.q, buf.k, buf.v);
        reads.k = buf.k;
        reads.v = buf.v;
        reads.d_k = s->d_k;
        reads.d_v = s->d_v;
        reads.n_kv = s->n_kv;
        reads.cap = (size_t)s->heads_q * s->n_kv * (s->d_k + s->d_v) * 4;
        reads.n = 0;
        reads.overflow = 0;
        reads.at = malloc(sizeof *reads.at * reads.cap);
        char msg[256] = "";
        const int rc = reads.at ? attn_run_variant(&generic16, &filled, buf.q, buf.k, buf.v,
                                                   (float *)buf.o, NULL, msg, sizeof msg)
                                : ATTN_ENOMEM;
        CHECK(&t, rc == ATTN_OK && !reads.overflow, "%s: run %d (%s), log overflow %d", name, rc,
              msg, reads.overflow);
        if (rc == ATTN_OK && !reads.overflow) {
            const int blocks = check_walks(&t, name);
            CHECK(&t, blocks != 0, "%s: no key block of two keys or more seen", name);
        }
        free(reads.at);
        attn_case_buffers_free(&buf);
    }
    return check_report("pv_walk", &t);
}
