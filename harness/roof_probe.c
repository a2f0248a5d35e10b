/* A roof measured beside a row (roof_probe.h). */
#include "roof_probe.h"

#include <math.h>
#include <stdio.h>

static const attn_peak_fma_kernel *compute_kernels(attn_roof roof, char *why, size_t cap)
{
    switch (roof) {
    case ATTN_ROOF_BF16_AVX512:
        return attn_bf16_available(ATTN_BF16_AVX512, why, cap) ? attn_peak_bf16_avx512_kernels
                                                               : NULL;
    case ATTN_ROOF_BF16_AMX:
        return attn_bf16_available(ATTN_BF16_AMX, why, cap) ? attn_peak_bf16_amx_kernels : NULL;
    default:
        for (int i = ATTN_ISA_COUNT - 1; i >= 0; i--)
            if (attn_isa_available((attn_isa)i, NULL, 0))
                return attn_peak_fma_kernels_for((attn_isa)i);
        return attn_peak_fma_scalar_kernels; /* runs anywhere */
    }
}

int attn_roof_probe_compute(attn_roof_probe *p, attn_roof roof, int chains, int threads,
                            double seconds, char *why, size_t cap)
{
    *p = (attn_roof_probe){.bandwidth = 0, .threads = threads, .read_kernel = -1};
    const attn_peak_fma_kernel *list = compute_kernels(roof, why, cap);
    if (!list)
        return -1;
    for (const attn_peak_fma_kernel *k = list; k->chains && chains > 0; k++)
        if (k->chains == chains)
            p->kernel = k;
    if (!p->kernel) {
        /* No choice to follow (a peak read from a file without chain
         * counts, or a bf16 roof): the best of one short pass of each. */
        double best = -1;
        for (const attn_peak_fma_kernel *k = list; k->chains; k++) {
            long rounds = attn_peak_kernel_rounds(k, seconds / 4);
            double g = attn_peak_kernel_pass(k, threads, rounds);
            if (g > best) {
                best = g;
                p->kernel = k;
            }
        }
    }
    p->rounds = attn_peak_kernel_rounds(p->kernel, seconds);
    return 0;
}

void attn_roof_probe_read(attn_roof_probe *p, attn_peak_stream *arrays, const char *kernel,
                          int threads)
{
    *p = (attn_roof_probe){.bandwidth = 1, .threads = threads, .arrays = arrays};
    p->read_kernel = attn_peak_read_kernel_find(kernel);
    if (p->read_kernel >= 0)
        return;
    double best = -1;
    for (int i = attn_peak_read_kernel_next(-1); i >= 0; i = attn_peak_read_kernel_next(i)) {
        double g = attn_peak_read_pass(arrays, i, threads);
        if (g > best) {
            best = g;
            p->read_kernel = i;
        }
    }
}

double attn_roof_probe_pass(const attn_roof_probe *p)
{
    if (p->bandwidth)
        return attn_peak_read_pass(p->arrays, p->read_kernel, p->threads);
    return attn_peak_kernel_pass(p->kernel, p->threads, p->rounds);
}

void attn_roof_probe_describe(const attn_roof_probe *p, char *buf, size_t cap)
{
    if (p->bandwidth)
        snprintf(buf, cap, "read %s", attn_peak_read_kernel_name(p->read_kernel));
    else
        snprintf(buf, cap, "%d chains x %d lanes", p->kernel->chains, p->kernel->lanes);
}
