/* A deliberately wrong impls/visibility.c: with causal masking every row
 * sees one key too many. Linked into attnbench_wrong_visibility ahead of the
 * library archive, so the archive's visibility.o is never pulled in and
 * every variant that uses the shared helper computes with this one. The
 * reference derives visibility on its own, so verify must fail them. */
#include "problem.h"

int32_t attn_keys_seen(const attn_shape *s, int32_t i)
{
    if (!s->causal)
        return s->n_kv;
    int64_t n = (int64_t)i + s->n_kv - s->n_q + 2; /* the bug: + 2, not + 1 */
    return n < 0 ? 0 : (n > s->n_kv ? s->n_kv : (int32_t)n);
}
