/* Wall-clock time for the harness's own timing loops (CLOCK_MONOTONIC:
 * never steps with NTP, counts time OpenMP threads spend too). */
#ifndef ATTN_TIMER_H
#define ATTN_TIMER_H

#include <stdint.h>
#include <time.h>

static inline int64_t attn_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Median of n values (sorts them in place); NaN when n is 0. */
double attn_median(double *x, int n);

#endif
