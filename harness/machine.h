/* Facts about the machine for reports: identity, slug, cores, cache sizes. */
#ifndef ATTN_MACHINE_H
#define ATTN_MACHINE_H

#include <stddef.h>

typedef struct attn_machine {
    char model[64];  /* brand string */
    char vendor[16]; /* CPUID vendor string, e.g. "AuthenticAMD" */
    int family, model_id, stepping;
    char uarch[40]; /* "zen3", "sapphirerapids", or "unknown-fam25-mod1" */
    /* Why uarch is not what the family/model say (attn_cpu_uarch_checked), or "" */
    char uarch_note[112];
    const char *isa; /* best FMA ISA this (masked) CPU runs: "avx512", "avx2", "scalar" */
    char slug[96];   /* e.g. "amd-zen3-avx2-2c": results/<slug>/ */
    int cores;       /* online logical CPUs */
    /* L1D and L2: attn_cpu()'s (CPUID, its small defaults when CPUID is
     * silent); L3: sysconf, 0 when unknown */
    long l1d_bytes, l2_bytes, l3_bytes;
} attn_machine;

void attn_machine_read(attn_machine *m);

/* "<vendor>-<uarch>-<isa>-<cores>c": vendor "amd", "intel" or "unknown";
 * uarch from the family/model table, checked against the CPUID features
 * (attn_cpu_uarch_checked, cpu_uarch.h); isa the best FMA ISA.
 * Two machines that differ in any of them land in different folders. */
void attn_machine_slug(const char *vendor, const char *uarch, const char *isa, int cores, char *out,
                       size_t cap);

#endif
