/* harness/peer_client.c against tests/peers/fake_worker.py: the round trip,
 * and every way a worker can fail the client — garbage, death mid-request,
 * a hang (the timeout), a dead pipe, a skip — each an error message, never
 * a hang or a crash. Usage: test_peer_client PYTHON FAKE_WORKER */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "peer_client.h"
#include "timer.h"

static const char *python, *fake;

static const attn_shape small = {.batch = 1,
                                 .heads_q = 4,
                                 .heads_kv = 2,
                                 .n_q = 3,
                                 .n_kv = 5,
                                 .d_k = 8,
                                 .d_v = 6,
                                 .causal = 1,
                                 .scale = 0.125f};
static const attn_peer_types f32 = {ATTN_PEER_F32, ATTN_PEER_F32, ATTN_PEER_F32};

static int start(const char *mode, attn_peer **p, char *err, size_t cap)
{
    attn_peer_opts o = {.python = python, .worker = fake, .peer = mode, .hello_timeout_ms = 10000};
    return attn_peer_start(&o, p, err, cap);
}

static int gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

static void round_trip(check_tally *t, const char *mode)
{
    char err[512] = "", op[512] = "";
    attn_peer_buffer b;
    CHECK(t, attn_peer_buffer_create(&b, &small, f32, NULL, err, sizeof err) == ATTN_PEER_OK, "%s",
          err);
    CHECK(t, strncmp(b.path, "/dev/shm/attnbench-peer-", 24) == 0, "path %s", b.path);
    CHECK(t, access(b.path, F_OK) == 0, "%s should exist", b.path);
    CHECK(t, b.off_k % 64 == 0 && b.off_v % 64 == 0 && b.off_o % 64 == 0, "regions aligned");
    CHECK(t, b.off_o >= b.off_v + 2 * 5 * 6 * 4, "V fits before O");
    ((float *)b.q)[0] = 0.5f;

    attn_peer *p = NULL;
    int rc = start(mode, &p, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_OK && p, "%s: start: %d %s", mode, rc, err);
    if (!p) {
        attn_peer_buffer_close(&b, err, sizeof err);
        return;
    }
    CHECK(t, strcmp(attn_peer_version(p), "0.0-\"fake\"\\x") == 0, "version '%s'",
          attn_peer_version(p));
    pid_t pid = attn_peer_pid(p);
    CHECK(t, pid > 0, "pid %ld", (long)pid);

    const attn_peer_run run = {2, 3, "base"};
    rc = attn_peer_setup(p, &b, &run, 5000, op, sizeof op, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_OK, "setup: %d %s", rc, err);
    CHECK(t,
          strcmp(op, "fake(batch=1,heads_q=4,heads_kv=2,n_q=3,n_kv=5,d_k=8,d_v=6,causal=1,"
                     "scale=0.125,threads=2,types=f32/f32/f32,copies=3,pages=base)") == 0,
          "the request as the worker read it: %s", op);
    const float *o = b.o;
    int o_ok = 1;
    for (int e = 0; e < 4 * 3 * 6; e++)
        o_ok &= o[e] == 0.5f + (float)e;
    CHECK(t, o_ok, "O written through the shared buffer (o[1] = %g)", (double)o[1]);
    /* Refused before anything is sent (the handle stays usable). */
    const attn_peer_run bad[] = {
        {2, 0, NULL}, {2, ATTN_PEER_MAX_COPIES + 1, NULL}, {2, 1, "giant"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = attn_peer_setup(p, &b, &bad[i], 5000, op, sizeof op, err, sizeof err);
        CHECK(t, rc == ATTN_PEER_EINVAL && strstr(err, "copies from 1 to 64"),
              "run {threads %d, copies %d, pages %s} refused: %d %s", bad[i].threads, bad[i].copies,
              bad[i].pages ? bad[i].pages : "NULL", rc, err);
    }

    int64_t ns[5] = {0};
    rc = attn_peer_time(p, 5, 5000, ns, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_OK && ns[0] == 1000 && ns[4] == 5000, "time: %d %s (ns[4] %lld)", rc,
          err, (long long)ns[4]);
    rc = attn_peer_empty(p, 3, 5000, ns, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_OK && ns[0] == 10 && ns[2] == 30, "empty: %d %s", rc, err);
    rc = attn_peer_time(p, 0, 5000, ns, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_EINVAL, "reps 0 refused: %d", rc);

    rc = attn_peer_close(p, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_OK, "close: %d %s", rc, err);
    CHECK(t, gone(pid), "worker %ld reaped after quit", (long)pid);

    char path[64];
    snprintf(path, sizeof path, "%s", b.path);
    CHECK(t, attn_peer_buffer_close(&b, err, sizeof err) == ATTN_PEER_OK, "%s", err);
    CHECK(t, access(path, F_OK) != 0 && errno == ENOENT, "%s unlinked on close", path);
    CHECK(t, attn_peer_buffer_close(&b, err, sizeof err) == ATTN_PEER_OK, "second close is fine");
}

/* A failure mode: start, setup fails as expected, the worker is gone, the
 * handle refuses further use, close still works. */
static void broken_setup(check_tally *t, const char *mode, int timeout_ms, int want_rc,
                         const char *want_text)
{
    char err[512] = "", op[256];
    attn_peer_buffer b;
    attn_peer_buffer_create(&b, &small, f32, NULL, err, sizeof err);
    attn_peer *p = NULL;
    int rc = start(mode, &p, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_OK, "%s: start %d %s", mode, rc, err);
    if (!p) {
        attn_peer_buffer_close(&b, err, sizeof err);
        return;
    }
    pid_t pid = attn_peer_pid(p);
    int64_t t0 = attn_now_ns();
    const attn_peer_run run = {1, 1, NULL};
    rc = attn_peer_setup(p, &b, &run, timeout_ms, op, sizeof op, err, sizeof err);
    double secs = (double)(attn_now_ns() - t0) * 1e-9;
    CHECK(t, rc == want_rc, "%s: setup gave %d, want %d (%s)", mode, rc, want_rc, err);
    CHECK(t, strstr(err, want_text) != NULL, "%s: message '%s' should say '%s'", mode, err,
          want_text);
    CHECK(t, strstr(err, "setup") != NULL && strstr(err, mode) != NULL,
          "%s: message names the request and the peer: %s", mode, err);
    CHECK(t, secs < timeout_ms / 1000.0 + 2.0, "%s: took %.2f s", mode, secs);
    CHECK(t, gone(pid), "%s: worker %ld stopped", mode, (long)pid);
    int64_t ns[2];
    rc = attn_peer_time(p, 2, 1000, ns, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_EINVAL && strstr(err, "no longer usable"), "%s: then time: %d %s",
          mode, rc, err);
    CHECK(t, attn_peer_close(p, err, sizeof err) == ATTN_PEER_OK, "%s: close %s", mode, err);
    attn_peer_buffer_close(&b, err, sizeof err);
}

static void skips(check_tally *t)
{
    char err[512] = "", op[256];
    attn_peer *p = NULL;
    int rc = start("nolib", &p, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_SKIP && !p, "nolib: %d", rc);
    CHECK(t, strstr(err, "cannot import nolib") != NULL, "nolib: reason '%s'", err);

    attn_peer_buffer b;
    attn_peer_buffer_create(&b, &small, f32, NULL, err, sizeof err);
    rc = start("skipper", &p, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_OK, "skipper: start %d %s", rc, err);
    if (p) {
        const attn_peer_run run = {1, 1, NULL};
        rc = attn_peer_setup(p, &b, &run, 5000, op, sizeof op, err, sizeof err);
        CHECK(t,
              rc == ATTN_PEER_SKIP && strcmp(err, "fake cannot compute exactly this problem") == 0,
              "skipper: %d '%s'", rc, err);
        int64_t ns[2];
        rc = attn_peer_time(p, 2, 5000, ns, err, sizeof err);
        CHECK(t, rc == ATTN_PEER_EFAIL && strstr(err, "before a successful"), "error reply: %d %s",
              rc, err);
        CHECK(t, attn_peer_close(p, err, sizeof err) == ATTN_PEER_OK,
              "a worker that refused stays usable and quits cleanly: %s", err);
    }
    rc = start("shortns", &p, err, sizeof err);
    if (p) {
        int64_t ns[4];
        rc = attn_peer_time(p, 4, 5000, ns, err, sizeof err);
        CHECK(t, rc == ATTN_PEER_EPROTO && strstr(err, "got 3"), "short ns: %d %s", rc, err);
        attn_peer_close(p, err, sizeof err);
    }
    attn_peer_buffer_close(&b, err, sizeof err);
}

static void bad_arguments(check_tally *t)
{
    char err[256] = "";
    attn_peer_buffer b;
    attn_shape s = small;
    s.scale = 0.0f;
    CHECK(t,
          attn_peer_buffer_create(&b, &s, f32, NULL, err, sizeof err) == ATTN_PEER_EINVAL &&
              strstr(err, "scale"),
          "an unresolved scale is refused: %s", err);
    s = small;
    s.heads_kv = 3;
    CHECK(t, attn_peer_buffer_create(&b, &s, f32, NULL, err, sizeof err) == ATTN_PEER_EINVAL,
          "heads_kv must divide heads_q");
    s = small;
    s.n_kv = 1 << 30;
    s.d_k = 1 << 30;
    CHECK(t,
          attn_peer_buffer_create(&b, &s, f32, NULL, err, sizeof err) == ATTN_PEER_EINVAL &&
              strstr(err, "overflow"),
          "overflowing byte counts: %s", err);
    CHECK(t,
          attn_peer_buffer_create(&b, &small, f32, "/no/such/dir", err, sizeof err) ==
                  ATTN_PEER_ESYS &&
              strstr(err, "/no/such/dir"),
          "missing directory named: %s", err);

    attn_peer *p = NULL;
    attn_peer_opts o = {.python = "/no/such/python", .worker = fake, .peer = "fake"};
    int rc = attn_peer_start(&o, &p, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_ESYS && !p && strstr(err, "/no/such/python"), "no interpreter: %d %s",
          rc, err);
    o = (attn_peer_opts){.python = python, .worker = "/no/such/worker.py", .peer = "fake"};
    rc = attn_peer_start(&o, &p, err, sizeof err);
    CHECK(t, rc == ATTN_PEER_EDEAD && !p && strstr(err, "exited with status 2"),
          "no worker script: %d %s", rc, err);
    o = (attn_peer_opts){.python = python, .worker = fake, .peer = "Bad name;rm"};
    CHECK(t, attn_peer_start(&o, &p, err, sizeof err) == ATTN_PEER_EINVAL, "peer name checked");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_peer_client PYTHON FAKE_WORKER\n");
        return 2;
    }
    python = argv[1];
    fake = argv[2];
    check_tally t = {0, 0};
    round_trip(&t, "fake");
    round_trip(&t, "chunked"); /* replies in pieces */
    broken_setup(&t, "garbage", 5000, ATTN_PEER_EPROTO, "not the protocol");
    broken_setup(&t, "dies", 5000, ATTN_PEER_EDEAD, "exited with status 3");
    broken_setup(&t, "hangs", 1500, ATTN_PEER_ETIMEOUT, "within 1500 ms");
    /* Its pipe is closed when setup is written: EPIPE, not a SIGPIPE death. */
    broken_setup(&t, "quitter", 5000, ATTN_PEER_EDEAD, "exited with status 0");
    skips(&t);
    bad_arguments(&t);
    return check_report("peer_client", &t);
}
