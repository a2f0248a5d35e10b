/* Bad input the contract tests (test_contract.c) do not reach: memory
 * exhaustion for every variant (a workspace over the limit, and an
 * allocation that fails below it), extreme but finite scales. README's
 * "Bad input: what the user gets" points here. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accuracy.h"
#include "attn.h"
#include "check.h"
#include "cpu_features.h"
#include "default_types.h"
#include "variant.h"

/* Sanitizer runtimes reserve terabytes of address space: an address-space
 * limit would break them, not the code under test. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

static const uint32_t canary = 0x7FA0C0DEu;

static int untouched(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &x[i], sizeof b);
        if (b != canary)
            return 0;
    }
    return 1;
}

static void set_canary(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy(&x[i], &canary, sizeof canary);
}

/* The limit's rule (half the physical memory, at most 64 GiB, 4 GiB when
 * the system does not say), and that the limit attn_run holds a call to,
 * read once with the CPU, is that rule on this machine's memory. */
static void test_workspace_limit_rule(check_tally *t)
{
    const size_t gib = (size_t)1 << 30;
    CHECK(t, attn_cpu_workspace_limit(4 * (long)(gib / 4096), 4096) == 2 * gib,
          "4 GiB of memory: %zu", attn_cpu_workspace_limit(4 * (long)(gib / 4096), 4096));
    CHECK(t, attn_cpu_workspace_limit(3, 4096) == 4096, "3 pages: %zu",
          attn_cpu_workspace_limit(3, 4096));
    CHECK(t, attn_cpu_workspace_limit(512 * (long)(gib >> 21), 1 << 21) == 64 * gib,
          "512 GiB of memory: %zu, want the 64 GiB cap",
          attn_cpu_workspace_limit(512 * (long)(gib >> 21), 1 << 21));
    CHECK(t, attn_cpu_workspace_limit(-1, 4096) == 4 * gib, "unknown pages");
    CHECK(t, attn_cpu_workspace_limit(1000, 0) == 4 * gib, "unknown page size");
    const size_t here = attn_cpu_workspace_limit(sysconf(_SC_PHYS_PAGES), sysconf(_SC_PAGESIZE));
    CHECK(t, attn_workspace_limit() == here, "attn_workspace_limit() %zu, this machine's %zu",
          attn_workspace_limit(), here);
}

/* Every variant whose workspace grows with the shape must refuse one over
 * the limit with ATTN_ENOMEM before reading anything: the tensors here are
 * 64 floats standing in for gigabytes, so a read would be out of bounds
 * (and ASan would say so). A variant whose workspace stays small for all
 * these shapes (the streaming ones) is reported, not failed. Each variant
 * in its default types and class (variant.h). */
static void test_workspace_over_limit(check_tally *t)
{
    const attn_shape huge[] = {
        {1, 1, 1, 300000, 300000, 1, 1, 0, 0.0f},     /* naive: n^2 scores, 360 GB */
        {1, 1, 1, 256, ATTN_MAX_ROWS, 1, 1, 0, 0.0f}, /* a block of rows x ~2^31 keys */
        {1, 1, 1, 1 << 20, 1 << 20, 1 << 10, 1 << 10, 0, 0.0f},
        {1, 1, 1, 1, ATTN_MAX_ROWS, 1 << 20, 1 << 20, 0, 0.0f}, /* decode, huge head dims */
        {1, 1, 1, 1, 1, INT32_MAX, INT32_MAX, 0, 0.0f},         /* a row padded past int32 */
    };
    const size_t limit = attn_workspace_limit();
    float q[64], k[64], v[64], o[64];
    for (int vi = 0; vi < attn_variant_table_size; vi++) {
        const attn_variant *var = attn_variant_table[vi];
        if (!attn_variant_runnable(var))
            continue;
        int refused = 0;
        for (size_t si = 0; si < sizeof huge / sizeof huge[0]; si++) {
            CHECK(t, attn_check_shape(&huge[si], NULL, 0) == ATTN_OK, "shape %zu refused", si);
            const attn_types ty = attn_variant_default_types(var);
            const attn_run_options opt = {ty, attn_variant_default_p_round(var)};
            attn_problem p = attn_problem_make_typed(&huge[si], &ty, opt.p_round, q, k, v, NULL);
            size_t bytes = 0;
            int ws = attn_variant_workspace_typed(var, &p, &bytes);
            CHECK(t, ws == ATTN_OK || ws == ATTN_ENOMEM, "%s: workspace_size %d", var->name, ws);
            if (ws == ATTN_OK && bytes <= limit)
                continue; /* it would run: not with 64-float stand-ins */
            set_canary(o, 64);
            char msg[256];
            int rc =
                attn_run_variant_typed(var, &huge[si], &opt, q, k, v, o, NULL, msg, sizeof msg);
            CHECK(t, rc == ATTN_ENOMEM, "%s on shape %zu: rc %d, want ENOMEM", var->name, si, rc);
            CHECK(t, strstr(msg, "workspace") != NULL, "%s: message '%s'", var->name, msg);
            CHECK(t, untouched(o, 64), "%s wrote O on ENOMEM", var->name);
            set_canary(o, 64);
            CHECK(t,
                  attn_run_typed(var->name, &huge[si], &ty, q, k, v, o) == ATTN_ENOMEM &&
                      untouched(o, 64),
                  "%s: public attn_run on shape %zu", var->name, si);
            refused++;
        }
        printf("%-8s %s\n", var->name,
               refused ? "refuses a workspace over the limit with ATTN_ENOMEM"
                       : "workspace stays under the limit for every huge shape (streaming)");
    }
    CHECK(t, attn_strerror(ATTN_ENOMEM) && strstr(attn_strerror(ATTN_ENOMEM), "half the physical"),
          "ENOMEM text");
}

/* A workspace under the limit that malloc cannot give: naive at n = 20000
 * needs 1.6 GB of scores; under a 1 GiB address-space limit (in a child, so
 * the limit does not outlive the check) attn_run must say ATTN_ENOMEM and
 * leave O alone. */
static void test_allocation_failure(check_tally *t)
{
    if (UNDER_SANITIZER) {
        printf("allocation failure: skipped under a sanitizer (it needs the address space)\n");
        return;
    }
    const attn_shape s = {1, 1, 1, 20000, 20000, 1, 1, 0, 0.0f};
    float *buf = malloc(sizeof(float) * 20000 * 4);
    CHECK(t, buf != NULL, "malloc");
    if (!buf)
        return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit lim = {(rlim_t)1 << 30, (rlim_t)1 << 30};
        if (setrlimit(RLIMIT_AS, &lim) != 0)
            _exit(3);
        float *o = buf + 3 * 20000;
        set_canary(o, 20000);
        char msg[256];
        int rc = attn_run_variant(attn_find_variant("naive"), &s, buf, buf + 20000, buf + 40000, o,
                                  NULL, msg, sizeof msg);
        if (rc != ATTN_ENOMEM)
            _exit(1);
        if (!untouched(o, 20000) || !strstr(msg, "cannot allocate"))
            _exit(2);
        _exit(0);
    }
    int status = 0;
    CHECK(t, pid > 0 && waitpid(pid, &status, 0) == pid, "fork/wait");
    CHECK(t, WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "naive under a 1 GiB address-space limit: child status %d (1: rc not ENOMEM, 2: O "
          "written or no 'cannot allocate' message, 3: setrlimit)",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    free(buf);
}

/* Finite scales at the edges are accepted (the contract: any finite value)
 * and must not crash; rows that see no key stay +0 whatever the scale.
 * Each variant in its default types (default_types.h). */
static void test_extreme_scales(check_tally *t)
{
    const float scales[] = {FLT_MAX, -FLT_MAX, 1e30f, 0x1p-149f, -0.0f, FLT_MIN};
    attn_shape s = {1, 2, 1, 12, 5, 4, 3, 1, 0.0f}; /* rows 0..6 see no key */
    float q[2 * 12 * 4], k[5 * 4], v[5 * 3], o[2 * 12 * 3];
    for (int i = 0; i < 96; i++)
        q[i] = (float)sin(i * 0.37);
    for (int i = 0; i < 20; i++)
        k[i] = (float)cos(i * 0.71);
    for (int i = 0; i < 15; i++)
        v[i] = (float)(i % 7) - 3.0f;
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
        s.scale = scales[si];
        for (int vi = 0; vi < attn_variant_table_size; vi++) {
            const attn_variant *var = attn_variant_table[vi];
            if (!attn_variant_runnable(var))
                continue;
            set_canary(o, 72);
            int rc = run_default_types(var->name, &s, q, k, v, o);
            CHECK(t, rc == ATTN_OK, "%s scale %g: rc %d", var->name, (double)scales[si], rc);
            int zero_rows = 1, written = 1;
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < 12; i++)
                    for (int c = 0; c < 3; c++) {
                        float x = o[(h * 12 + i) * 3 + c];
                        uint32_t b;
                        memcpy(&b, &x, sizeof b);
                        written &= b != canary;
                        if (i < 7)
                            zero_rows &= b == 0;
                    }
            CHECK(t, written, "%s scale %g: O not fully written", var->name, (double)scales[si]);
            CHECK(t, zero_rows, "%s scale %g: rows that see no key are not +0", var->name,
                  (double)scales[si]);
            /* Tiny scales make every score ~0: each visible row is the mean of the V rows it
             * sees, finite. */
            if (fabsf(scales[si]) <= FLT_MIN)
                for (int e = 7 * 3; e < 12 * 3; e++)
                    CHECK(t, isfinite(o[e]), "%s scale %g: non-finite %g", var->name,
                          (double)scales[si], (double)o[e]);
        }
    }
}

int main(void)
{
    check_tally t = {0};
    test_workspace_limit_rule(&t);
    test_workspace_over_limit(&t);
    test_allocation_failure(&t);
    test_extreme_scales(&t);
    return check_report("hostile", &t);
}
