/* Big buffers (inputs, their rotated copies, workspaces, the roof's
 * arrays) and the pages under them. A decode kernel streams hundreds of
 * MiB; on 4 KiB pages that is a TLB miss every 4 KiB of each stream, and
 * both the read roof and the kernels lose to it, by different amounts
 * (on a Sapphire Rapids, 2 threads: the read roof 1.08x, avx512's GQA
 * decode 1.29x, measured with huge pages against without). NumPy asks the
 * kernel for transparent huge pages for every array of 4 MiB or more, and
 * the peers' inputs are NumPy arrays: so the suite's own buffers ask for
 * them too (madvise MADV_HUGEPAGE), and a run says which pages it used
 * (the roof's and the rows' must be the same: `--pages`). Whether the
 * kernel grants them is its policy (attn_thp_policy): "never" gives base
 * pages whatever was asked. */
#ifndef ATTN_BIG_ALLOC_H
#define ATTN_BIG_ALLOC_H

#include <stddef.h>

typedef enum attn_pages {
    ATTN_PAGES_HUGE = 0, /* madvise(MADV_HUGEPAGE) on buffers of 2 MiB or more (the default) */
    ATTN_PAGES_BASE = 1  /* madvise(MADV_NOHUGEPAGE): 4 KiB pages even under THP "always" */
} attn_pages;

/* "huge", "base"; NULL for a value outside the enum. */
const char *attn_pages_name(int pages);
/* 0 and *out for "huge" or "base"; -1 for anything else. */
int attn_pages_parse(const char *s, attn_pages *out);

/* At least `bytes` (0 is taken as 64), 64-byte aligned; 2 MiB aligned and
 * advised `pages` when 2 MiB or more. NULL when out of memory. Free with
 * free(). */
void *attn_big_alloc(size_t bytes, attn_pages pages);

/* The kernel's transparent-huge-page policy for anonymous memory, the
 * bracketed word of /sys/kernel/mm/transparent_hugepage/enabled
 * ("always", "madvise", "never"), or "" when it cannot be read. */
void attn_thp_policy(char *out, size_t cap);

#endif
