/* One job, read best whole (over the ~400 lines a file here usually has):
 * the client side of the peer protocol, from spawning a worker to reaping
 * it, whose error paths share the same few helpers. */
/* The peer workers' client (peer_client.h, docs/peers.md). */
#define _GNU_SOURCE /* mkostemp, pipe2 */
#include "peer_client.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "big_alloc.h" /* attn_pages_parse: the run's pages */
#include "peak.h"      /* attn_json_walk */
#include "timer.h"

extern char **environ;

enum {
    REGION_ALIGN = 64,
    DEFAULT_HELLO_MS = 60000,
    QUIT_WAIT_MS = 2000,
    MAX_LINE = 64 << 20 /* a time reply of millions of reps still fits */
};

struct attn_peer {
    pid_t pid; /* -1 once reaped */
    int to_fd, from_fd;
    char *rbuf; /* bytes read but not yet consumed as lines */
    size_t rlen, rcap;
    size_t line_len; /* of the line read_line handed out, its '\n' included */
    int broken;      /* after a timeout, death or garbage: only close is allowed */
    char broken_why[600];
    char name[32];
    char version[64];
};

const char *attn_peer_type_name(attn_peer_type t)
{
    return t == ATTN_PEER_F16 ? "f16" : t == ATTN_PEER_BF16 ? "bf16" : "f32";
}

size_t attn_peer_type_size(attn_peer_type t)
{
    return t == ATTN_PEER_F32 ? 4 : 2;
}

/* ---- the shared buffer ---- */

static int mul_ok(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b)
        return 0;
    *out = a * b;
    return 1;
}

/* Bytes of a [d0][d1][d2][d3] region of `elem`-byte elements, or 0 on overflow. */
static size_t region_bytes(int32_t d0, int32_t d1, int32_t d2, int32_t d3, size_t elem)
{
    size_t n = elem;
    int32_t d[4] = {d0, d1, d2, d3};
    for (int i = 0; i < 4; i++)
        if (!mul_ok(n, (size_t)d[i], &n))
            return 0;
    return n;
}

static int valid_type(attn_peer_type t)
{
    return t == ATTN_PEER_F32 || t == ATTN_PEER_F16 || t == ATTN_PEER_BF16;
}

static int shape_problem(const attn_shape *s, char *err, size_t cap)
{
    if (!s) {
        snprintf(err, cap, "peer buffer: no shape");
        return -1;
    }
    if (s->batch < 1 || s->heads_q < 1 || s->heads_kv < 1 || s->n_q < 1 || s->n_kv < 1 ||
        s->d_k < 1 || s->d_v < 1 || s->heads_q % s->heads_kv != 0 ||
        (s->causal != 0 && s->causal != 1)) {
        snprintf(err, cap, "peer buffer: shape out of range (see attn.h)");
        return -1;
    }
    if (!isfinite(s->scale) || s->scale == 0.0f) {
        snprintf(err, cap, "peer buffer: scale must be resolved (finite, non-zero), got %g",
                 (double)s->scale);
        return -1;
    }
    return 0;
}

static size_t align_up(size_t x)
{
    return (x + REGION_ALIGN - 1) / REGION_ALIGN * REGION_ALIGN;
}

int attn_peer_buffer_create(attn_peer_buffer *b, const attn_shape *s, attn_peer_types t,
                            const char *dir, char *err, size_t cap)
{
    if (!b) {
        snprintf(err, cap, "peer buffer: NULL buffer");
        return ATTN_PEER_EINVAL;
    }
    memset(b, 0, sizeof *b);
    if (shape_problem(s, err, cap) != 0)
        return ATTN_PEER_EINVAL;
    if (!valid_type(t.q) || !valid_type(t.kv) || !valid_type(t.o)) {
        snprintf(err, cap, "peer buffer: element type out of range");
        return ATTN_PEER_EINVAL;
    }
    size_t q = region_bytes(s->batch, s->heads_q, s->n_q, s->d_k, attn_peer_type_size(t.q));
    size_t k = region_bytes(s->batch, s->heads_kv, s->n_kv, s->d_k, attn_peer_type_size(t.kv));
    size_t v = region_bytes(s->batch, s->heads_kv, s->n_kv, s->d_v, attn_peer_type_size(t.kv));
    size_t o = region_bytes(s->batch, s->heads_q, s->n_q, s->d_v, attn_peer_type_size(t.o));
    const size_t limit = SIZE_MAX / 8;
    if (!q || !k || !v || !o || q > limit || k > limit || v > limit || o > limit) {
        snprintf(err, cap, "peer buffer: the regions' byte counts overflow");
        return ATTN_PEER_EINVAL;
    }
    b->off_q = 0;
    b->off_k = align_up(q);
    b->off_v = b->off_k + align_up(k);
    b->off_o = b->off_v + align_up(v);
    b->bytes = b->off_o + align_up(o);

    int n = snprintf(b->path, sizeof b->path, "%s/attnbench-peer-XXXXXX", dir ? dir : "/dev/shm");
    if (n < 0 || (size_t)n >= sizeof b->path) {
        snprintf(err, cap, "peer buffer: directory name '%s' too long", dir);
        b->path[0] = '\0';
        return ATTN_PEER_EINVAL;
    }
    int fd = mkostemp(b->path, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, cap, "peer buffer: cannot create %s: %s", b->path, strerror(errno));
        b->path[0] = '\0';
        return ATTN_PEER_ESYS;
    }
    if (ftruncate(fd, (off_t)b->bytes) != 0) {
        snprintf(err, cap, "peer buffer: cannot size %s to %zu bytes: %s", b->path, b->bytes,
                 strerror(errno));
        close(fd);
        unlink(b->path);
        b->path[0] = '\0';
        return ATTN_PEER_ESYS;
    }
    void *base = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int map_errno = errno;
    close(fd); /* the mapping keeps the file's pages */
    if (base == MAP_FAILED) {
        snprintf(err, cap, "peer buffer: cannot map %s: %s", b->path, strerror(map_errno));
        unlink(b->path);
        b->path[0] = '\0';
        return ATTN_PEER_ESYS;
    }
    b->base = base;
    b->q = (char *)base + b->off_q;
    b->k = (char *)base + b->off_k;
    b->v = (char *)base + b->off_v;
    b->o = (char *)base + b->off_o;
    b->shape = *s;
    b->types = t;
    return ATTN_PEER_OK;
}

int attn_peer_buffer_close(attn_peer_buffer *b, char *err, size_t cap)
{
    if (!b)
        return ATTN_PEER_OK;
    int rc = ATTN_PEER_OK;
    if (b->base && munmap(b->base, b->bytes) != 0) {
        snprintf(err, cap, "peer buffer: cannot unmap %s: %s", b->path, strerror(errno));
        rc = ATTN_PEER_ESYS;
    }
    if (b->path[0] && unlink(b->path) != 0 && rc == ATTN_PEER_OK) {
        snprintf(err, cap, "peer buffer: cannot unlink %s: %s", b->path, strerror(errno));
        rc = ATTN_PEER_ESYS;
    }
    memset(b, 0, sizeof *b);
    return rc;
}

/* ---- the worker process ---- */

static int remaining_ms(int64_t deadline)
{
    int64_t left = (deadline - attn_now_ns()) / 1000000;
    return left < 0 ? 0 : left > 1 << 30 ? 1 << 30 : (int)left;
}

static void describe_status(int status, char *out, size_t cap)
{
    if (WIFEXITED(status))
        snprintf(out, cap, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, cap, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, cap, "stopped (status 0x%x)", status);
}

/* Waits up to `ms` for the worker to exit; kills it after that. Fills
 * `how` and returns 1 when it exited 0 by itself. */
static int reap(attn_peer *p, int ms, char *how, size_t cap)
{
    if (p->pid < 0) {
        snprintf(how, cap, "already reaped");
        return 0;
    }
    int status = 0, killed = 0;
    const int64_t deadline = attn_now_ns() + (int64_t)ms * 1000000;
    for (;;) {
        pid_t r = waitpid(p->pid, &status, killed ? 0 : WNOHANG);
        if (r == p->pid)
            break;
        if (r < 0 && errno != EINTR) {
            snprintf(how, cap, "cannot wait for it: %s", strerror(errno));
            p->pid = -1;
            return 0;
        }
        if (r == 0 && attn_now_ns() >= deadline) {
            kill(p->pid, SIGKILL);
            killed = 1;
        } else if (r == 0) {
            struct timespec nap = {0, 5 * 1000000};
            nanosleep(&nap, NULL);
        }
    }
    p->pid = -1;
    describe_status(status, how, cap);
    if (killed)
        snprintf(how, cap, "did not exit within %d ms; killed", ms);
    return !killed && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void close_pipes(attn_peer *p)
{
    if (p->to_fd >= 0)
        close(p->to_fd);
    if (p->from_fd >= 0)
        close(p->from_fd);
    p->to_fd = p->from_fd = -1;
}

/* After a timeout or garbage the worker's state is unknown: stop it now,
 * so a hung library never outlives the request. */
static void break_worker(attn_peer *p, int kill_it, const char *why)
{
    p->broken = 1;
    snprintf(p->broken_why, sizeof p->broken_why, "%s", why);
    close_pipes(p);
    if (p->pid > 0) {
        if (kill_it)
            kill(p->pid, SIGKILL);
        char how[128];
        reap(p, kill_it ? 0 : 1000, how, sizeof how);
    }
}

/* Writes all of `text`. SIGPIPE is blocked around the write (and a pending
 * one from it consumed), so a dead worker is EPIPE here, never the
 * harness's death; the caller's signal mask is restored. */
static int write_all(attn_peer *p, const char *text, size_t len, int64_t deadline)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    const int was_pending = sigismember(&pending, SIGPIPE);
    int rc = 0;
    size_t done = 0;
    while (done < len) {
        struct pollfd pfd = {p->to_fd, POLLOUT, 0};
        int ready = poll(&pfd, 1, remaining_ms(deadline));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            rc = ATTN_PEER_ETIMEOUT;
            break;
        }
        ssize_t n = write(p->to_fd, text + done, len - done);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            rc = ATTN_PEER_EDEAD;
            break;
        }
        done += (size_t)n;
    }
    if (rc == ATTN_PEER_EDEAD && !was_pending) {
        const struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Reads one line (without its '\n') into *line, valid until consume_line. */
static int read_line(attn_peer *p, int64_t deadline, char **line)
{
    for (;;) {
        char *nl = p->rlen ? memchr(p->rbuf, '\n', p->rlen) : NULL;
        if (nl) {
            *nl = '\0';
            *line = p->rbuf;
            p->line_len = (size_t)(nl - p->rbuf) + 1;
            return ATTN_PEER_OK;
        }
        if (p->rlen >= MAX_LINE)
            return ATTN_PEER_EPROTO;
        if (p->rcap - p->rlen < 4096 + 1) {
            size_t ncap = p->rcap ? p->rcap * 2 : 65536;
            char *nb = realloc(p->rbuf, ncap);
            if (!nb)
                return ATTN_PEER_ESYS;
            p->rbuf = nb;
            p->rcap = ncap;
        }
        struct pollfd pfd = {p->from_fd, POLLIN, 0};
        int ready = poll(&pfd, 1, remaining_ms(deadline));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0)
            return ATTN_PEER_ETIMEOUT;
        ssize_t n = read(p->from_fd, p->rbuf + p->rlen, p->rcap - p->rlen - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return ATTN_PEER_EDEAD;
        p->rlen += (size_t)n;
    }
}

/* Drops the line read_line handed out. */
static void consume_line(attn_peer *p)
{
    memmove(p->rbuf, p->rbuf + p->line_len, p->rlen - p->line_len);
    p->rlen -= p->line_len;
    p->line_len = 0;
}

/* ---- replies ---- */

typedef struct reply {
    int has_ok, ok;
    char hello[32], version[64];
    char why_key[8]; /* "reason", "skip" or "error", whichever came */
    char why[ATTN_JSON_MAX_TEXT];
    char op[ATTN_JSON_MAX_TEXT];
    int has_pid;
    double pid;
    int64_t *ns; /* room for ns_cap numbers */
    int ns_cap, ns_n, ns_bad, has_ns;
} reply;

static void copy_text(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
}

static void take_reply(void *ctx, const char (*path)[ATTN_JSON_MAX_KEY], int depth,
                       const attn_json_value *v)
{
    reply *r = ctx;
    if (depth == 2 && strcmp(path[0], "ns") == 0 && strcmp(path[1], "[]") == 0) {
        r->has_ns = 1;
        if (v->kind != ATTN_JSON_NUMBER || v->number < 0 || v->number > 9.0e15 ||
            v->number != floor(v->number) || r->ns_n >= r->ns_cap) {
            r->ns_bad = 1;
            return;
        }
        r->ns[r->ns_n++] = (int64_t)v->number;
        return;
    }
    if (depth != 1)
        return;
    const char *key = path[0];
    if (strcmp(key, "ok") == 0) {
        r->has_ok = v->kind == ATTN_JSON_TRUE || v->kind == ATTN_JSON_FALSE;
        r->ok = v->kind == ATTN_JSON_TRUE;
    } else if (v->kind == ATTN_JSON_STRING) {
        if (strcmp(key, "hello") == 0)
            copy_text(r->hello, sizeof r->hello, v->text);
        else if (strcmp(key, "version") == 0)
            copy_text(r->version, sizeof r->version, v->text);
        else if (strcmp(key, "op") == 0)
            copy_text(r->op, sizeof r->op, v->text);
        else if (strcmp(key, "reason") == 0 || strcmp(key, "skip") == 0 ||
                 strcmp(key, "error") == 0) {
            copy_text(r->why_key, sizeof r->why_key, key);
            copy_text(r->why, sizeof r->why, v->text);
        }
    } else if (strcmp(key, "pid") == 0 && v->kind == ATTN_JSON_NUMBER) {
        r->has_pid = 1;
        r->pid = v->number;
    } else if (strcmp(key, "ns") == 0) {
        r->has_ns = 1; /* an empty array; anything but an array is caught by the count */
    }
}

/* What `what` got back, quoted for a message: the first 80 bytes. */
static void quote(const char *line, char *out, size_t cap)
{
    size_t n = strlen(line);
    snprintf(out, cap, "'%.80s%s'", line, n > 80 ? "..." : "");
}

/* One request and its reply line, parsed. On a failure of the channel the
 * worker is stopped and `err` says how. */
static int exchange(attn_peer *p, const char *request, const char *what, int timeout_ms, reply *r,
                    char *err, size_t cap)
{
    if (p->broken) {
        snprintf(err, cap, "peer %s: worker no longer usable (%s)", p->name, p->broken_why);
        return ATTN_PEER_EINVAL;
    }
    const int64_t deadline = attn_now_ns() + (int64_t)timeout_ms * 1000000;
    const long pid = (long)p->pid;
    int rc = request ? write_all(p, request, strlen(request), deadline) : ATTN_PEER_OK;
    char *line = NULL;
    if (rc == ATTN_PEER_OK)
        rc = read_line(p, deadline, &line);
    char why[600];
    if (rc == ATTN_PEER_ETIMEOUT) {
        snprintf(why, sizeof why, "no reply to '%s' within %d ms; worker killed", what, timeout_ms);
        break_worker(p, 1, why);
        snprintf(err, cap, "peer %s (pid %ld): %s", p->name, pid, why);
        return rc;
    }
    if (rc == ATTN_PEER_EDEAD) {
        close_pipes(p);
        char how[128];
        reap(p, 1000, how, sizeof how);
        snprintf(why, sizeof why, "worker %s during '%s'", how, what);
        break_worker(p, 0, why);
        snprintf(err, cap, "peer %s (pid %ld): %s", p->name, pid, why);
        return rc;
    }
    if (rc != ATTN_PEER_OK) {
        snprintf(why, sizeof why, "%s during '%s'",
                 rc == ATTN_PEER_EPROTO ? "a reply line over 64 MiB" : "out of memory", what);
        break_worker(p, 1, why);
        snprintf(err, cap, "peer %s (pid %ld): %s; worker killed", p->name, pid, why);
        return rc;
    }
    const char *s = line;
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    char perr[160] = "";
    const size_t len = p->line_len - 1;
    int bad = 0;
    if (strlen(line) != len) /* a NUL inside: no JSON text has one */
        bad = (snprintf(perr, sizeof perr, "a NUL byte in the line"), 1);
    else if (*s != '{')
        bad = (snprintf(perr, sizeof perr, "not a JSON object"), 1);
    else
        bad = attn_json_walk(line, len, take_reply, r, perr, sizeof perr) != 0;
    if (bad || !r->has_ok) {
        char q[100];
        quote(line, q, sizeof q);
        snprintf(why, sizeof why, "reply to '%s' is not the protocol (%s): %s", what,
                 bad ? perr : "no boolean 'ok'", q);
        consume_line(p);
        break_worker(p, 1, why);
        snprintf(err, cap, "peer %s (pid %ld): %s; worker killed", p->name, pid, why);
        return ATTN_PEER_EPROTO;
    }
    consume_line(p);
    return ATTN_PEER_OK;
}

/* The common reading of {"ok": false, ...}: skip or error, with the text. */
static int refusal(const attn_peer *p, const reply *r, const char *what, char *err, size_t cap)
{
    if (strcmp(r->why_key, "skip") == 0) {
        snprintf(err, cap, "%s", r->why);
        return ATTN_PEER_SKIP;
    }
    snprintf(err, cap, "peer %s: '%s' failed: %s", p->name, what,
             r->why[0] ? r->why : "(no message)");
    return ATTN_PEER_EFAIL;
}

static int valid_name(const char *s)
{
    if (!s || !*s || strlen(s) >= 32)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

int attn_peer_start(const attn_peer_opts *o, attn_peer **out, char *err, size_t cap)
{
    if (out)
        *out = NULL;
    if (!o || !out || !o->python || !o->worker || !valid_name(o->peer)) {
        snprintf(err, cap, "peer start: needs python, worker and a peer name ([a-z0-9_]+)");
        return ATTN_PEER_EINVAL;
    }
    attn_peer *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, cap, "peer %s: out of memory", o->peer);
        return ATTN_PEER_ESYS;
    }
    p->pid = -1;
    p->to_fd = p->from_fd = -1;
    snprintf(p->name, sizeof p->name, "%s", o->peer);
    /* Close-on-exec everywhere: a second worker must not inherit the first
     * one's pipe ends, or the first one's EOF would never come. */
    int in_pipe[2], out_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) != 0) {
        snprintf(err, cap, "peer %s: cannot make a pipe: %s", p->name, strerror(errno));
        free(p);
        return ATTN_PEER_ESYS;
    }
    if (pipe2(out_pipe, O_CLOEXEC) != 0) {
        snprintf(err, cap, "peer %s: cannot make a pipe: %s", p->name, strerror(errno));
        close(in_pipe[0]);
        close(in_pipe[1]);
        free(p);
        return ATTN_PEER_ESYS;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    char *argv[] = {(char *)o->python, (char *)o->worker, p->name, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, o->python, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in_pipe[0]);
    close(out_pipe[1]);
    p->to_fd = in_pipe[1];
    p->from_fd = out_pipe[0];
    if (rc != 0) {
        snprintf(err, cap, "peer %s: cannot start '%s %s': %s", p->name, o->python, o->worker,
                 strerror(rc));
        close_pipes(p);
        free(p);
        return ATTN_PEER_ESYS;
    }
    p->pid = pid;

    reply r = {0};
    const int ms = o->hello_timeout_ms > 0 ? o->hello_timeout_ms : DEFAULT_HELLO_MS;
    rc = exchange(p, NULL, "hello", ms, &r, err, cap);
    if (rc == ATTN_PEER_OK && strcmp(r.hello, p->name) != 0) {
        snprintf(err, cap, "peer %s (pid %ld): hello names '%s'", p->name, (long)pid, r.hello);
        break_worker(p, 1, "wrong hello");
        rc = ATTN_PEER_EPROTO;
    } else if (rc == ATTN_PEER_OK && !r.ok) {
        snprintf(err, cap, "peer %s unavailable: %s", p->name,
                 r.why[0] ? r.why : "(no reason given)");
        rc = ATTN_PEER_SKIP;
    } else if (rc == ATTN_PEER_OK && !r.version[0]) {
        snprintf(err, cap, "peer %s (pid %ld): hello has no version", p->name, (long)pid);
        break_worker(p, 1, "hello without version");
        rc = ATTN_PEER_EPROTO;
    }
    if (rc != ATTN_PEER_OK) {
        char ignored[64];
        attn_peer_close(p, ignored, sizeof ignored);
        return rc;
    }
    snprintf(p->version, sizeof p->version, "%s", r.version);
    *out = p;
    return ATTN_PEER_OK;
}

pid_t attn_peer_pid(const attn_peer *p)
{
    return p ? p->pid : -1;
}

const char *attn_peer_version(const attn_peer *p)
{
    return p ? p->version : "";
}

int attn_peer_setup(attn_peer *p, const attn_peer_buffer *b, const attn_peer_run *run,
                    int timeout_ms, char *op, size_t op_cap, char *err, size_t cap)
{
    if (op_cap)
        op[0] = '\0';
    attn_pages pages;
    if (!p || !b || !b->base || !run || run->threads < 1 || run->copies < 1 ||
        run->copies > ATTN_PEER_MAX_COPIES || timeout_ms < 1 ||
        (run->pages && attn_pages_parse(run->pages, &pages) != 0)) {
        snprintf(err, cap,
                 "peer setup: needs a started peer, a created buffer, threads >= 1, copies "
                 "from 1 to %d, pages huge, base or NULL, and a timeout",
                 ATTN_PEER_MAX_COPIES);
        return ATTN_PEER_EINVAL;
    }
    const int threads = run->threads;
    if (shape_problem(&b->shape, err, cap) != 0)
        return ATTN_PEER_EINVAL;
    const attn_shape *s = &b->shape;
    char request[1152];
    snprintf(request, sizeof request,
             "{\"cmd\": \"setup\", \"shape\": {\"batch\": %d, \"heads_q\": %d, \"heads_kv\": %d, "
             "\"n_q\": %d, \"n_kv\": %d, \"d_k\": %d, \"d_v\": %d, \"causal\": %d, \"scale\": "
             "%.9g}, \"threads\": %d, \"types\": {\"q\": \"%s\", \"kv\": \"%s\", \"o\": \"%s\"}, "
             "\"buffer\": \"%s\", \"offsets\": {\"q\": %zu, \"k\": %zu, \"v\": %zu, \"o\": %zu}, "
             "\"copies\": %d%s%s%s}\n",
             (int)s->batch, (int)s->heads_q, (int)s->heads_kv, (int)s->n_q, (int)s->n_kv,
             (int)s->d_k, (int)s->d_v, (int)s->causal, (double)s->scale, threads,
             attn_peer_type_name(b->types.q), attn_peer_type_name(b->types.kv),
             attn_peer_type_name(b->types.o), b->path, b->off_q, b->off_k, b->off_v, b->off_o,
             run->copies, run->pages ? ", \"pages\": \"" : "", run->pages ? run->pages : "",
             run->pages ? "\"" : "");
    reply r = {0};
    int rc = exchange(p, request, "setup", timeout_ms, &r, err, cap);
    if (rc != ATTN_PEER_OK)
        return rc;
    if (!r.ok)
        return refusal(p, &r, "setup", err, cap);
    if (!r.op[0]) {
        snprintf(err, cap, "peer %s: setup reply has no 'op'", p->name);
        return ATTN_PEER_EPROTO;
    }
    snprintf(op, op_cap, "%s", r.op);
    return ATTN_PEER_OK;
}

static int timed(attn_peer *p, const char *cmd, int reps, int timeout_ms, int64_t *ns, char *err,
                 size_t cap)
{
    if (!p || reps < 1 || !ns || timeout_ms < 1) {
        snprintf(err, cap, "peer %s: needs a started peer, reps >= 1, room for them and a timeout",
                 cmd);
        return ATTN_PEER_EINVAL;
    }
    char request[96];
    snprintf(request, sizeof request, "{\"cmd\": \"%s\", \"reps\": %d}\n", cmd, reps);
    reply r = {.ns = ns, .ns_cap = reps};
    int rc = exchange(p, request, cmd, timeout_ms, &r, err, cap);
    if (rc != ATTN_PEER_OK)
        return rc;
    if (!r.ok)
        return refusal(p, &r, cmd, err, cap);
    if (r.ns_bad || r.ns_n != reps) {
        snprintf(err, cap,
                 "peer %s: '%s' reply needs 'ns' with %d whole non-negative numbers, got %d%s",
                 p->name, cmd, reps, r.ns_n, r.ns_bad ? " and others" : "");
        return ATTN_PEER_EPROTO;
    }
    return ATTN_PEER_OK;
}

int attn_peer_time(attn_peer *p, int reps, int timeout_ms, int64_t *ns, char *err, size_t cap)
{
    return timed(p, "time", reps, timeout_ms, ns, err, cap);
}

int attn_peer_empty(attn_peer *p, int reps, int timeout_ms, int64_t *ns, char *err, size_t cap)
{
    return timed(p, "empty", reps, timeout_ms, ns, err, cap);
}

int attn_peer_close(attn_peer *p, char *err, size_t cap)
{
    if (!p)
        return ATTN_PEER_OK;
    int rc = ATTN_PEER_OK;
    if (!p->broken && p->pid > 0) {
        static const char quit[] = "{\"cmd\": \"quit\"}\n";
        write_all(p, quit, sizeof quit - 1, attn_now_ns() + (int64_t)QUIT_WAIT_MS * 1000000);
        close_pipes(p); /* EOF too, for a worker that missed the quit */
        char how[128];
        if (!reap(p, QUIT_WAIT_MS, how, sizeof how)) {
            snprintf(err, cap, "peer %s: on quit the worker %s", p->name, how);
            rc = ATTN_PEER_EDEAD;
        }
    }
    close_pipes(p);
    if (p->pid > 0) {
        char how[128];
        reap(p, 0, how, sizeof how);
    }
    free(p->rbuf);
    free(p);
    return rc;
}
