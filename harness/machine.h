/* Facts about the machine for reports: model slug, cores, cache sizes. */
#ifndef ATTN_MACHINE_H
#define ATTN_MACHINE_H

#include <stddef.h>

typedef struct attn_machine {
    char model[64];
    char slug[80]; /* e.g. "intel-xeon-2c": lower-case model words + core count */
    int cores;     /* online logical CPUs */
    long l1d_bytes, l2_bytes, l3_bytes; /* 0 when unknown */
} attn_machine;

void attn_machine_read(attn_machine *m);

/* Lower-case, dash-separated model name without vendor noise, plus "-<n>c". */
void attn_machine_slug(const char *model, int cores, char *out, size_t cap);

#endif
