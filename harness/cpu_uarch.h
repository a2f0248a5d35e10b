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

/* The CPUID features the uarch check reads (leaf 7), as the core reports
 * them: before XGETBV, the kernel's AMX grant and ATTN_CPU_MASK, so the
 * name, and the slug's uarch, do not change under a mask or a kernel that
 * keeps AMX to itself. */
enum {
    ATTN_UARCH_AMX_TILE = 1u << 0,    /* leaf 7 subleaf 0 EDX bit 24 */
    ATTN_UARCH_AMX_BF16 = 1u << 1,    /* leaf 7 subleaf 0 EDX bit 22 */
    ATTN_UARCH_AVX512_FP16 = 1u << 2, /* leaf 7 subleaf 0 EDX bit 23 */
    ATTN_UARCH_AVX512_BF16 = 1u << 3, /* leaf 7 subleaf 1 EAX bit 5 */
    ATTN_UARCH_AMX_FP16 = 1u << 4,    /* leaf 7 subleaf 1 EAX bit 21 */
};

/* The ATTN_UARCH_* bits of leaf 7 subleaf 0's EDX and subleaf 1's EAX (0
 * when the CPU has no subleaf 1). Pure. */
uint32_t attn_cpu_uarch_decode_leaf7(uint32_t edx0, uint32_t eax1);

/* The ATTN_UARCH_* bits of this CPU (CPUID leaf 7; 0 without it). */
uint32_t attn_cpu_uarch_features(void);

/* attn_cpu_uarch, checked against the features the CPU reports
 * (ATTN_UARCH_* bits): a hypervisor may pass a client part's model number
 * through on a server part (seen: an AMX Xeon reporting model 167, Rocket
 * Lake). When the table names an Intel uarch that cannot have one of the
 * features (AMX: only sapphirerapids, emeraldrapids, graniterapids;
 * AMX-FP16: only graniterapids; AVX512_FP16 and AVX512_BF16: only those,
 * skylake-server for AVX512_BF16 (model 85 is Cooper Lake too), and
 * alderlake, whose early firmware let AVX-512 run), the name comes from
 * the features instead, the first rule that applies:
 *   AMX-FP16                   -> "graniterapids"
 *   AMX-TILE or AMX-BF16       -> "sapphirerapids" (Emerald Rapids runs
 *                                 the same instructions: not told apart)
 *   AVX512_FP16 (AMX hidden)   -> "sapphirerapids"
 *   AVX512_BF16 only           -> "skylake-server" (Cooper Lake's entry)
 * and `note` says why, e.g. "CPUID's model 167 says rocketlake, which has
 * no AMX: named from the features" ("" when the table's name stands). AMD,
 * other vendors and a family/model the table does not know are never
 * renamed. Returns what attn_cpu_uarch returns. */
int attn_cpu_uarch_checked(const char *vendor, int family, int model, uint32_t features, char *out,
                           size_t cap, char *note, size_t note_cap);

#endif
