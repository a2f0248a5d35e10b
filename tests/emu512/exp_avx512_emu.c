/* impls/exp_avx512.c on SIMDe (simde_avx512.h). */
#include "simde_avx512.h"

#include "exp_avx512.c"
