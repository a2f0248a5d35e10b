/* What matrix_plan.c and matrix_plan_file.c share, and nobody else. */
#ifndef ATTN_MATRIX_PLAN_INTERNAL_H
#define ATTN_MATRIX_PLAN_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>

static inline void set_msg(char *buf, size_t cap, const char *fmt, ...)
{
    if (!buf || cap == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

#endif
