/* Which keys a query row sees, for every variant that does not compute
 * it its own way. Alone in this file on purpose: test wrong_visibility
 * links an off-by-one version in its place and checks that the reference,
 * which computes visibility on its own, fails the variants using it. */
#include "problem.h"

int32_t attn_keys_seen(const attn_shape *s, int32_t i)
{
    if (!s->causal)
        return s->n_kv;
    int64_t n = (int64_t)i + s->n_kv - s->n_q + 1;
    return n < 0 ? 0 : (n > s->n_kv ? s->n_kv : (int32_t)n);
}
