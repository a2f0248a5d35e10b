/* A one-line progress bar with ETA on stderr, drawn only when stderr is a
 * terminal (quiet in pipes, logs and ctest). The ETA weighs each step by
 * its estimated cost, not by count: one 16k-token prefill outweighs a
 * hundred decode rows. */
#ifndef ATTN_PROGRESS_H
#define ATTN_PROGRESS_H

#include <stdint.h>

typedef struct attn_progress {
    int enabled;
    int total, done;
    double total_weight, done_weight;
    int64_t start_ns;
    int drawn; /* the bar is on the current line */
} attn_progress;

void attn_progress_init(attn_progress *p, int total, double total_weight);
/* Redraws the bar naming the step under way. */
void attn_progress_show(attn_progress *p, const char *current);
/* Marks one step of `weight` done. */
void attn_progress_step(attn_progress *p, double weight);
/* Erases the bar so other output can be printed on a clean line. */
void attn_progress_clear(attn_progress *p);

#endif
