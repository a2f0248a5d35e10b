/* The Google Benchmark shim driven from C: a callback registered with a
 * context runs, its counters reach the JSON output, a failing setup is a
 * skip with the error and never runs the callback, and an unknown flag is
 * refused.   usage: test_gbench_shim OUT.json */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gbench_shim.h"

typedef struct counting {
    long calls;
    int setups;
} counting;

static void count_call(void *ctx)
{
    ((counting *)ctx)->calls++;
}

static int setup_ok(void *ctx, char *msg, size_t cap)
{
    (void)msg, (void)cap;
    ((counting *)ctx)->setups++;
    return 0;
}

static int setup_fails(void *ctx, char *msg, size_t cap)
{
    (void)ctx;
    snprintf(msg, cap, "inputs unavailable");
    return -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static const size_t cap = 1 << 20;
    char *buf = malloc(cap + 1);
    size_t n = buf ? fread(buf, 1, cap, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_gbench_shim OUT.json\n");
        return 2;
    }
    char out_flag[512];
    snprintf(out_flag, sizeof out_flag, "--benchmark_out=%s", argv[1]);
    char *gb_argv[] = {"test_gbench_shim", "--benchmark_min_time=0.01", out_flag,
                       "--benchmark_out_format=json", NULL};
    int gb_argc = 4;
    check_tally t = {0, 0};
    CHECK(&t, attn_gb_initialize(&gb_argc, gb_argv) == 0, "in %s", argv[1]);
    CHECK(&t, gb_argc == 1, "%d arguments left", gb_argc); /* every flag consumed */

    counting good = {0, 0}, bad = {0, 0};
    attn_gb_benchmark *b = attn_gb_register("shim/counts", count_call, &good);
    CHECK(&t, b != NULL, "in %s", argv[1]);
    attn_gb_setup(b, setup_ok);
    attn_gb_use_real_time(b);
    CHECK(&t, attn_gb_rate_counter(b, "GFLOP/s", 2.0) == 0, "in %s", argv[1]);
    CHECK(&t, attn_gb_rate_counter(b, "GB/s", 1.0) == 0, "in %s", argv[1]);
    CHECK(&t, attn_gb_percent_counter(b, "pct_peak", 1.0, 1e12) == 0, "in %s", argv[1]);
    CHECK(&t, attn_gb_value_counter(b, "threads", 3.0) == 0, "in %s", argv[1]);
    attn_gb_benchmark *f = attn_gb_register("shim/setup_fails", count_call, &bad);
    CHECK(&t, f != NULL, "in %s", argv[1]);
    attn_gb_setup(f, setup_fails);
    CHECK(&t, attn_gb_register(NULL, count_call, &good) == NULL, "in %s", argv[1]);

    size_t ran = attn_gb_run();
    CHECK(&t, ran == 2, "ran %zu benchmarks", ran);
    CHECK(&t, good.calls > 0, "callback ran %ld times", good.calls);
    CHECK(&t, good.setups >= 1, "in %s", argv[1]);
    CHECK(&t, bad.calls == 0, "callback of a failed setup ran %ld times", bad.calls);

    char *json = slurp(argv[1]);
    CHECK(&t, json != NULL, "cannot read %s", argv[1]);
    if (json) {
        CHECK(&t, strstr(json, "\"shim/counts/real_time\"") != NULL, "in %s", argv[1]);
        CHECK(&t, strstr(json, "\"GFLOP/s\"") != NULL, "in %s", argv[1]);
        CHECK(&t, strstr(json, "\"GB/s\"") != NULL, "in %s", argv[1]);
        CHECK(&t, strstr(json, "\"pct_peak\"") != NULL, "in %s", argv[1]);
        CHECK(&t, strstr(json, "\"threads\": 3") != NULL, "in %s", argv[1]);
        CHECK(&t, strstr(json, "inputs unavailable") != NULL, "in %s", argv[1]);
        free(json);
    }
    attn_gb_shutdown();

    /* An unknown flag is an error, not silently ignored. */
    char *bogus_argv[] = {"test_gbench_shim", "--benchmark_no_such_flag=1", NULL};
    int bogus_argc = 2;
    CHECK(&t, attn_gb_initialize(&bogus_argc, bogus_argv) == -1, "in %s", argv[1]);
    return check_report("gbench_shim", &t);
}
