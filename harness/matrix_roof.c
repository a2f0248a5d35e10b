/* The roof probes of one matrix run (matrix.h, matrix_roofs). */
#include "matrix.h"

#include <stdio.h>
#include <string.h>

/* One compute pass: long enough to span the team's start and a few timer
 * ticks, short beside the rows (a prefill row of perf-targets runs
 * 0.1-5 s a round). */
static const double compute_pass_s = 0.02;

void matrix_roofs_init(matrix_roofs *r, const attn_peak *pk, size_t bw_bytes, attn_pages pages,
                       int max_threads)
{
    memset(r, 0, sizeof *r);
    r->pk = pk;
    r->bw_bytes = bw_bytes;
    r->pages = pages;
    r->max_threads = max_threads > 0 ? max_threads : 1;
}

static int arrays_ready(matrix_roofs *r)
{
    if (r->arrays_state == 0) {
        r->arrays_state = attn_peak_stream_alloc(&r->arrays, r->bw_bytes, r->pages) == 0 ? 1 : -1;
        if (r->arrays_state == 1)
            attn_peak_stream_touch(&r->arrays, r->max_threads);
    }
    return r->arrays_state == 1;
}

/* The chain count the run's peak chose for the best ISA at `threads`
 * (0: none, e.g. a peak file that does not say). */
static int peak_chains(const attn_peak *pk, int threads)
{
    int ti = attn_peak_index(pk, threads);
    for (int i = ATTN_ISA_COUNT - 1; ti >= 0 && i >= 0; i--)
        if (attn_isa_available((attn_isa)i, NULL, 0))
            return pk->fma_chains[i][ti];
    return 0;
}

static void make_probe(matrix_roofs *r, matrix_roof_slot *s)
{
    s->ok = 1;
    if (s->bandwidth) {
        if (!arrays_ready(r)) {
            snprintf(s->why, sizeof s->why, "cannot allocate 3 x %zu bytes for the read roof",
                     r->bw_bytes);
            s->ok = 0;
            return;
        }
        int ti = attn_peak_index(r->pk, s->threads);
        attn_roof_probe_read(&s->probe, &r->arrays, ti >= 0 ? r->pk->read_kernel[ti] : NULL,
                             s->threads);
        return;
    }
    int chains = s->roof == ATTN_ROOF_FMA ? peak_chains(r->pk, s->threads) : 0;
    if (attn_roof_probe_compute(&s->probe, s->roof, chains, s->threads, compute_pass_s, s->why,
                                sizeof s->why) != 0)
        s->ok = 0;
}

const attn_roof_probe *matrix_roofs_get(matrix_roofs *r, int bandwidth, attn_roof roof, int threads,
                                        const char **why)
{
    if (bandwidth)
        roof = ATTN_ROOF_FMA; /* one read roof, whatever the variant computes on */
    matrix_roof_slot *s = NULL;
    for (int i = 0; i < r->n && !s; i++)
        if (r->slot[i].bandwidth == bandwidth && r->slot[i].roof == roof &&
            r->slot[i].threads == threads)
            s = &r->slot[i];
    if (!s) {
        if (r->n == MATRIX_ROOF_SLOTS) {
            if (why)
                *why = "more roofs than the run keeps";
            return NULL;
        }
        s = &r->slot[r->n++];
        *s = (matrix_roof_slot){.bandwidth = bandwidth, .threads = threads, .roof = roof};
        make_probe(r, s);
    }
    if (!s->ok && why)
        *why = s->why;
    return s->ok ? &s->probe : NULL;
}

matrix_row_probes matrix_roofs_for_row(matrix_roofs *r, int bandwidth, attn_roof roof, int threads,
                                       const attn_shape *shape, const char **why_limit,
                                       const char **why_other)
{
    matrix_row_probes probes = {0};
    *why_limit = *why_other = NULL;
    probes.limit = matrix_roofs_get(r, bandwidth, roof, threads, why_limit);
    if (probes.limit && attn_perf_bandwidth_bound(shape))
        probes.other = matrix_roofs_get(r, !bandwidth, roof, threads, why_other);
    return probes;
}

int matrix_unpaired_note(char *buf, size_t cap, const char *name, int threads, int bandwidth,
                         const char *why_limit, const char *why_other)
{
    if (why_limit)
        snprintf(buf, cap, "matrix: note: %s threads=%d keeps the run's roof: %s", name, threads,
                 why_limit);
    else if (why_other)
        snprintf(buf, cap,
                 "matrix: note: %s threads=%d keeps the run's %s roof beside its paired %s roof "
                 "(its side settled from the two): %s",
                 name, threads, bandwidth ? "compute" : "read", bandwidth ? "read" : "compute",
                 why_other);
    return why_limit || why_other;
}

double matrix_roof_pass_seconds(const matrix_opts *o, const attn_peak *pk, int bandwidth,
                                int threads)
{
    if (!bandwidth)
        return compute_pass_s;
    const double bytes =
        3.0 * (double)(o->bw_bytes ? o->bw_bytes : attn_peak_default_opts().bw_array_bytes);
    const double gbs = attn_peak_read_for(pk, threads);
    return bytes / ((gbs > 0 ? gbs : 10.0) * 1e9); /* unknown: a slow machine's 10 GB/s */
}

void matrix_roofs_free(matrix_roofs *r)
{
    if (r->arrays_state == 1)
        attn_peak_stream_free(&r->arrays);
    r->arrays_state = 0;
}
