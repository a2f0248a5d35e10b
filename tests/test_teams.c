/* Teams: a call with one unit of work starts no OpenMP team, and a call
 * with many starts one. libgomp allocates a team's descriptor and ends
 * every team, even a team of one, with a futex syscall; a tiny call (one
 * decode row of 16 keys) spent most of its time there, and at 2 threads
 * woke a second thread that had nothing to do.
 *
 * The count is GOMP_parallel's, interposed here: this program defines the
 * symbol, so the static library's calls land on it, and it forwards each
 * to libgomp's. Every construct of the library is a `parallel` or a
 * `parallel for schedule(static)`, which GCC lowers to GOMP_parallel.
 * Other OpenMP runtimes (clang's libomp: __kmpc_fork_call) are not
 * counted; there the test skips. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "cases.h"
#include "check.h"
#include "variant.h"

typedef void (*gomp_parallel_fn)(void (*fn)(void *), void *data, unsigned num_threads,
                                 unsigned flags);

/* Written only from the thread that calls the library (its teams start
 * there; none nests). Volatile: GCC knows GOMP_parallel as a builtin and
 * need not expect it to write this file's variables. */
static volatile unsigned long teams_started;
static volatile unsigned teams_widest;

void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    static gomp_parallel_fn real;
    if (!real)
        real = (gomp_parallel_fn)(uintptr_t)dlsym(RTLD_NEXT, "GOMP_parallel");
    teams_started++;
    if (num_threads > teams_widest)
        teams_widest = num_threads;
    real(fn, data, num_threads, flags);
}

/* Teams one call of v on shape s in types ty started at `threads`;
 * -1 when the call failed. */
static long teams_of_call(const attn_variant *v, const attn_shape *shape, const attn_types *ty,
                          int threads)
{
    attn_case_buffers b;
    const attn_case c = {.shape = *shape, .data = DATA_NORMAL};
    long teams = -1;
    if (attn_case_buffers_alloc_typed(&b, shape, ty) == 0) {
        attn_shape s = attn_case_fill(&c, 3, b.q, b.k, b.v);
        attn_case_buffers_narrow(&b, &s);
        omp_set_num_threads(threads);
        teams_started = 0;
        teams_widest = 0;
        if (attn_run_typed(v->name, &s, ty, b.tq, b.tk, b.tv, b.o) == ATTN_OK)
            teams = (long)teams_started;
    }
    attn_case_buffers_free(&b);
    return teams;
}

int main(void)
{
    check_tally t = {0};
    /* Is the counter wired? A team of our own must reach it. */
    teams_started = 0;
    volatile int ran = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0)
            ran = 1;
    }
    if (teams_started != 1 || !ran) {
        printf("teams: skipped, this OpenMP runtime does not start teams through GOMP_parallel\n");
        return 77;
    }
    /* One unit: a decode row of one head. */
    const attn_shape one = {1, 1, 1, 1, 16, 16, 16, 0, 0.0f};
    /* Units enough for every thread: 8 heads of 64 rows. */
    const attn_shape many = {1, 8, 8, 64, 64, 16, 16, 0, 0.0f};
    const attn_types f32 = {ATTN_F32, ATTN_F32, ATTN_F32};
    const attn_types f16 = {ATTN_F16, ATTN_F16, ATTN_F16};
    const attn_types *types[] = {&f32, &f16};
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *v = attn_variant_table[i];
        if (!attn_variant_runnable(v))
            continue;
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
            if (attn_variant_supports(v->name, types[k]) != 1)
                continue;
            const char *tn = types[k] == &f32 ? "f32" : "f16";
            for (int threads = 1; threads <= 2; threads++) {
                long n = teams_of_call(v, &one, types[k], threads);
                CHECK(&t, n == 0, "%s %s, one decode row, %d thread(s): %ld teams, want 0", v->name,
                      tn, threads, n);
            }
            long n = teams_of_call(v, &many, types[k], 2);
            if (v->cost == ATTN_COST_QUADRATIC_ONE_THREAD) {
                CHECK(&t, n == 0, "%s %s, one thread by design: %ld teams", v->name, tn, n);
            } else {
                CHECK(&t, n >= 1 && teams_widest == 2,
                      "%s %s, 8 heads x 64 rows at 2 threads: %ld teams, widest %u, want a team "
                      "of 2",
                      v->name, tn, n, teams_widest);
            }
        }
    }
    return check_report("teams", &t);
}
