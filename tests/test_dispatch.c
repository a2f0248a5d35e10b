/* Dispatch under a forced feature mask: run with ATTN_CPU_MASK set by ctest
 * (see tests/CMakeLists.txt). A variant needing a hidden feature must be
 * reported unsupported and refused with ATTN_ENOTSUP without touching O;
 * every other variant the CPU has must still run (each in its default
 * types: default_types.h). With a malformed mask
 * (EXPECT_MASK_ERROR=1) every call is refused with ATTN_EINVAL. */
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "check.h"
#include "cpu_features.h"
#include "default_types.h"
#include "variant.h"

int main(void)
{
    check_tally t = {0};
    const attn_cpu_info *cpu = attn_cpu();
    const char *spec = getenv("ATTN_CPU_MASK");
    int expect_error = getenv("EXPECT_MASK_ERROR") && atoi(getenv("EXPECT_MASK_ERROR"));
    CHECK(&t, cpu->mask_error == expect_error, "mask '%s': error %d, message '%s'",
          spec ? spec : "", cpu->mask_error, cpu->mask_message);
    CHECK(&t, (cpu->features & ~cpu->detected) == 0, "features beyond the detected ones");
    CHECK(&t, (cpu->features & cpu->hidden) == 0, "a hidden feature is still visible");

    attn_shape s = {1, 2, 1, 5, 7, 3, 4, 1, 0.0f};
    float q[2 * 5 * 3], k[7 * 3], v[7 * 4], o[2 * 5 * 4];
    for (int i = 0; i < 30; i++)
        q[i] = (float)i / 30;
    for (int i = 0; i < 21; i++)
        k[i] = (float)(21 - i) / 21;
    for (int i = 0; i < 28; i++)
        v[i] = (float)i;
    int ran = 0;
    for (int i = 0; i < attn_variant_table_size; i++) {
        const attn_variant *var = attn_variant_table[i];
        int hidden_need = (var->required_features & cpu->hidden & cpu->detected) != 0;
        int lacking = (var->required_features & ~cpu->features) != 0;
        for (int e = 0; e < 40; e++)
            o[e] = -1.0f;
        int sup = attn_variant_supported(var->name);
        int rc = run_default_types(var->name, &s, q, k, v, o);
        if (expect_error) {
            CHECK(&t, sup == ATTN_EINVAL && rc == ATTN_EINVAL, "%s: sup %d rc %d", var->name, sup,
                  rc);
            continue;
        }
        if (lacking) {
            CHECK(&t, sup == 0, "%s needs a missing feature but supported() = %d", var->name, sup);
            CHECK(&t, rc == ATTN_ENOTSUP, "%s: attn_run returned %d, want ENOTSUP", var->name, rc);
            CHECK(&t, o[0] == -1.0f && o[39] == -1.0f, "%s wrote O while unsupported", var->name);
        } else {
            CHECK(&t, !hidden_need, "%s needs a hidden feature but is runnable", var->name);
            CHECK(&t, sup == 1 && rc == ATTN_OK, "%s: sup %d rc %d", var->name, sup, rc);
            ran++;
        }
    }
    if (!expect_error)
        CHECK(&t, ran >= 1, "no variant ran (naive needs nothing)");
    return check_report("dispatch", &t);
}
