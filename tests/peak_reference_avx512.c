/* The AVX-512 minimal chain kernel of test_peak_reference: 24 zmm chains,
 * the constants in zmm30/31. Built with -mavx512f (its clobbers name
 * zmm16..31); called only when the CPU has AVX-512F. */
#include "peak_reference_chains.h"

void asm_avx512(long rounds);

void asm_avx512(long rounds)
{
    __asm__ volatile("vbroadcastss %[m], %%zmm30\n\t"
                     "vbroadcastss %[c], %%zmm31\n\t" CHAIN12("vmovaps %%zmm31, %%zmm")
                         CHAIN12_HIGH("vmovaps %%zmm31, %%zmm") "1:\n\t" CHAIN12(
                             "vfmadd132ps %%zmm30, %%zmm31, %%zmm")
                             CHAIN12_HIGH("vfmadd132ps %%zmm30, %%zmm31, %%zmm") "dec %[r]\n\t"
                                                                                 "jnz 1b\n\t"
                                                                                 "vzeroupper\n\t"
                     : [r] "+r"(rounds)
                     : [m] "m"(m_const), [c] "m"(c_const)
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16",
                       "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24",
                       "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "cc");
}
