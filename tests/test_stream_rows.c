/* stream computes the rows a tile has, padded to one SSE vector (4), not
 * to 16: a GQA decode tile of 4 query heads took 4x the work it needed, and
 * a 1-row call 16x, most of it in expf on padding rows.
 *
 * The work is counted as stream's exps: its kernel calls libm's expf once
 * per weight and once per row and block for the rescale, so one thread's
 * call over a tile of R rows (padding included) and n_kv keys in blocks of
 * 64 makes R·(n_kv + blocks) of them (no flash-decoding merge at one
 * thread). expf is interposed here: this program defines the symbol, so
 * the static library's calls land on it, and it forwards each to libm's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>

#include "accuracy.h"
#include "attn.h"
#include "cases.h"
#include "check.h"

typedef float (*expf_fn)(float);

/* One thread calls the library (omp_set_num_threads(1)), so a plain
 * counter; volatile, as GCC knows expf as a builtin. */
static volatile unsigned long exps;

float expf(float x)
{
    static expf_fn real;
    if (!real)
        real = (expf_fn)(uintptr_t)dlsym(RTLD_NEXT, "expf");
    exps++;
    return real(x);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* stream's exps for one call on s at one thread (N(0, 1) inputs: no
 * weight falls below its flush), or -1 when it failed. */
static long exps_of_call(const attn_shape *shape)
{
    attn_case_buffers b;
    const attn_case c = {.shape = *shape, .data = DATA_NORMAL};
    long n = -1;
    if (attn_case_buffers_alloc(&b, shape) == 0) {
        attn_shape s = attn_case_fill(&c, 5, b.q, b.k, b.v);
        exps = 0;
        if (attn_run("stream", &s, b.q, b.k, b.v, b.o) == ATTN_OK)
            n = (long)exps;
    }
    attn_case_buffers_free(&b);
    return n;
}

int main(void)
{
    check_tally t = {0};
    omp_set_num_threads(1);
    /* batch, heads_q, heads_kv, n_q, n_kv, d_k, d_v, causal, scale */
    const attn_shape shapes[] = {
        {1, 1, 1, 1, 256, 16, 16, 0, 0.0f},   /* one decode row: 4 rows, not 16 */
        {1, 4, 1, 1, 256, 32, 32, 0, 0.0f},   /* GQA decode, 4 heads a K/V head: 4 */
        {1, 5, 1, 1, 200, 8, 24, 0, 0.0f},    /* 5 heads: 8, not 16 */
        {1, 8, 2, 3, 256, 16, 16, 0, 0.0f},   /* 3 positions x 4 heads: 12, not 16 */
        {2, 1, 1, 17, 130, 16, 8, 0, 0.0f},   /* 17 rows: 16 + 4, not 32 */
        {1, 1, 1, 100, 100, 16, 16, 0, 0.0f}, /* two tiles of 50 rows: 52 each, not 64 */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const attn_shape *s = &shapes[i];
        /* flash_driver's plan: tiles of at most 64 rows, rows shared out
         * evenly among a head's tiles, each padded to a multiple of 4. */
        const int64_t rows_per_head = (int64_t)s->n_q * (s->heads_q / s->heads_kv);
        const int64_t tiles = ceil_div(rows_per_head, 64);
        const int64_t padded = tiles * ceil_div(ceil_div(rows_per_head, tiles), 4) * 4;
        const int64_t heads = (int64_t)s->batch * s->heads_kv;
        const long most = (long)(heads * padded * (s->n_kv + ceil_div(s->n_kv, 64)));
        const long least = (long)(heads * rows_per_head * s->n_kv);
        const long n = exps_of_call(s);
        CHECK(&t, n >= least && n <= most,
              "B %d, Hq %d, Hkv %d, n_q %d, n_kv %d: %ld exps, want %ld ... %ld (rows padded to "
              "4, not 16)",
              s->batch, s->heads_q, s->heads_kv, s->n_q, s->n_kv, n, least, most);
    }
    return check_report("stream_rows", &t);
}
