#include "interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_INTERRUPTED = 130 }; /* 128 + SIGINT, the shell's convention */

/* The write end of the pipe, for the handler, which gets no context
 * argument: the harness's one piece of global state, set by start and
 * cleared by stop, read only by the handler. */
static volatile sig_atomic_t wake_fd = -1;

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    const char byte = 1;
    if (wake_fd >= 0) {
        ssize_t ignored = write(wake_fd, &byte, 1);
        (void)ignored;
    }
    errno = saved;
}

static void *wait_for_signal(void *arg)
{
    attn_interrupt *in = arg;
    char byte;
    ssize_t n;
    while ((n = read(in->pipe_fd[0], &byte, 1)) < 0 && errno == EINTR)
        ;
    if (n <= 0) /* the pipe closed: stop() */
        return NULL;
    /* Once we hold the lock no row is half-written, and none will be. */
    pthread_mutex_lock(&in->row_lock);
    /* write(), not stdio: the main thread may hold stderr's lock. */
    ssize_t ignored = write(STDERR_FILENO, in->message, strlen(in->message));
    (void)ignored;
    if (in->before_exit)
        in->before_exit(in->before_exit_ctx);
    _exit(EXIT_INTERRUPTED);
    return NULL;
}

void attn_interrupt_before_exit(attn_interrupt *in, void (*fn)(void *ctx), void *ctx)
{
    attn_interrupt_lock(in);
    in->before_exit = fn;
    in->before_exit_ctx = ctx;
    attn_interrupt_unlock(in);
}

/* Installs on_signal for `sig` unless the parent left it ignored. */
static int take_signal(int sig, struct sigaction *old)
{
    if (sigaction(sig, NULL, old) != 0 || old->sa_handler == SIG_IGN)
        return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART; /* the timed kernels and barriers carry on */
    return sigaction(sig, &sa, NULL) == 0;
}

int attn_interrupt_start(attn_interrupt *in, const char *message)
{
    memset(in, 0, sizeof *in);
    snprintf(in->message, sizeof in->message, "%s", message);
    if (pthread_mutex_init(&in->row_lock, NULL) != 0)
        return -1;
    if (pipe(in->pipe_fd) != 0) {
        pthread_mutex_destroy(&in->row_lock);
        return -1;
    }
    fcntl(in->pipe_fd[0], F_SETFD, FD_CLOEXEC);
    fcntl(in->pipe_fd[1], F_SETFD, FD_CLOEXEC);
    if (pthread_create(&in->waiter, NULL, wait_for_signal, in) != 0) {
        close(in->pipe_fd[0]);
        close(in->pipe_fd[1]);
        pthread_mutex_destroy(&in->row_lock);
        return -1;
    }
    wake_fd = in->pipe_fd[1];
    in->handles_int = take_signal(SIGINT, &in->old_int);
    in->handles_term = take_signal(SIGTERM, &in->old_term);
    in->started = 1;
    return 0;
}

void attn_interrupt_lock(attn_interrupt *in)
{
    pthread_mutex_lock(&in->row_lock);
}

void attn_interrupt_unlock(attn_interrupt *in)
{
    pthread_mutex_unlock(&in->row_lock);
}

void attn_interrupt_stop(attn_interrupt *in)
{
    if (!in->started)
        return;
    /* A signal from here on gets the old disposition (by default: exit). */
    if (in->handles_int)
        sigaction(SIGINT, &in->old_int, NULL);
    if (in->handles_term)
        sigaction(SIGTERM, &in->old_term, NULL);
    wake_fd = -1;
    close(in->pipe_fd[1]); /* the waiter reads end-of-file and returns */
    pthread_join(in->waiter, NULL);
    close(in->pipe_fd[0]);
    pthread_mutex_destroy(&in->row_lock);
    in->started = 0;
}
