/* The CPU identity results are filed under, table-driven: CPUID
 * signatures to display family/model/stepping, family/model to the
 * microarchitecture (with the explicit unknown-famF-modM fallback), and
 * the slug that keeps two machines' results apart. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cpu_features.h"
#include "cpu_uarch.h"
#include "machine.h"

static const struct {
    unsigned eax;
    int family, model, stepping;
} signatures[] = {
    {0x00A00F11, 0x19, 0x01, 1}, /* EPYC 7003 (Milan), Zen 3 */
    {0x00A10F11, 0x19, 0x11, 1}, /* EPYC 9004 (Genoa), Zen 4 */
    {0x00830F10, 0x17, 0x31, 0}, /* EPYC 7002 (Rome), Zen 2 */
    {0x00B00F21, 0x1A, 0x02, 1}, /* EPYC 9005 (Turin), Zen 5 */
    {0x000806F8, 6, 0x8F, 8},    /* Xeon 4th gen (Sapphire Rapids) */
    {0x000606A6, 6, 0x6A, 6},    /* Xeon 3rd gen (Ice Lake-SP) */
    {0x00050657, 6, 0x55, 7},    /* Xeon 2nd gen (Cascade Lake) */
    {0x000306C3, 6, 0x3C, 3},    /* Core 4th gen (Haswell) */
    {0x00000F41, 0xF, 0x04, 1},  /* family 0xF with no extended family */
};

static const struct {
    const char *vendor;
    int family, model;
    const char *uarch;
    int known;
} uarchs[] = {
    {"AuthenticAMD", 25, 1, "zen3", 1},
    {"AuthenticAMD", 25, 33, "zen3", 1},
    {"AuthenticAMD", 25, 80, "zen3", 1},
    {"AuthenticAMD", 25, 17, "zen4", 1},
    {"AuthenticAMD", 25, 97, "zen4", 1},
    {"AuthenticAMD", 25, 160, "zen4", 1},
    {"AuthenticAMD", 23, 1, "zen", 1},
    {"AuthenticAMD", 23, 8, "zen-plus", 1},
    {"AuthenticAMD", 23, 49, "zen2", 1},
    {"AuthenticAMD", 26, 2, "zen5", 1},
    {"GenuineIntel", 6, 143, "sapphirerapids", 1},
    {"GenuineIntel", 6, 207, "emeraldrapids", 1},
    {"GenuineIntel", 6, 106, "icelake-server", 1},
    {"GenuineIntel", 6, 85, "skylake-server", 1},
    {"GenuineIntel", 6, 173, "graniterapids", 1},
    {"GenuineIntel", 6, 151, "alderlake", 1},
    {"AuthenticAMD", 25, 255, "unknown-fam25-mod255", 0},
    {"AuthenticAMD", 99, 1, "unknown-fam99-mod1", 0},
    {"GenuineIntel", 6, 1, "unknown-fam6-mod1", 0},
    {"HygonGenuine", 24, 1, "unknown-fam24-mod1", 0}, /* a Zen licensee: not AMD's table */
    {"", 0, 0, "unknown-fam0-mod0", 0},
};

int main(void)
{
    check_tally t = {0, 0};
    for (size_t i = 0; i < sizeof signatures / sizeof signatures[0]; i++) {
        int f, m, s;
        attn_cpu_decode_signature(signatures[i].eax, &f, &m, &s);
        CHECK(&t,
              f == signatures[i].family && m == signatures[i].model && s == signatures[i].stepping,
              "eax %08x: family %d model %d stepping %d", signatures[i].eax, f, m, s);
    }
    for (size_t i = 0; i < sizeof uarchs / sizeof uarchs[0]; i++) {
        char name[40];
        int known =
            attn_cpu_uarch(uarchs[i].vendor, uarchs[i].family, uarchs[i].model, name, sizeof name);
        CHECK(&t, strcmp(name, uarchs[i].uarch) == 0 && known == uarchs[i].known,
              "%s %d/%d: '%s' (known %d), want '%s'", uarchs[i].vendor, uarchs[i].family,
              uarchs[i].model, name, known, uarchs[i].uarch);
    }
    CHECK(&t, strcmp(attn_cpu_vendor_short("HygonGenuine"), "unknown") == 0, "vendor fallback");
    /* CPUID leaf 7 to the bits the check reads: only those five. */
    CHECK(&t,
          attn_cpu_uarch_decode_leaf7(1u << 22 | 1u << 23 | 1u << 24, 1u << 5 | 1u << 21) ==
              (ATTN_UARCH_AMX_BF16 | ATTN_UARCH_AVX512_FP16 | ATTN_UARCH_AMX_TILE |
               ATTN_UARCH_AVX512_BF16 | ATTN_UARCH_AMX_FP16),
          "leaf 7: every bit");
    CHECK(&t,
          attn_cpu_uarch_decode_leaf7(~(1u << 22 | 1u << 23 | 1u << 24), ~(1u << 5 | 1u << 21)) ==
              0,
          "leaf 7: other bits ignored");
    /* A hypervisor's model number against the features the CPU reports. */
    enum {
        AMX = ATTN_UARCH_AMX_TILE | ATTN_UARCH_AMX_BF16,
        BF16 = ATTN_UARCH_AVX512_BF16,
        FP16 = ATTN_UARCH_AVX512_FP16,
        SPR = AMX | BF16 | FP16,
        GNR = SPR | ATTN_UARCH_AMX_FP16,
    };
    const struct {
        const char *vendor;
        int family, model;
        uint32_t features;
        const char *uarch;
        const char *note; /* what it must contain; NULL: no note */
    } checked[] = {
        /* this VM: a Sapphire Rapids reporting Rocket Lake's model */
        {"GenuineIntel", 6, 167, SPR, "sapphirerapids",
         "CPUID's model 167 says rocketlake, which has no AMX: named from the features"},
        {"GenuineIntel", 6, 167, ATTN_UARCH_AMX_TILE, "sapphirerapids", "has no AMX:"},
        {"GenuineIntel", 6, 167, GNR, "graniterapids", "says rocketlake, which has no AMX:"},
        /* AMX hidden by the hypervisor, its AVX-512 extensions passed */
        {"GenuineIntel", 6, 167, BF16 | FP16, "sapphirerapids", "which has no AVX512_FP16:"},
        {"GenuineIntel", 6, 106, BF16, "skylake-server",
         "says icelake-server, which has no AVX512_BF16"},
        /* a Granite Rapids reporting Sapphire Rapids' model */
        {"GenuineIntel", 6, 143, GNR, "graniterapids",
         "says sapphirerapids, which has no AMX-FP16"},
        /* what each uarch can have stands */
        {"GenuineIntel", 6, 167, 0, "rocketlake", NULL}, /* a real Rocket Lake */
        {"GenuineIntel", 6, 143, SPR, "sapphirerapids", NULL},
        {"GenuineIntel", 6, 207, SPR, "emeraldrapids", NULL},
        {"GenuineIntel", 6, 173, GNR, "graniterapids", NULL},
        {"GenuineIntel", 6, 85, BF16, "skylake-server", NULL},    /* Cooper Lake */
        {"GenuineIntel", 6, 151, BF16 | FP16, "alderlake", NULL}, /* AVX-512 unlocked */
        {"GenuineIntel", 6, 106, 0, "icelake-server", NULL},
        /* AMD (Zen 4 has AVX512_BF16), other vendors, unknown models: never renamed */
        {"AuthenticAMD", 25, 17, BF16, "zen4", NULL},
        {"AuthenticAMD", 25, 1, GNR, "zen3", NULL},
        {"HygonGenuine", 24, 1, GNR, "unknown-fam24-mod1", NULL},
        {"GenuineIntel", 6, 250, GNR, "unknown-fam6-mod250", NULL}, /* no claim to check */
    };
    for (size_t i = 0; i < sizeof checked / sizeof checked[0]; i++) {
        char name[40], note[112];
        attn_cpu_uarch_checked(checked[i].vendor, checked[i].family, checked[i].model,
                               checked[i].features, name, sizeof name, note, sizeof note);
        const int note_ok =
            checked[i].note ? strstr(note, checked[i].note) != NULL : note[0] == '\0';
        CHECK(&t, strcmp(name, checked[i].uarch) == 0 && note_ok,
              "%s %d/%d features %#x: '%s' ('%s'), want '%s' ('%s')", checked[i].vendor,
              checked[i].family, checked[i].model, checked[i].features, name, note,
              checked[i].uarch, checked[i].note ? checked[i].note : "");
    }
    {
        char name[40];
        attn_cpu_uarch_checked("GenuineIntel", 6, 167, SPR, name, sizeof name, NULL, 0);
        CHECK(&t, strcmp(name, "sapphirerapids") == 0, "no note buffer: '%s'", name);
    }
    char slug[96];
    attn_machine_slug("AuthenticAMD", "zen3", "avx2", 2, slug, sizeof slug);
    CHECK(&t, strcmp(slug, "amd-zen3-avx2-2c") == 0, "slug %s", slug);
    attn_machine_slug("GenuineIntel", "sapphirerapids", "avx512", 64, slug, sizeof slug);
    CHECK(&t, strcmp(slug, "intel-sapphirerapids-avx512-64c") == 0, "slug %s", slug);
    /* This machine: its slug names what list says, and decodes consistently. */
    attn_machine m;
    attn_machine_read(&m);
    char want[96], uarch[40];
    char note[112];
    attn_cpu_uarch_checked(m.vendor, m.family, m.model_id, attn_cpu_uarch_features(), uarch,
                           sizeof uarch, note, sizeof note);
    attn_machine_slug(m.vendor, uarch, m.isa, m.cores, want, sizeof want);
    CHECK(&t,
          strcmp(m.slug, want) == 0 && strstr(m.slug, m.uarch) && strcmp(note, m.uarch_note) == 0,
          "this machine: %s", m.slug);
    printf("this machine: %s (%s family %d model %d stepping %d%s%s)\n", m.slug, m.vendor, m.family,
           m.model_id, m.stepping, m.uarch_note[0] ? "; " : "", m.uarch_note);
    return check_report("cpu_uarch", &t);
}
