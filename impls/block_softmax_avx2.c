/* The AVX2 online-softmax step of block_softmax.h (-mavx2 -mfma). */
#include "vec_avx2.h"

#include "block_softmax_vec.h"

int attn_block_softmax_avx2(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha)
{
    return block_softmax_vec(t, j0, nb, masked, alpha);
}
