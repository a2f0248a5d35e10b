/* The AVX-512 online-softmax step of block_softmax.h (-mavx512f -mfma):
 * 16 lanes, the hidden keys by k-mask. */
#include "vec_avx512.h"

#include "block_softmax_vec.h"

int attn_block_softmax_avx512(const flash_tile *t, int32_t j0, int32_t nb, int masked, float *alpha)
{
    return block_softmax_vec(t, j0, nb, masked, alpha);
}
