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
    return check_report("cpu_mask", &t);
}
