/* The C client driving the real workers, as `attnbench matrix` will: each
 * peer's output for a GQA, causal n_q < n_kv problem checked against
 * attnbench's own double-precision reference (attn_reference), timings
 * returned, and the workers isolated: distinct processes, each mapping its
 * own library and not the others'.
 * Usage: test_peer_real PEERS_PYTHON WORKER_PY */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "peer_client.h"

enum { N_PEERS = 3 };
static const char *const peers[N_PEERS] = {"torch", "onnxruntime", "openvino"};
static const char *const markers[N_PEERS] = {"libtorch_cpu.so", "onnxruntime_pybind11_state",
                                             "libopenvino.so"};

/* Heads 4 over 2, 5 queries against 12 keys, bottom-right causal, d = 16
 * (ORT's GroupQueryAttention needs a multiple of 8), a non-default scale. */
static const attn_shape shape = {.batch = 1,
                                 .heads_q = 4,
                                 .heads_kv = 2,
                                 .n_q = 5,
                                 .n_kv = 12,
                                 .d_k = 16,
                                 .d_v = 16,
                                 .causal = 1,
                                 .scale = 0.3f};

static int maps_contain(pid_t pid, const char *needle)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
    FILE *f = fopen(path, "r");
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return found;
}

static void fill(float *x, size_t n, unsigned *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        x[i] = (float)((*seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_peer_real PEERS_PYTHON WORKER_PY\n");
        return 2;
    }
    check_tally t = {0, 0};
    if (access(argv[1], X_OK) != 0) {
        printf("peers: %s does not exist: run scripts/setup_peers.sh to create .venv-peers\n",
               argv[1]);
        t.failed++;
        return check_report("peer_real", &t);
    }
    char err[1024] = "", op[1024] = "";
    attn_peer_buffer b;
    const attn_peer_types f32 = {ATTN_PEER_F32, ATTN_PEER_F32, ATTN_PEER_F32};
    if (attn_peer_buffer_create(&b, &shape, f32, NULL, err, sizeof err) != ATTN_PEER_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const size_t nq = 4 * 5 * 16, nk = 2 * 12 * 16, no = 4 * 5 * 16;
    unsigned seed = 12345;
    fill(b.q, nq, &seed);
    fill(b.k, nk, &seed);
    fill(b.v, nk, &seed);
    double *want = malloc(no * sizeof *want);
    attn_reference(&shape, b.q, b.k, b.v, want);
    float vmax = 0;
    for (size_t i = 0; i < nk; i++)
        vmax = fmaxf(vmax, fabsf(((float *)b.v)[i]));
    /* 300 u of max|V|, as in peer_case.py: f32 error at these sizes is tens
     * of u; a wrong mask, scale or head mapping is ~10^6 u. */
    const double tol = 300.0 * ldexp(1.0, -24) * vmax;

    attn_peer *p[N_PEERS] = {0};
    for (int i = 0; i < N_PEERS; i++) {
        attn_peer_opts o = {.python = argv[1], .worker = argv[2], .peer = peers[i]};
        int rc = attn_peer_start(&o, &p[i], err, sizeof err);
        CHECK(&t, rc == ATTN_PEER_OK, "%s: start %d %s", peers[i], rc, err);
        if (rc != ATTN_PEER_OK)
            continue;
        memset(b.o, 0xFF, no * sizeof(float)); /* NaN: a peer writing nothing fails */
        /* Two copies called in turn, as a decode cell's (the first's O is checked). */
        const attn_peer_run run = {2, 2, "huge"};
        rc = attn_peer_setup(p[i], &b, &run, 120000, op, sizeof op, err, sizeof err);
        CHECK(&t, rc == ATTN_PEER_OK && strstr(op, "; 2 copies of the inputs, called in turn"),
              "%s: setup %d %s (op: %s)", peers[i], rc, err, op);
        double worst = 0;
        int nan = 0;
        for (size_t e = 0; e < no; e++) {
            double d = fabs((double)((float *)b.o)[e] - want[e]);
            nan |= isnan(d);
            worst = d > worst ? d : worst;
        }
        CHECK(&t, rc == ATTN_PEER_OK && !nan && worst <= tol,
              "%s: O off the reference by %.3g (tolerance %.3g)", peers[i], worst, tol);
        printf("%s %s: %s\n", peers[i], attn_peer_version(p[i]), op);
        int64_t ns[3] = {0}, floor_ns[3] = {0};
        rc = attn_peer_time(p[i], 3, 60000, ns, err, sizeof err);
        CHECK(&t, rc == ATTN_PEER_OK && ns[0] > 0 && ns[2] > 0, "%s: time %d %s", peers[i], rc,
              err);
        rc = attn_peer_empty(p[i], 3, 60000, floor_ns, err, sizeof err);
        CHECK(&t, rc == ATTN_PEER_OK && floor_ns[2] > 0, "%s: empty %d %s", peers[i], rc, err);
    }
    for (int i = 0; i < N_PEERS; i++)
        for (int j = 0; p[i] && j < N_PEERS; j++) {
            if (j > i && p[j])
                CHECK(&t, attn_peer_pid(p[i]) != attn_peer_pid(p[j]), "%s and %s share a pid",
                      peers[i], peers[j]);
            int has = maps_contain(attn_peer_pid(p[i]), markers[j]);
            CHECK(&t, has == (i == j), "%s's worker %s %s", peers[i], has ? "maps" : "does not map",
                  markers[j]);
        }
    for (int i = 0; i < N_PEERS; i++)
        CHECK(&t, attn_peer_close(p[i], err, sizeof err) == ATTN_PEER_OK, "%s: close %s", peers[i],
              err);
    free(want);
    attn_peer_buffer_close(&b, err, sizeof err);
    return check_report("peer_real", &t);
}
