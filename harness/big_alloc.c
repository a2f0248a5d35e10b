/* madvise needs the POSIX/BSD declarations that strict C11 hides. */
#define _DEFAULT_SOURCE
#include "big_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The huge page size of x86-64: alignment and advice granularity. */
static const size_t huge_bytes = (size_t)2 << 20;

const char *attn_pages_name(int pages)
{
    switch (pages) {
    case ATTN_PAGES_HUGE:
        return "huge";
    case ATTN_PAGES_BASE:
        return "base";
    default:
        return NULL;
    }
}

int attn_pages_parse(const char *s, attn_pages *out)
{
    if (s && strcmp(s, "huge") == 0) {
        *out = ATTN_PAGES_HUGE;
        return 0;
    }
    if (s && strcmp(s, "base") == 0) {
        *out = ATTN_PAGES_BASE;
        return 0;
    }
    return -1;
}

void *attn_big_alloc(size_t bytes, attn_pages pages)
{
    if (bytes < huge_bytes)
        return aligned_alloc(64, bytes ? (bytes + 63) & ~(size_t)63 : 64);
    if (bytes > SIZE_MAX - huge_bytes)
        return NULL;
    const size_t whole = (bytes + huge_bytes - 1) & ~(huge_bytes - 1);
    void *p = aligned_alloc(huge_bytes, whole);
    /* Advice only: a kernel without THP refuses it (EINVAL) and the
     * buffer is as good on base pages. Given before the first touch, so
     * the faults already take huge pages. */
    if (p)
        (void)madvise(p, whole, pages == ATTN_PAGES_HUGE ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return p;
}

void attn_thp_policy(char *out, size_t cap)
{
    if (cap == 0)
        return;
    out[0] = '\0';
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return;
    char line[128];
    if (fgets(line, sizeof line, f)) {
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
        if (open && close) {
            size_t n = (size_t)(close - open - 1);
            if (n >= cap)
                n = cap - 1;
            memcpy(out, open + 1, n);
            out[n] = '\0';
        }
    }
    fclose(f);
}
