#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "timer.h"

enum { BAR_WIDTH = 24, NAME_WIDTH = 80 };

void attn_progress_init(attn_progress *p, int total, double total_weight)
{
    *p = (attn_progress){
        .enabled = isatty(STDERR_FILENO),
        .total = total,
        .total_weight = total_weight > 0 ? total_weight : 1.0,
        .start_ns = attn_now_ns(),
    };
}

static void format_duration(double s, char *buf, size_t cap)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

void attn_progress_show(attn_progress *p, const char *current)
{
    if (!p->enabled)
        return;
    double frac = p->done_weight / p->total_weight;
    if (frac > 1)
        frac = 1;
    char bar[BAR_WIDTH + 1];
    int filled = (int)(frac * BAR_WIDTH + 0.5);
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    double elapsed = (double)(attn_now_ns() - p->start_ns) * 1e-9;
    char eta[32] = "?";
    if (p->done_weight > 0)
        format_duration(elapsed * (p->total_weight - p->done_weight) / p->done_weight, eta,
                        sizeof eta);
    char spent[32];
    format_duration(elapsed, spent, sizeof spent);
    /* \r and erase-to-end-of-line: redraw in place. */
    fprintf(stderr, "\r\033[K[%s] %d/%d %s ETA %s %.*s", bar, p->done, p->total, spent, eta,
            NAME_WIDTH, current ? current : "");
    fflush(stderr);
    p->drawn = 1;
}

void attn_progress_step(attn_progress *p, double weight)
{
    p->done++;
    p->done_weight += weight;
}

void attn_progress_clear(attn_progress *p)
{
    if (!p->enabled || !p->drawn)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->drawn = 0;
}
