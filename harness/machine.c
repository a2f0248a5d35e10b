#include "machine.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu_features.h"

/* Words that say nothing about which CPU this is. */
static const char *const noise[] = {"(r)",    "(tm)",     "processor", "cpu", "with",
                                    "radeon", "graphics", "core(tm)",  "0",   "n-core"};

static int is_noise(const char *word)
{
    for (size_t i = 0; i < sizeof noise / sizeof noise[0]; i++)
        if (strcmp(word, noise[i]) == 0)
            return 1;
    return strchr(word, '@') != NULL || strstr(word, "ghz") != NULL;
}

void attn_machine_slug(const char *model, int cores, char *out, size_t cap)
{
    char lower[128];
    size_t len = 0, n = 0;
    for (; model[n] && n + 1 < sizeof lower; n++)
        lower[n] = (char)tolower((unsigned char)model[n]);
    lower[n] = '\0';
    /* Split "(r)" and "(tm)" off the words they stick to. */
    char spaced[256];
    size_t m = 0;
    for (size_t i = 0; lower[i] && m + 3 < sizeof spaced; i++) {
        if (lower[i] == '(')
            spaced[m++] = ' ';
        spaced[m++] = lower[i];
        if (lower[i] == ')')
            spaced[m++] = ' ';
    }
    spaced[m] = '\0';
    out[0] = '\0';
    int stop = 0;
    for (char *save = NULL, *w = strtok_r(spaced, " ", &save); w && !stop;
         w = strtok_r(NULL, " ", &save)) {
        if (strchr(w, '@')) {
            stop = 1; /* the clock speed and what follows */
            continue;
        }
        if (is_noise(w))
            continue;
        for (char *c = w; *c; c++)
            if (!isalnum((unsigned char)*c))
                *c = '-';
        int k = snprintf(out + len, cap - len, "%s%s", len ? "-" : "", w);
        if (k < 0 || (size_t)k >= cap - len)
            break;
        len += (size_t)k;
    }
    if (len == 0)
        len = (size_t)snprintf(out, cap, "unknown-cpu");
    if (len < cap)
        snprintf(out + len, cap - len, "-%dc", cores);
    /* Collapse repeated dashes left by punctuation. */
    char *dst = out;
    for (const char *src = out; *src; src++)
        if (!(*src == '-' && (dst == out || dst[-1] == '-')))
            *dst++ = *src;
    *dst = '\0';
}

void attn_machine_read(attn_machine *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->model, sizeof m->model, "%s", attn_cpu()->model);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = cores > 0 ? (int)cores : 1;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    m->l1d_bytes = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    m->l2_bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    m->l3_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (m->l1d_bytes < 0)
        m->l1d_bytes = 0;
    if (m->l2_bytes < 0)
        m->l2_bytes = 0;
    if (m->l3_bytes < 0)
        m->l3_bytes = 0;
    attn_machine_slug(m->model, m->cores, m->slug, sizeof m->slug);
}
