/* ATTN_CPU_MASK's grammar, parsed directly (no environment needed). */
#include <string.h>

#include "check.h"
#include "cpu_features.h"

int main(void)
{
    check_tally t = {0};
    uint32_t hide = 0;
    char msg[200];
    CHECK(&t, attn_cpu_parse_mask("", &hide, msg, sizeof msg) == 0 && hide == 0, "empty");
    CHECK(&t, attn_cpu_parse_mask(NULL, &hide, msg, sizeof msg) == 0 && hide == 0, "NULL");
    CHECK(&t, attn_cpu_parse_mask("-avx512f", &hide, msg, sizeof msg) == 0, "-avx512f");
    CHECK(&t, (hide & ATTN_CPU_AVX512F) && (hide & ATTN_CPU_AVX512BW) && !(hide & ATTN_CPU_AVX2),
          "-avx512f hides the AVX-512 family only: %#x", hide);
    CHECK(&t, attn_cpu_parse_mask("-avx2", &hide, msg, sizeof msg) == 0, "-avx2");
    CHECK(&t, (hide & ATTN_CPU_AVX2) && (hide & ATTN_CPU_AVX512F) && !(hide & ATTN_CPU_FMA),
          "-avx2 also hides AVX-512: %#x", hide);
    CHECK(&t, attn_cpu_parse_mask("-avx", &hide, msg, sizeof msg) == 0, "-avx");
    CHECK(&t, (hide & ATTN_CPU_FMA) && (hide & ATTN_CPU_AVX2) && (hide & ATTN_CPU_AVX512VL),
          "-avx hides what builds on it: %#x", hide);
    CHECK(&t, attn_cpu_parse_mask("-avx2,-amx_tile", &hide, msg, sizeof msg) == 0, "list");
    CHECK(&t, (hide & ATTN_CPU_AMX_BF16) && (hide & ATTN_CPU_AVX2), "list hides both: %#x", hide);
    CHECK(&t, attn_cpu_parse_mask("-all", &hide, msg, sizeof msg) == 0, "-all");
    CHECK(&t, hide == (1u << ATTN_CPU_FEATURE_COUNT) - 1, "-all hides everything: %#x", hide);
    const char *bad[] = {"avx512f", "-avx513",    "-avx2,", ",-avx2",     "-",
                         "+avx2",   "-avx2;-fma", "-AVX2x", "-avx2,,-fma"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(&t, attn_cpu_parse_mask(bad[i], &hide, msg, sizeof msg) != 0, "accepted '%s'",
              bad[i]);
        CHECK(&t, strstr(msg, "ATTN_CPU_MASK") != NULL, "message '%s' for '%s'", msg, bad[i]);
    }
    char names[256];
    attn_cpu_format(ATTN_CPU_AVX2 | ATTN_CPU_AVX512F, names, sizeof names);
    CHECK(&t, strcmp(names, "avx2 avx512f") == 0, "format: '%s'", names);
    /* Linux refusing the AMX tile state: the bits go, the reason stays. */
    char why[96];
    const uint32_t amx = ATTN_CPU_AVX512F | ATTN_CPU_AMX_ALL;
    CHECK(&t, attn_cpu_grant_amx(amx, 0, why, sizeof why) == ATTN_CPU_AVX512F,
          "a refusal clears the AMX bits");
    CHECK(&t, strcmp(why, "the kernel did not grant AMX tile state") == 0, "why: '%s'", why);
    CHECK(&t, attn_cpu_grant_amx(amx, 1, why, sizeof why) == amx && why[0] == '\0',
          "a grant keeps them");
    CHECK(&t, attn_cpu_grant_amx(ATTN_CPU_AVX2, 0, why, sizeof why) == ATTN_CPU_AVX2 && !why[0],
          "no AMX, nothing to refuse");
    attn_cpu_describe_missing(ATTN_CPU_AMX_TILE | ATTN_CPU_AMX_BF16,
                              "the kernel did not grant AMX tile state", names, sizeof names);
    CHECK(&t, strcmp(names, "amx_tile amx_bf16 (the kernel did not grant AMX tile state)") == 0,
          "a skip for refused AMX says so: '%s'", names);
    attn_cpu_describe_missing(ATTN_CPU_AVX512BF16, "the kernel did not grant AMX tile state", names,
                              sizeof names);
    CHECK(&t, strcmp(names, "avx512_bf16") == 0, "the refusal only where AMX is missing: '%s'",
          names);
    attn_cpu_describe_missing(ATTN_CPU_AMX_BF16, "", names, sizeof names);
    CHECK(&t, strcmp(names, "amx_bf16") == 0, "hidden by a mask: '%s'", names);
    return check_report("cpu_mask", &t);
}
