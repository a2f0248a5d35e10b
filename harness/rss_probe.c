#include "rss_probe.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attn.h"
#include "cases.h"
#include "dtype.h"
#include "timer.h"
#include "variant.h"

extern char **environ;

/* The high-water mark of this process's resident set (VmHWM). Not
 * getrusage's ru_maxrss: Linux carries that across execve, so a probe
 * spawned by a matrix run holding 1.5 GiB of bandwidth arrays would report
 * its parent's peak. VmHWM belongs to the address space exec made. */
static size_t peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return (size_t)kib * 1024;
}

/* A tensor of `elems` elements of type t, filled in place without an f32
 * copy first (that copy would stay in VmHWM): N(0,1) data for f32, for a
 * narrow type a deterministic spread of small values (its memory is
 * measured, not its numbers). */
static void *make_tensor(const attn_case *c, int32_t t, size_t elems, float *f32, uint32_t seed)
{
    if (t == ATTN_F32)
        return f32;
    uint16_t *h = malloc(elems * sizeof *h);
    for (size_t i = 0; h && i < elems; i++) {
        seed = seed * 1664525u + 1013904223u;
        float x = (float)(int32_t)(seed >> 8) * 0x1p-23f; /* [-1, 1) */
        h[i] = t == ATTN_F16 ? attn_f32_to_f16(x) : attn_f32_to_bf16(x);
    }
    (void)c;
    return h;
}

int attn_rss_probe_run(const char *variant, int32_t n, int32_t d, int causal, attn_rss_result *out)
{
    const attn_variant *v = attn_find_variant(variant);
    if (!v)
        return ATTN_ENOTFOUND;
    if (!attn_variant_runnable(v))
        return ATTN_ENOTSUP;
    /* The variant's own types: f32, or bf16 for one that takes no f32. */
    const attn_types ty = attn_variant_default_types(v);
    const attn_run_options opt = {ty, attn_variant_default_p_round(v)};
    attn_case c = {.shape = {1, 1, 1, n, n, d, d, causal ? 1 : 0, 0.0f}, .data = DATA_NORMAL};
    const size_t elems = (size_t)n * (size_t)d;
    memset(out, 0, sizeof *out);
    out->input_bytes =
        elems * (2 * attn_dtype_size(ty.kv) + attn_dtype_size(ty.q) + attn_dtype_size(ty.o));
    const int all_f32 = attn_types_all_f32(&ty);
    float *qf = all_f32 ? malloc(elems * sizeof(float)) : NULL;
    float *kf = all_f32 ? malloc(elems * sizeof(float)) : NULL;
    float *vf = all_f32 ? malloc(elems * sizeof(float)) : NULL;
    attn_shape s = c.shape;
    if (all_f32 && qf && kf && vf)
        s = attn_case_fill(&c, 1, qf, kf, vf);
    void *q = make_tensor(&c, ty.q, elems, qf, 1), *k = make_tensor(&c, ty.kv, elems, kf, 2);
    void *vv = make_tensor(&c, ty.kv, elems, vf, 3);
    void *o = malloc(elems * attn_dtype_size(ty.o));
    int rc = ATTN_ENOMEM;
    if (q && k && vv && o) {
        memset(o, 0, elems * attn_dtype_size(ty.o)); /* resident, like the inputs */
        attn_run_report report;
        int64_t t0 = attn_now_ns();
        rc = attn_run_variant_typed(v, &s, &opt, q, k, vv, o, &report, NULL, 0);
        out->seconds = (double)(attn_now_ns() - t0) * 1e-9;
        out->workspace_bytes = report.workspace_bytes;
    }
    out->peak_rss_bytes = peak_rss_bytes();
    if (!all_f32) {
        free(q);
        free(k);
        free(vv);
    }
    free(qf);
    free(kf);
    free(vf);
    free(o);
    return rc;
}

int attn_rss_probe_spawn(const char *variant, int32_t n, int32_t d, int causal,
                         attn_rss_result *out, char *err, size_t cap)
{
    char n_text[16], d_text[16], name[64];
    snprintf(n_text, sizeof n_text, "%d", (int)n);
    snprintf(d_text, sizeof d_text, "%d", (int)d);
    snprintf(name, sizeof name, "%s", variant);
    char *argv[] = {"attnbench", "rss",  "--variant",
                    name,        "--n",  n_text,
                    "--d",       d_text, causal ? "--causal" : NULL,
                    NULL};
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0) {
        snprintf(err, cap, "cannot make a pipe for the rss probe");
        return -1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fd[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fd[1]);
    if (rc != 0) {
        close(pipe_fd[0]);
        snprintf(err, cap, "cannot start the rss probe: %s", strerror(rc));
        return -1;
    }
    char text[512] = "";
    size_t len = 0;
    ssize_t got;
    while (len + 1 < sizeof text && (got = read(pipe_fd[0], text + len, sizeof text - 1 - len)) > 0)
        len += (size_t)got;
    text[len] = '\0';
    close(pipe_fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    unsigned long long in = 0, peak = 0, ws = 0;
    double secs = 0;
    const char *line = strstr(text, "input_bytes=");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !line ||
        sscanf(line, "input_bytes=%llu peak_rss_bytes=%llu workspace_bytes=%llu seconds=%lf", &in,
               &peak, &ws, &secs) != 4) {
        snprintf(err, cap, "rss probe of %s failed: %s", variant, text[0] ? text : "no output");
        return -1;
    }
    *out = (attn_rss_result){(size_t)in, (size_t)peak, (size_t)ws, secs};
    return 0;
}

int attn_rss_targets_report(FILE *f, const char *const *names, int *probed)
{
    int met = 0, n = 0;
    for (int i = 0; names[i]; i++) {
        const attn_variant *v = attn_find_variant(names[i]);
        if (!v || !attn_variant_runnable(v))
            continue;
        attn_rss_result r;
        char err[600];
        if (attn_rss_probe_spawn(names[i], 65536, 64, 1, &r, err, sizeof err) != 0) {
            fprintf(f, "  - peak RSS %-6s n=65536 d=64: %s\n", names[i], err);
            continue;
        }
        n++;
        int ok = r.peak_rss_bytes <= r.input_bytes + ATTN_RSS_ALLOWANCE;
        met += ok;
        fprintf(f,
                "  %s peak RSS %-6s n=65536 d=64: inputs %.0f MiB + %.1f MiB "
                "(target <= + 64 MiB; workspace %.2f MiB)\n",
                ok ? "\u2713" : "\u2717", names[i], (double)r.input_bytes / (1 << 20),
                ((double)r.peak_rss_bytes - (double)r.input_bytes) / (1 << 20),
                (double)r.workspace_bytes / (1 << 20));
    }
    if (probed)
        *probed = n;
    return met;
}
