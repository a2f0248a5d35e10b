/* The bf16 roofs: vdpbf16ps (AVX512_BF16) and AMX tdpbf16ps, each the best
 * of its kernels (peak_avx512bf16.c, peak_amx.c). A CPU without them, or a
 * kernel that refused AMX tile state, is a visible skip with the reason. */
#include <math.h>
#include <stdio.h>

#include "cpu_features.h"
#include "peak.h"
#include "peak_kernels.h"

static const char *const bf16_names[ATTN_BF16_COUNT] = {"avx512_bf16", "amx_bf16"};
static const uint32_t bf16_features[ATTN_BF16_COUNT] = {ATTN_CPU_AVX512F | ATTN_CPU_AVX512BF16,
                                                        ATTN_CPU_AMX_TILE | ATTN_CPU_AMX_BF16};

const char *attn_bf16_name(attn_bf16_kind kind)
{
    return kind >= 0 && kind < ATTN_BF16_COUNT ? bf16_names[kind] : "?";
}

int attn_bf16_available(attn_bf16_kind kind, char *why, size_t cap)
{
    if (kind < 0 || kind >= ATTN_BF16_COUNT)
        return 0;
    const attn_cpu_info *cpu = attn_cpu();
    uint32_t missing = bf16_features[kind] & ~cpu->features;
    if (!missing)
        return 1;
    if (why && cap) {
        if (kind == ATTN_BF16_AMX && cpu->amx_refused[0]) {
            snprintf(why, cap, "%s", cpu->amx_refused);
        } else {
            char names[128];
            attn_cpu_format(missing, names, sizeof names);
            snprintf(why, cap, "needs %.100s", names);
        }
    }
    return 0;
}

double attn_peak_measure_bf16(attn_bf16_kind kind, int threads, int reps, double seconds)
{
    if (!attn_bf16_available(kind, NULL, 0) || threads < 1)
        return NAN;
    const attn_peak_fma_kernel *k =
        kind == ATTN_BF16_AMX ? attn_peak_bf16_amx_kernels : attn_peak_bf16_avx512_kernels;
    double best = NAN;
    for (; k->chains; k++) {
        double g = attn_peak_measure_kernel(k, threads, reps, seconds);
        if (!(g <= best))
            best = g;
    }
    return best;
}
