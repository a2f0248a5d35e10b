/* Which microarchitecture a CPU is, from its CPUID vendor, display family
 * and model: the name results are filed under. Brand strings do not tell
 * machines apart (a cloud VM's Zen 3 and Zen 4 both say "AMD EPYC"), the
 * family and model do. */
#ifndef ATTN_CPU_UARCH_H
#define ATTN_CPU_UARCH_H

#include <stddef.h>
#include <stdint.h>

/* "amd", "intel", or "unknown" for any other vendor string. */
const char *attn_cpu_vendor_short(const char *vendor);

/* Writes the microarchitecture's name ("zen3", "sapphirerapids", ...) or,
 * for a family/model the table does not know, "unknown-fam25-mod1" (both
 * in decimal, as /proc/cpuinfo prints them). Returns 1 when the table knew
 * it, 0 for the fallback. */
int attn_cpu_uarch(const char *vendor, int family, int model, char *out, size_t cap);

/* attn_cpu_uarch, checked against the features the CPU reports (the
 * ATTN_CPU_* bits it detected, before any ATTN_CPU_MASK): a hypervisor may
 * pass a client part's model number through on a server part (seen: an
 * AMX-capable Xeon reporting model 167, Rocket Lake). When the table's
 * Intel uarch cannot have AMX and the CPU has it, the name comes from the
 * features: "sapphirerapids", the first with AMX (Emerald Rapids runs the
 * same instructions), and `note` says why ("" otherwise). Returns what
 * attn_cpu_uarch returns. */
int attn_cpu_uarch_checked(const char *vendor, int family, int model, uint32_t detected, char *out,
                           size_t cap, char *note, size_t note_cap);

#endif
