/* One-time CPU detection: CPUID for what the core implements, XGETBV for
 * what the OS actually saves on a context switch (an AVX-512 core under an
 * OS that does not save ZMM state must not run AVX-512 code). */
/* syscall(): arch_prctl has no libc wrapper. */
#define _DEFAULT_SOURCE
#include "cpu_features.h"

#include <cpuid.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
    uint32_t bit;
    const char *name;
    uint32_t implies; /* features that cannot exist without this one */
} feature_names[ATTN_CPU_FEATURE_COUNT] = {
    {ATTN_CPU_SSE42, "sse4.2", 0},
    {ATTN_CPU_AVX, "avx",
     ATTN_CPU_AVX2 | ATTN_CPU_FMA | ATTN_CPU_F16C | ATTN_CPU_AVX512F | ATTN_CPU_AVX512DQ |
         ATTN_CPU_AVX512BW | ATTN_CPU_AVX512VL | ATTN_CPU_AVX512BF16},
    {ATTN_CPU_AVX2, "avx2",
     ATTN_CPU_AVX512F | ATTN_CPU_AVX512DQ | ATTN_CPU_AVX512BW | ATTN_CPU_AVX512VL |
         ATTN_CPU_AVX512BF16},
    {ATTN_CPU_FMA, "fma", 0},
    {ATTN_CPU_F16C, "f16c", 0},
    {ATTN_CPU_AVX512F, "avx512f",
     ATTN_CPU_AVX512DQ | ATTN_CPU_AVX512BW | ATTN_CPU_AVX512VL | ATTN_CPU_AVX512BF16},
    {ATTN_CPU_AVX512DQ, "avx512dq", 0},
    {ATTN_CPU_AVX512BW, "avx512bw", ATTN_CPU_AVX512BF16},
    {ATTN_CPU_AVX512VL, "avx512vl", 0},
    {ATTN_CPU_AVX512BF16, "avx512_bf16", 0},
    {ATTN_CPU_AMX_TILE, "amx_tile", ATTN_CPU_AMX_BF16 | ATTN_CPU_AMX_INT8},
    {ATTN_CPU_AMX_BF16, "amx_bf16", 0},
    {ATTN_CPU_AMX_INT8, "amx_int8", 0},
};

const char *attn_cpu_feature_name(uint32_t bit)
{
    for (int i = 0; i < ATTN_CPU_FEATURE_COUNT; i++)
        if (feature_names[i].bit == bit)
            return feature_names[i].name;
    return NULL;
}

void attn_cpu_format(uint32_t set, char *buf, size_t cap)
{
    size_t len = 0;
    if (cap == 0)
        return;
    buf[0] = '\0';
    for (int i = 0; i < ATTN_CPU_FEATURE_COUNT; i++) {
        if (!(set & feature_names[i].bit))
            continue;
        int n = snprintf(buf + len, cap - len, "%s%s", len ? " " : "", feature_names[i].name);
        if (n < 0 || (size_t)n >= cap - len)
            return;
        len += (size_t)n;
    }
}

/* The closure of `set` under "hiding X hides what needs X". */
static uint32_t with_dependents(uint32_t set)
{
    uint32_t prev;
    do {
        prev = set;
        for (int i = 0; i < ATTN_CPU_FEATURE_COUNT; i++)
            if (set & feature_names[i].bit)
                set |= feature_names[i].implies;
    } while (set != prev);
    return set;
}

int attn_cpu_parse_mask(const char *spec, uint32_t *hide, char *msg, size_t cap)
{
    uint32_t set = 0;
    const char *p = spec;
    if (msg && cap)
        msg[0] = '\0';
    if (!spec || !*spec) {
        *hide = 0;
        return 0;
    }
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char token[32];
        if (len == 0 || len >= sizeof token) {
            if (msg)
                snprintf(msg, cap, "ATTN_CPU_MASK: empty or overlong token in \"%s\"", spec);
            return -1;
        }
        memcpy(token, p, len);
        token[len] = '\0';
        if (token[0] != '-') {
            if (msg)
                snprintf(msg, cap,
                         "ATTN_CPU_MASK: token \"%s\" must start with '-' (features can only be "
                         "hidden, e.g. -avx512f)",
                         token);
            return -1;
        }
        uint32_t bit = 0;
        if (strcmp(token + 1, "all") == 0)
            bit = (1u << ATTN_CPU_FEATURE_COUNT) - 1;
        for (int i = 0; i < ATTN_CPU_FEATURE_COUNT && !bit; i++)
            if (strcmp(token + 1, feature_names[i].name) == 0)
                bit = feature_names[i].bit;
        if (!bit) {
            if (msg) {
                char known[256];
                attn_cpu_format((1u << ATTN_CPU_FEATURE_COUNT) - 1, known, sizeof known);
                snprintf(msg, cap, "ATTN_CPU_MASK: unknown feature \"%s\" (known: all %s)",
                         token + 1, known);
            }
            return -1;
        }
        set |= bit;
        if (!end)
            break;
        p = end + 1;
    }
    *hide = with_dependents(set);
    return 0;
}

static uint64_t xgetbv0(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static uint32_t detect_features(void)
{
    unsigned a, b, c, d, max_leaf = __get_cpuid_max(0, NULL);
    uint32_t f = 0;
    if (max_leaf < 1 || !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    if (c & bit_SSE4_2)
        f |= ATTN_CPU_SSE42;
    int osxsave = (c & bit_OSXSAVE) != 0;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    int ymm_saved = (xcr0 & 0x6) == 0x6;         /* SSE and AVX state */
    int zmm_saved = (xcr0 & 0xe6) == 0xe6;       /* plus opmask, ZMM_Hi256, Hi16_ZMM */
    int amx_saved = (xcr0 & 0x60000) == 0x60000; /* XTILECFG and XTILEDATA */
    if (ymm_saved && (c & bit_AVX)) {
        f |= ATTN_CPU_AVX;
        if (c & bit_FMA)
            f |= ATTN_CPU_FMA;
        if (c & bit_F16C)
            f |= ATTN_CPU_F16C;
    }
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        if ((f & ATTN_CPU_AVX) && (b & bit_AVX2))
            f |= ATTN_CPU_AVX2;
        if (zmm_saved && (f & ATTN_CPU_AVX2) && (b & bit_AVX512F)) {
            f |= ATTN_CPU_AVX512F;
            if (b & bit_AVX512DQ)
                f |= ATTN_CPU_AVX512DQ;
            if (b & bit_AVX512BW)
                f |= ATTN_CPU_AVX512BW;
            if (b & bit_AVX512VL)
                f |= ATTN_CPU_AVX512VL;
        }
        if (amx_saved && (d & (1u << 24))) {
            f |= ATTN_CPU_AMX_TILE;
            if (d & (1u << 22))
                f |= ATTN_CPU_AMX_BF16;
            if (d & (1u << 25))
                f |= ATTN_CPU_AMX_INT8;
        }
        unsigned a1, b1, c1, d1;
        __cpuid_count(7, 1, a1, b1, c1, d1);
        (void)b1, (void)c1, (void)d1;
        if ((f & ATTN_CPU_AVX512BW) && (a1 & (1u << 5)))
            f |= ATTN_CPU_AVX512BF16;
    }
    return f;
}

void attn_cpu_decode_signature(uint32_t eax, int *family, int *model, int *stepping)
{
    int base_family = (int)((eax >> 8) & 0xF), base_model = (int)((eax >> 4) & 0xF);
    *family = base_family == 0xF ? base_family + (int)((eax >> 20) & 0xFF) : base_family;
    *model = base_family == 0x6 || base_family == 0xF ? (int)((eax >> 16) & 0xF) << 4 | base_model
                                                      : base_model;
    *stepping = (int)(eax & 0xF);
}

static void read_identity(attn_cpu_info *info)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return;
    memcpy(info->vendor, &b, 4);
    memcpy(info->vendor + 4, &d, 4);
    memcpy(info->vendor + 8, &c, 4);
    info->vendor[12] = '\0';
    if (a < 1 || !__get_cpuid(1, &a, &b, &c, &d))
        return;
    attn_cpu_decode_signature(a, &info->family, &info->model_id, &info->stepping);
}

static void read_brand(char *out, size_t cap)
{
    unsigned regs[12];
    out[0] = '\0';
    if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000004u) /* clang: returns int */
        return;
    for (unsigned i = 0; i < 3; i++)
        __get_cpuid(0x80000002 + i, &regs[4 * i], &regs[4 * i + 1], &regs[4 * i + 2],
                    &regs[4 * i + 3]);
    char brand[49];
    memcpy(brand, regs, 48);
    brand[48] = '\0';
    const char *s = brand;
    while (*s == ' ')
        s++;
    snprintf(out, cap, "%s", s);
}

void attn_cpu_decode_caches(attn_cpuid_fn leaf, void *ctx, int64_t *l1d, int64_t *l2)
{
    *l1d = *l2 = 0;
    for (uint32_t i = 0; i < 16; i++) { /* a handful of levels; 16 bounds a bad table */
        uint32_t r[3];
        leaf(i, r, ctx);
        const uint32_t type = r[0] & 0x1f, level = (r[0] >> 5) & 0x7;
        if (type == 0)
            break;
        /* ways x partitions x line size x sets, each field stored minus one */
        const int64_t bytes = (int64_t)((r[1] >> 22) + 1) * (((r[1] >> 12) & 0x3ff) + 1) *
                              ((r[1] & 0xfff) + 1) * ((int64_t)r[2] + 1);
        if (level == 1 && type == 1) /* data */
            *l1d = bytes;
        else if (level == 2 && (type == 3 || type == 1)) /* unified (or data) */
            *l2 = bytes;
    }
}

static void cpuid_subleaf(uint32_t subleaf, uint32_t regs[3], void *ctx)
{
    unsigned a, b, c, d;
    __cpuid_count(*(const unsigned *)ctx, subleaf, a, b, c, d);
    (void)d;
    regs[0] = a, regs[1] = b, regs[2] = c;
}

static void read_caches(attn_cpu_info *info)
{
    unsigned a, b, c, d, leaf = 0;
    const unsigned max_leaf = (unsigned)__get_cpuid_max(0, NULL);
    const unsigned max_ext = (unsigned)__get_cpuid_max(0x80000000, NULL);
    int topoext =
        max_ext >= 0x80000001u && __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 22));
    if (strcmp(info->vendor, "GenuineIntel") == 0 && max_leaf >= 4)
        leaf = 4;
    else if (topoext && max_ext >= 0x8000001Du)
        leaf = 0x8000001D;
    int64_t l1d = 0, l2 = 0;
    if (leaf)
        attn_cpu_decode_caches(cpuid_subleaf, &leaf, &l1d, &l2);
    /* AMD's older leaves: L1D KiB in 0x80000005 ECX[31:24], L2 in 0x80000006 ECX[31:16]. */
    if (l1d == 0 && max_ext >= 0x80000005u && __get_cpuid(0x80000005, &a, &b, &c, &d))
        l1d = (int64_t)(c >> 24) << 10;
    if (l2 == 0 && max_ext >= 0x80000006u && __get_cpuid(0x80000006, &a, &b, &c, &d))
        l2 = (int64_t)(c >> 16) << 10;
    info->l1d_bytes = l1d > 0 ? l1d : ATTN_CPU_DEFAULT_L1D;
    info->l2_bytes = l2 > 0 ? l2 : ATTN_CPU_DEFAULT_L2;
}

size_t attn_cpu_workspace_limit(long pages, long page_bytes)
{
    const size_t cap = (size_t)64 << 30;
    if (pages <= 0 || page_bytes <= 0)
        return (size_t)4 << 30;
    const size_t half = (size_t)pages / 2 * (size_t)page_bytes;
    return half < cap ? half : cap;
}

/* The only mutable global of the library: written once under pthread_once.
 * Not C11's call_once: glibc's call_once reaches pthread_once internally,
 * past ThreadSanitizer's interceptor, so TSan could not see the ordering
 * and would report every first-call race (tests/test_concurrent.c). */
static attn_cpu_info cpu_info;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

/* Linux (5.16+) keeps AMX tile data off until a process asks for it; the
 * first tile instruction without the grant is a SIGILL. */
static int request_amx_state(void)
{
#if defined(__linux__) && defined(SYS_arch_prctl)
    enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 ? 0 : -1;
#else
    return -1;
#endif
}

uint32_t attn_cpu_grant_amx(uint32_t detected, int granted, char *why, size_t cap)
{
    if (cap)
        why[0] = '\0';
    if (!(detected & ATTN_CPU_AMX_TILE) || granted)
        return detected;
    snprintf(why, cap, "the kernel did not grant AMX tile state");
    return detected & ~(uint32_t)ATTN_CPU_AMX_ALL;
}

void attn_cpu_describe_missing(uint32_t missing, const char *amx_refused, char *buf, size_t cap)
{
    attn_cpu_format(missing, buf, cap);
    if ((missing & ATTN_CPU_AMX_ALL) && amx_refused && amx_refused[0]) {
        const size_t len = strlen(buf);
        if (len < cap)
            snprintf(buf + len, cap - len, " (%s)", amx_refused);
    }
}

static void detect_once(void)
{
    const uint32_t found = detect_features();
    cpu_info.detected =
        attn_cpu_grant_amx(found, !(found & ATTN_CPU_AMX_TILE) || request_amx_state() == 0,
                           cpu_info.amx_refused, sizeof cpu_info.amx_refused);
    read_brand(cpu_info.model, sizeof cpu_info.model);
    read_identity(&cpu_info);
    read_caches(&cpu_info);
    cpu_info.workspace_limit =
        attn_cpu_workspace_limit(sysconf(_SC_PHYS_PAGES), sysconf(_SC_PAGESIZE));
    const char *spec = getenv("ATTN_CPU_MASK");
    uint32_t hide = 0;
    if (attn_cpu_parse_mask(spec, &hide, cpu_info.mask_message, sizeof cpu_info.mask_message) !=
        0) {
        cpu_info.mask_error = 1;
        hide = (1u << ATTN_CPU_FEATURE_COUNT) - 1; /* run nothing that needs a feature */
    }
    cpu_info.hidden = hide;
    cpu_info.features = cpu_info.detected & ~hide;
}

const attn_cpu_info *attn_cpu(void)
{
    pthread_once(&cpu_once, detect_once);
    return &cpu_info;
}
