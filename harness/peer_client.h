/* The client side of the peer workers (scripts/peers/worker.py; protocol in
 * docs/peers.md): one attention library (PyTorch, ONNX Runtime, OpenVINO)
 * per child process, driven by JSON lines over its stdin/stdout, its stderr
 * passed through. Inputs and output travel in a shared buffer, a /dev/shm
 * file both sides map MAP_SHARED.
 *
 * Every function returns ATTN_PEER_OK or a code below and, on anything but
 * OK, fills `err` with what failed. A worker that dies, hangs past the
 * timeout or sends something that is not the protocol becomes an error —
 * the worker is then killed and the handle only good for attn_peer_close.
 * No global state: handles are independent (one per thread at a time). */
#ifndef ATTN_PEER_CLIENT_H
#define ATTN_PEER_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "attn.h"

enum {
    ATTN_PEER_OK = 0,
    ATTN_PEER_SKIP = 1,      /* the peer declined: library missing, or not exactly this problem */
    ATTN_PEER_EFAIL = -1,    /* the worker answered with an error */
    ATTN_PEER_ETIMEOUT = -2, /* no complete reply in time (worker killed) */
    ATTN_PEER_EDEAD = -3,    /* the worker exited or closed its pipes */
    ATTN_PEER_EPROTO = -4,   /* a reply that is not the protocol (worker killed) */
    ATTN_PEER_ESYS = -5,     /* a system call failed: spawn, pipe, shm, mmap */
    ATTN_PEER_EINVAL = -6    /* a bad argument, or a handle already broken */
};

typedef enum attn_peer_type { ATTN_PEER_F32, ATTN_PEER_F16, ATTN_PEER_BF16 } attn_peer_type;
const char *attn_peer_type_name(attn_peer_type t); /* "f32", "f16", "bf16" */
size_t attn_peer_type_size(attn_peer_type t);

/* Element types of Q, of K and V, and of O. */
typedef struct attn_peer_types {
    attn_peer_type q, kv, o;
} attn_peer_types;

/* The shared buffer: Q, K, V, O in attnbench's layout (attn.h), each region
 * 64-byte aligned. Fill q, k, v before attn_peer_setup; it writes o. */
typedef struct attn_peer_buffer {
    char path[64]; /* /dev/shm/attnbench-peer-XXXXXX */
    void *base;
    size_t bytes;
    size_t off_q, off_k, off_v, off_o;
    void *q, *k, *v, *o;
    attn_shape shape;
    attn_peer_types types;
} attn_peer_buffer;

/* Creates and maps the file (zero-filled). `dir` NULL means /dev/shm. */
int attn_peer_buffer_create(attn_peer_buffer *b, const attn_shape *s, attn_peer_types t,
                            const char *dir, char *err, size_t cap);
/* Unmaps and unlinks it; safe on a zeroed or already closed buffer. */
int attn_peer_buffer_close(attn_peer_buffer *b, char *err, size_t cap);

typedef struct attn_peer attn_peer;

typedef struct attn_peer_opts {
    const char *python;   /* interpreter: a path, or a name looked up in PATH */
    const char *worker;   /* scripts/peers/worker.py (or a fake one in tests) */
    const char *peer;     /* torch | onnxruntime | openvino */
    int hello_timeout_ms; /* importing torch takes seconds: <= 0 means 60000 */
} attn_peer_opts;

/* Starts the worker and reads its hello. ATTN_PEER_OK: *out is the handle.
 * ATTN_PEER_SKIP: the worker cannot import its library (the reason in
 * `err`); *out is NULL, the worker has been reaped. */
int attn_peer_start(const attn_peer_opts *o, attn_peer **out, char *err, size_t cap);

pid_t attn_peer_pid(const attn_peer *p);
const char *attn_peer_version(const attn_peer *p); /* the library's, from hello */

/* How a set-up problem runs: on `threads` threads; its calls rotating
 * through `copies` copies of the inputs (1 to 64; decode cells take as
 * many as the variants' rows do, perf_cell.h, so neither side is served
 * from a cache the other streams past); the worker's own arrays on
 * `pages` ("huge" or "base", big_alloc.h; NULL leaves NumPy's default). */
enum { ATTN_PEER_MAX_COPIES = 64 };
typedef struct attn_peer_run {
    int threads;
    int copies;
    const char *pages;
} attn_peer_run;

/* Sends setup for the problem in `b` (its shape has a resolved scale, not
 * 0), run as `run` says: the worker builds its inputs, runs once and
 * writes that output into b->o. OK fills `op` with exactly what the worker
 * calls; ATTN_PEER_SKIP fills `err` with why it cannot compute this exact
 * problem. timeout_ms covers building, compiling and the one call. */
int attn_peer_setup(attn_peer *p, const attn_peer_buffer *b, const attn_peer_run *run,
                    int timeout_ms, char *op, size_t op_cap, char *err, size_t cap);

/* `reps` calls of the set-up problem, each timed alone by the worker:
 * ns[0..reps) in nanoseconds. */
int attn_peer_time(attn_peer *p, int reps, int timeout_ms, int64_t *ns, char *err, size_t cap);
/* The same loop around an empty Python call: the per-call overhead floor. */
int attn_peer_empty(attn_peer *p, int reps, int timeout_ms, int64_t *ns, char *err, size_t cap);

/* Sends quit, waits up to 2 s for the worker to exit (then kills it) and
 * frees the handle; NULL is fine. OK only when the worker exited 0. */
int attn_peer_close(attn_peer *p, char *err, size_t cap);

#endif
