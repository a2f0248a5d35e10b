/* Thread safety: attn_run called from several pthreads at once, each with
 * its own buffers, variants, shapes and OpenMP thread counts, gives bitwise
 * the results of the same calls made one after another (each variant in
 * its default types, default_types.h). The workers start
 * together behind a barrier and nothing touches the library before, so
 * their first calls race the one-time CPU detection (call_once). Run under
 * ThreadSanitizer by scripts/test_hardening.sh. */
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "cases.h"
#include "check.h"
#include "default_types.h"
#include "variant.h"

enum { WORKERS = 4, ROUNDS = 2 };

/* Small shapes: enough rows for a variant's OpenMP split, small enough for
 * ThreadSanitizer's 5-15x slowdown. A decode row, causal GQA prefill with
 * rows that see no key, d_k != d_v, and a tile-crossing odd size. */
static const attn_case shapes[] = {
    {.shape = {1, 4, 2, 33, 33, 16, 16, 1, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 4, 1, 1, 300, 32, 32, 0, 0.0f}, .data = DATA_NORMAL},
    {.shape = {2, 2, 2, 40, 10, 8, 12, 1, 0.0f}, .data = DATA_NORMAL},
    {.shape = {1, 2, 2, 70, 70, 24, 24, 0, 0.0f}, .data = DATA_RISING},
};
enum { SHAPES = sizeof shapes / sizeof shapes[0] };

typedef struct job {
    const char *variant;
    attn_shape shape;
    int threads; /* OpenMP threads for this call */
    float *q, *k, *v;
    float *o_concurrent, *o_serial;
    size_t o_elems;
    int rc_concurrent, rc_serial;
    int supported_concurrent;
} job;

typedef struct worker {
    job *jobs;
    int n_jobs, first; /* the jobs this worker runs: first, first + WORKERS, ... */
    pthread_barrier_t *start;
} worker;

static void *run_worker(void *arg)
{
    const worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int round = 0; round < ROUNDS; round++)
        for (int j = w->first; j < w->n_jobs; j += WORKERS) {
            job *x = &w->jobs[j];
            /* Half the workers ask about support first, half go straight to
             * attn_run: both paths must race the detection safely. */
            if (round == 0 && (w->first & 1))
                x->supported_concurrent = attn_variant_supported(x->variant);
            omp_set_num_threads(x->threads); /* this pthread's own ICV */
            x->rc_concurrent =
                run_default_types(x->variant, &x->shape, x->q, x->k, x->v, x->o_concurrent);
        }
    return NULL;
}

/* One job per variant x shape, thread counts 1..max cycling. */
static int make_jobs(job *jobs, int max_threads)
{
    int n = 0;
    for (int vi = 0; vi < attn_variant_table_size; vi++)
        for (int si = 0; si < SHAPES; si++) {
            job *x = &jobs[n];
            memset(x, 0, sizeof *x);
            x->variant = attn_variant_table[vi]->name;
            x->threads = 1 + n % max_threads;
            const attn_shape *s = &shapes[si].shape;
            x->q = malloc(sizeof(float) * attn_q_elems(s));
            x->k = malloc(sizeof(float) * attn_kv_elems(s, s->d_k));
            x->v = malloc(sizeof(float) * attn_kv_elems(s, s->d_v));
            x->o_elems = attn_o_elems(s);
            x->o_concurrent = calloc(x->o_elems, sizeof(float));
            x->o_serial = calloc(x->o_elems, sizeof(float));
            if (!x->q || !x->k || !x->v || !x->o_concurrent || !x->o_serial)
                return -1;
            x->shape = attn_case_fill(&shapes[si], 11 + (uint64_t)si, x->q, x->k, x->v);
            n++;
        }
    return n;
}

static void free_jobs(job *jobs, int n)
{
    for (int j = 0; j < n; j++) {
        free(jobs[j].q);
        free(jobs[j].k);
        free(jobs[j].v);
        free(jobs[j].o_concurrent);
        free(jobs[j].o_serial);
    }
}

int main(void)
{
    check_tally t = {0};
    /* ATTN_TEST_MAX_THREADS caps the OpenMP threads per call (the TSan run
     * sets 1 when the OpenMP runtime is not instrumented). */
    int max_threads = 3;
    const char *cap = getenv("ATTN_TEST_MAX_THREADS");
    if (cap && atoi(cap) >= 1 && atoi(cap) < max_threads)
        max_threads = atoi(cap);
    job *jobs = calloc((size_t)attn_variant_table_size * SHAPES, sizeof *jobs);
    int n = jobs ? make_jobs(jobs, max_threads) : -1;
    CHECK(&t, n > 0, "cannot allocate the jobs");
    if (n <= 0)
        return check_report("concurrent", &t);

    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, WORKERS);
    pthread_t tid[WORKERS];
    worker w[WORKERS];
    for (int i = 0; i < WORKERS; i++) {
        w[i] = (worker){.jobs = jobs, .n_jobs = n, .first = i, .start = &start};
        CHECK(&t, pthread_create(&tid[i], NULL, run_worker, &w[i]) == 0, "pthread_create %d", i);
    }
    for (int i = 0; i < WORKERS; i++)
        pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&start);

    for (int j = 0; j < n; j++) {
        job *x = &jobs[j];
        omp_set_num_threads(x->threads);
        x->rc_serial = run_default_types(x->variant, &x->shape, x->q, x->k, x->v, x->o_serial);
        int supported = attn_variant_supported(x->variant);
        char name[256];
        attn_case name_case = {.shape = x->shape, .data = DATA_NORMAL};
        attn_case_name(x->variant, &name_case, name, sizeof name);
        CHECK(&t, x->rc_serial == (supported == 1 ? ATTN_OK : ATTN_ENOTSUP),
              "%s threads=%d: serial rc %d, supported %d", name, x->threads, x->rc_serial,
              supported);
        CHECK(&t, x->rc_concurrent == x->rc_serial, "%s threads=%d: concurrent rc %d, serial %d",
              name, x->threads, x->rc_concurrent, x->rc_serial);
        if (w[j % WORKERS].first & 1)
            CHECK(&t, x->supported_concurrent == supported,
                  "%s: attn_variant_supported %d concurrently, %d serially", name,
                  x->supported_concurrent, supported);
        CHECK(&t, memcmp(x->o_concurrent, x->o_serial, sizeof(float) * x->o_elems) == 0,
              "%s threads=%d: concurrent and serial results differ bitwise", name, x->threads);
    }
    free_jobs(jobs, n);
    free(jobs);
    return check_report("concurrent", &t);
}
