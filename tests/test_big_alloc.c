/* harness/big_alloc.c: a big buffer carries the advice asked for (the
 * kernel lists it in /proc/self/smaps: VmFlags "hg" for MADV_HUGEPAGE,
 * "nh" for MADV_NOHUGEPAGE), a small one is only aligned, the names parse
 * both ways, and the THP policy reads as one of the kernel's words. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "big_alloc.h"
#include "check.h"

/* The VmFlags line of the mapping that holds p, into flags; 0 when found. */
static int vm_flags_of(const void *p, char *flags, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int inside = 0, found = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, cap, "%s", line + 8);
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

/* 1 when the two-letter flag is among the space-separated flags. */
static int has_flag(const char *flags, const char *flag)
{
    char padded[520];
    snprintf(padded, sizeof padded, " %s ", flags);
    for (char *c = padded; *c; c++)
        if (*c == '\n')
            *c = ' ';
    char want[8];
    snprintf(want, sizeof want, " %s ", flag);
    return strstr(padded, want) != NULL;
}

int main(void)
{
    check_tally t = {0, 0};
    attn_pages p;
    CHECK(&t, attn_pages_parse("huge", &p) == 0 && p == ATTN_PAGES_HUGE, "huge parses");
    CHECK(&t, attn_pages_parse("base", &p) == 0 && p == ATTN_PAGES_BASE, "base parses");
    CHECK(&t, attn_pages_parse("4k", &p) != 0 && attn_pages_parse(NULL, &p) != 0,
          "anything else refused");
    CHECK(&t,
          strcmp(attn_pages_name(ATTN_PAGES_HUGE), "huge") == 0 &&
              strcmp(attn_pages_name(ATTN_PAGES_BASE), "base") == 0 && attn_pages_name(7) == NULL,
          "names");

    char policy[16];
    attn_thp_policy(policy, sizeof policy);
    const int thp = policy[0] != '\0';
    CHECK(&t,
          !thp || strcmp(policy, "always") == 0 || strcmp(policy, "madvise") == 0 ||
              strcmp(policy, "never") == 0,
          "THP policy '%s'", policy);
    printf("THP policy: %s\n", thp ? policy : "(no /sys/kernel/mm/transparent_hugepage)");

    char *small = attn_big_alloc(1000, ATTN_PAGES_HUGE);
    CHECK(&t, small && (uintptr_t)small % 64 == 0, "a small buffer is 64-byte aligned");
    if (small)
        memset(small, 1, 1000);
    free(small);
    char *none = attn_big_alloc(0, ATTN_PAGES_BASE);
    CHECK(&t, none != NULL, "0 bytes is still a buffer");
    free(none);

    const size_t bytes = (size_t)5 << 20; /* rounded up to 6 MiB */
    const attn_pages kinds[2] = {ATTN_PAGES_HUGE, ATTN_PAGES_BASE};
    const char *flag[2] = {"hg", "nh"}, *other[2] = {"nh", "hg"};
    for (int k = 0; k < 2; k++) {
        char *b = attn_big_alloc(bytes, kinds[k]);
        CHECK(&t, b && (uintptr_t)b % ((size_t)2 << 20) == 0, "%s: 2 MiB aligned",
              attn_pages_name(kinds[k]));
        if (!b)
            continue;
        memset(b, 0, bytes);
        char flags[512] = "";
        int found = vm_flags_of(b + bytes - 1, flags, sizeof flags);
        if (thp) {
            CHECK(&t, found == 0, "%s: no mapping for the buffer in /proc/self/smaps",
                  attn_pages_name(kinds[k]));
            CHECK(&t, found != 0 || (has_flag(flags, flag[k]) && !has_flag(flags, other[k])),
                  "%s: VmFlags want %s:%s", attn_pages_name(kinds[k]), flag[k], flags);
        }
        free(b);
    }
    return check_report("big_alloc", &t);
}
