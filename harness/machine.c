#include "machine.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu_features.h"
#include "cpu_uarch.h"
#include "peak.h"

void attn_machine_slug(const char *vendor, const char *uarch, const char *isa, int cores, char *out,
                       size_t cap)
{
    snprintf(out, cap, "%s-%s-%s-%dc", attn_cpu_vendor_short(vendor), uarch, isa, cores);
}

/* The ISA the FMA roof comes from: what the prefill rows are judged against. */
static const char *best_fma_isa(void)
{
    for (int i = ATTN_ISA_COUNT - 1; i > 0; i--)
        if (attn_isa_available((attn_isa)i, NULL, 0))
            return attn_isa_name((attn_isa)i);
    return attn_isa_name(ATTN_ISA_SCALAR);
}

void attn_machine_read(attn_machine *m)
{
    memset(m, 0, sizeof *m);
    const attn_cpu_info *cpu = attn_cpu();
    snprintf(m->model, sizeof m->model, "%s", cpu->model);
    snprintf(m->vendor, sizeof m->vendor, "%s", cpu->vendor);
    m->family = cpu->family;
    m->model_id = cpu->model_id;
    m->stepping = cpu->stepping;
    /* The CPUID features themselves, not cpu->features: the uarch (and the
     * slug's folder) stays what it is under ATTN_CPU_MASK. */
    attn_cpu_uarch_checked(cpu->vendor, cpu->family, cpu->model_id, attn_cpu_uarch_features(),
                           m->uarch, sizeof m->uarch, m->uarch_note, sizeof m->uarch_note);
    m->isa = best_fma_isa();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = cores > 0 ? (int)cores : 1;
    /* L1D and L2 as the library read them (CPUID), the sizes avx512's key
     * blocks come from; the L3 only the harness needs (sysconf). */
    m->l1d_bytes = (long)cpu->l1d_bytes;
    m->l2_bytes = (long)cpu->l2_bytes;
#ifdef _SC_LEVEL3_CACHE_SIZE
    m->l3_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (m->l3_bytes < 0)
        m->l3_bytes = 0;
    attn_machine_slug(m->vendor, m->uarch, m->isa, m->cores, m->slug, sizeof m->slug);
}
