/* Ctrl-C and kill for long runs. SIGINT and SIGTERM wake a waiting
 * thread, which takes the row lock (so a row being written is finished,
 * never cut) and exits with 130. Nothing else is finished: no half-measured
 * cell is written. A signal inherited as ignored stays ignored.
 *
 * Why a handler and a pipe rather than blocking the signals and sigwait():
 * a process-directed signal goes to any thread that does not block it, and
 * libraries start threads before main (OpenBLAS's pool), which we cannot
 * make block anything. The handler only write()s a byte to the pipe. */
#ifndef ATTN_INTERRUPT_H
#define ATTN_INTERRUPT_H

#include <pthread.h>
#include <signal.h>

typedef struct attn_interrupt {
    pthread_mutex_t row_lock;
    pthread_t waiter;
    int pipe_fd[2];
    struct sigaction old_int, old_term;
    int handles_int, handles_term;
    int started;
    char message[256]; /* written to stderr on interrupt */
    /* Run by the waiting thread, the row lock held, just before it exits:
     * for state the next run needs that is not in a row (the plan's time
     * spent). NULL: none. Set before the rows start. */
    void (*before_exit)(void *ctx);
    void *before_exit_ctx;
} attn_interrupt;

/* Returns 0 or -1. One at a time per process. */
int attn_interrupt_start(attn_interrupt *in, const char *message);

/* Sets in->before_exit (see above); what it touches must change only
 * under attn_interrupt_lock. */
void attn_interrupt_before_exit(attn_interrupt *in, void (*fn)(void *ctx), void *ctx);

/* Around each row write. */
void attn_interrupt_lock(attn_interrupt *in);
void attn_interrupt_unlock(attn_interrupt *in);

/* Restores the previous signal dispositions and stops the waiting thread. */
void attn_interrupt_stop(attn_interrupt *in);

#endif
