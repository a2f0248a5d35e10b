/* The family/model table. Sources: AMD's Processor Programming Reference
 * per family (17h, 19h, 1Ah) and Intel's SDM vol. 4 "Processor families"
 * table; ranges where AMD assigns model blocks per product line. */
#include "cpu_uarch.h"

#include <cpuid.h>
#include <stdio.h>
#include <string.h>

typedef struct uarch_range {
    const char *vendor; /* "amd" or "intel" */
    int family, model_lo, model_hi;
    const char *name;
} uarch_range;

static const uarch_range table[] = {
    /* AMD family 17h: Zen, Zen+ and Zen 2 */
    {"amd", 0x17, 0x00, 0x07, "zen"},
    {"amd", 0x17, 0x08, 0x0F, "zen-plus"},
    {"amd", 0x17, 0x10, 0x17, "zen"},
    {"amd", 0x17, 0x18, 0x1F, "zen-plus"},
    {"amd", 0x17, 0x20, 0x2F, "zen"},
    {"amd", 0x17, 0x30, 0xAF, "zen2"},
    /* AMD family 19h: Zen 3 (Milan 01h, Vermeer 21h, Rembrandt 44h, Cezanne
     * 50h) and Zen 4 (Genoa 11h, Raphael 61h, Phoenix 74h/78h, Bergamo A0h) */
    {"amd", 0x19, 0x00, 0x0F, "zen3"},
    {"amd", 0x19, 0x10, 0x1F, "zen4"},
    {"amd", 0x19, 0x20, 0x5F, "zen3"},
    {"amd", 0x19, 0x60, 0xAF, "zen4"},
    /* AMD family 1Ah: Zen 5 (Turin 02h/11h, Strix 24h, Granite Ridge 44h) */
    {"amd", 0x1A, 0x00, 0x7F, "zen5"},
    /* Intel family 6, servers first */
    {"intel", 6, 0x3F, 0x3F, "haswell-server"},
    {"intel", 6, 0x4F, 0x4F, "broadwell-server"},
    {"intel", 6, 0x55, 0x55, "skylake-server"}, /* also Cascade/Cooper Lake: stepping tells */
    {"intel", 6, 0x6A, 0x6A, "icelake-server"},
    {"intel", 6, 0x6C, 0x6C, "icelake-server"},
    {"intel", 6, 0x8F, 0x8F, "sapphirerapids"},
    {"intel", 6, 0xCF, 0xCF, "emeraldrapids"},
    {"intel", 6, 0xAD, 0xAE, "graniterapids"},
    {"intel", 6, 0xAF, 0xAF, "sierraforest"},
    {"intel", 6, 0x3C, 0x3C, "haswell"},
    {"intel", 6, 0x45, 0x46, "haswell"},
    {"intel", 6, 0x3D, 0x3D, "broadwell"},
    {"intel", 6, 0x47, 0x47, "broadwell"},
    {"intel", 6, 0x4E, 0x4E, "skylake"},
    {"intel", 6, 0x5E, 0x5E, "skylake"},
    {"intel", 6, 0x8E, 0x8E, "kabylake"},
    {"intel", 6, 0x9E, 0x9E, "coffeelake"},
    {"intel", 6, 0xA5, 0xA5, "cometlake"},
    {"intel", 6, 0x7D, 0x7E, "icelake"},
    {"intel", 6, 0x8C, 0x8D, "tigerlake"},
    {"intel", 6, 0xA7, 0xA7, "rocketlake"},
    {"intel", 6, 0x97, 0x97, "alderlake"},
    {"intel", 6, 0x9A, 0x9A, "alderlake"},
    {"intel", 6, 0xB7, 0xB7, "raptorlake"},
    {"intel", 6, 0xBA, 0xBA, "raptorlake"},
    {"intel", 6, 0xBF, 0xBF, "raptorlake"},
    {"intel", 6, 0xAA, 0xAC, "meteorlake"},
    {"intel", 6, 0xBD, 0xBD, "lunarlake"},
    {"intel", 6, 0xC5, 0xC6, "arrowlake"},
};

const char *attn_cpu_vendor_short(const char *vendor)
{
    if (vendor && strcmp(vendor, "AuthenticAMD") == 0)
        return "amd";
    if (vendor && strcmp(vendor, "GenuineIntel") == 0)
        return "intel";
    return "unknown";
}

int attn_cpu_uarch(const char *vendor, int family, int model, char *out, size_t cap)
{
    const char *v = attn_cpu_vendor_short(vendor);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const uarch_range *r = &table[i];
        if (strcmp(r->vendor, v) == 0 && r->family == family && model >= r->model_lo &&
            model <= r->model_hi) {
            snprintf(out, cap, "%s", r->name);
            return 1;
        }
    }
    snprintf(out, cap, "unknown-fam%d-mod%d", family, model);
    return 0;
}

uint32_t attn_cpu_uarch_decode_leaf7(uint32_t edx0, uint32_t eax1)
{
    uint32_t f = 0;
    if (edx0 & (1u << 24))
        f |= ATTN_UARCH_AMX_TILE;
    if (edx0 & (1u << 22))
        f |= ATTN_UARCH_AMX_BF16;
    if (edx0 & (1u << 23))
        f |= ATTN_UARCH_AVX512_FP16;
    if (eax1 & (1u << 5))
        f |= ATTN_UARCH_AVX512_BF16;
    if (eax1 & (1u << 21))
        f |= ATTN_UARCH_AMX_FP16;
    return f;
}

uint32_t attn_cpu_uarch_features(void)
{
    unsigned a, b, c, d, eax1 = 0;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    if (a >= 1) { /* leaf 7's EAX: its highest subleaf */
        unsigned b1, c1, d1;
        __cpuid_count(7, 1, eax1, b1, c1, d1);
        (void)b1, (void)c1, (void)d1;
    }
    return attn_cpu_uarch_decode_leaf7(d, eax1);
}

/* Each feature that tells Intel uarchs apart, the table's uarchs that can
 * have it, and what a CPU that has it is named when the table's uarch
 * cannot: checked in order, the first contradicted feature names the CPU
 * and the note. */
static const struct {
    uint32_t bits; /* any of them */
    const char *what;
    const char *can_have[6];
    const char *named;
} feature_uarchs[] = {
    {ATTN_UARCH_AMX_TILE | ATTN_UARCH_AMX_BF16,
     "AMX",
     {"sapphirerapids", "emeraldrapids", "graniterapids"},
     "sapphirerapids"},
    {ATTN_UARCH_AMX_FP16, "AMX-FP16", {"graniterapids"}, "graniterapids"},
    {ATTN_UARCH_AVX512_FP16,
     "AVX512_FP16",
     {"sapphirerapids", "emeraldrapids", "graniterapids", "alderlake"},
     "sapphirerapids"},
    {ATTN_UARCH_AVX512_BF16,
     "AVX512_BF16",
     {"sapphirerapids", "emeraldrapids", "graniterapids", "skylake-server", "alderlake"},
     "skylake-server"},
};

/* The uarch the features name (the table above's order of precedence). */
static const char *named_from(uint32_t features)
{
    if (features & ATTN_UARCH_AMX_FP16)
        return "graniterapids";
    for (size_t i = 0; i < sizeof feature_uarchs / sizeof feature_uarchs[0]; i++)
        if (features & feature_uarchs[i].bits)
            return feature_uarchs[i].named;
    return NULL;
}

static int can_have(const char *const *uarchs, size_t n, const char *uarch)
{
    for (size_t i = 0; i < n && uarchs[i]; i++)
        if (strcmp(uarchs[i], uarch) == 0)
            return 1;
    return 0;
}

int attn_cpu_uarch_checked(const char *vendor, int family, int model, uint32_t features, char *out,
                           size_t cap, char *note, size_t note_cap)
{
    const int known = attn_cpu_uarch(vendor, family, model, out, cap);
    if (note_cap)
        note[0] = '\0';
    if (!known || strcmp(attn_cpu_vendor_short(vendor), "intel") != 0)
        return known;
    for (size_t i = 0; i < sizeof feature_uarchs / sizeof feature_uarchs[0]; i++) {
        const size_t n = sizeof feature_uarchs[i].can_have / sizeof feature_uarchs[i].can_have[0];
        if (!(features & feature_uarchs[i].bits) || can_have(feature_uarchs[i].can_have, n, out))
            continue;
        const char *named = named_from(features);
        if (note_cap)
            snprintf(note, note_cap,
                     "CPUID's model %d says %s, which has no %s: named from the features", model,
                     out, feature_uarchs[i].what);
        snprintf(out, cap, "%s", named);
        break;
    }
    return known;
}
