/* CPU features, detected once (CPUID + XGETBV) into a bitmask.
 * ATTN_CPU_MASK hides features so dispatch can be tested on any machine:
 *   ATTN_CPU_MASK=-avx512f          hide AVX-512F (and everything built on it)
 *   ATTN_CPU_MASK=-avx2,-fma        comma-separated, each token "-name"
 *   ATTN_CPU_MASK=-all              hide every optional feature (scalar only)
 * Hiding a feature also hides the features that depend on it (hiding avx
 * hides avx2, fma, f16c and AVX-512). A malformed value is an error. */
#ifndef ATTN_CPU_FEATURES_H
#define ATTN_CPU_FEATURES_H

#include <stddef.h>
#include <stdint.h>

enum {
    ATTN_CPU_SSE42 = 1u << 0,
    ATTN_CPU_AVX = 1u << 1,
    ATTN_CPU_AVX2 = 1u << 2,
    ATTN_CPU_FMA = 1u << 3,
    ATTN_CPU_F16C = 1u << 4,
    ATTN_CPU_AVX512F = 1u << 5,
    ATTN_CPU_AVX512DQ = 1u << 6,
    ATTN_CPU_AVX512BW = 1u << 7,
    ATTN_CPU_AVX512VL = 1u << 8,
    ATTN_CPU_AVX512BF16 = 1u << 9,
    ATTN_CPU_AMX_TILE = 1u << 10,
    ATTN_CPU_AMX_BF16 = 1u << 11,
    ATTN_CPU_AMX_INT8 = 1u << 12,
};
#define ATTN_CPU_FEATURE_COUNT 13
#define ATTN_CPU_AMX_ALL (ATTN_CPU_AMX_TILE | ATTN_CPU_AMX_BF16 | ATTN_CPU_AMX_INT8)

typedef struct attn_cpu_info {
    uint32_t detected; /* what CPUID + XGETBV report */
    uint32_t features; /* detected minus what ATTN_CPU_MASK hides */
    uint32_t hidden;   /* what ATTN_CPU_MASK asked to hide */
    int mask_error;    /* nonzero when ATTN_CPU_MASK is malformed */
    char mask_message[160];
    char model[64]; /* brand string */
    /* Identity (CPUID leaves 0 and 1): the vendor string ("AuthenticAMD",
     * "GenuineIntel") and the display family, model and stepping, extended
     * fields folded in as the vendors' manuals define them. */
    char vendor[16];
    int family, model_id, stepping;
    /* Linux grants AMX tile data only on request (arch_prctl
     * ARCH_REQ_XCOMP_PERM); detection asks once. When the CPU has AMX but
     * the kernel refused, the AMX bits are cleared and this says so. */
    char amx_refused[96];
    /* One core's level-1 data cache and level-2 cache, in bytes (CPUID's
     * cache descriptors: leaf 4 on Intel, 0x8000001D on AMD, else AMD's
     * 0x80000005/6), for the kernels' block sizes. When CPUID says
     * nothing, ATTN_CPU_DEFAULT_L1D / _L2 (small, so blocks err small). */
    int64_t l1d_bytes, l2_bytes;
    /* The largest workspace attn_run allocates (attn_workspace_limit):
     * half the physical memory, at most 64 GiB; read here once, not per
     * call (sysconf(_SC_PHYS_PAGES) is a sysinfo syscall each time: a tiny
     * call on a Zen 3 went from 2.6 to 1.6 microseconds). */
    size_t workspace_limit;
} attn_cpu_info;

enum { ATTN_CPU_DEFAULT_L1D = 32 << 10, ATTN_CPU_DEFAULT_L2 = 256 << 10 };

/* The workspace limit of a machine with `pages` physical pages of
 * `page_bytes` each (sysconf's answers; <= 0 when unknown: 4 GiB). */
size_t attn_cpu_workspace_limit(long pages, long page_bytes);

/* The level-1 data and level-2 sizes from deterministic cache descriptors
 * (CPUID leaf 4 or 0x8000001D, subleaf by subleaf until type 0): `leaf`
 * gives subleaf i's EAX, EBX, ECX. 0 for a level not described. */
typedef void (*attn_cpuid_fn)(uint32_t subleaf, uint32_t regs[3], void *ctx);
void attn_cpu_decode_caches(attn_cpuid_fn leaf, void *ctx, int64_t *l1d, int64_t *l2);

/* CPUID leaf 1 EAX to the display family, model and stepping: family =
 * base + extended when base is 0xF; model = extended << 4 | base when the
 * base family is 6 or 0xF (the vendors' manuals). */
void attn_cpu_decode_signature(uint32_t eax, int *family, int *model, int *stepping);

/* Detected on first call (thread-safe, once); never NULL. */
const attn_cpu_info *attn_cpu(void);

/* Parse a mask specification into the set of features to hide. Returns 0 on
 * success; on failure, -1 and a message naming the bad token. */
int attn_cpu_parse_mask(const char *spec, uint32_t *hide, char *msg, size_t cap);

/* The features detected, with the AMX bits cleared when the CPU has AMX
 * and Linux did not grant its tile state (granted 0): a tile instruction
 * would then be a SIGILL. `why` gets the reason, or "" when nothing was
 * cleared. Pure: tests give it a refusal. */
uint32_t attn_cpu_grant_amx(uint32_t detected, int granted, char *why, size_t cap);

/* The names of the `missing` features (attn_cpu_format), followed by
 * " (the refusal)" when AMX is among them and amx_refused says why it is
 * gone: a skip that says what to fix. */
void attn_cpu_describe_missing(uint32_t missing, const char *amx_refused, char *buf, size_t cap);

/* Lower-case name of one feature bit ("avx512f"); NULL for an unknown bit. */
const char *attn_cpu_feature_name(uint32_t bit);

/* Writes the names of the features in `set` separated by spaces. */
void attn_cpu_format(uint32_t set, char *buf, size_t cap);

#endif
