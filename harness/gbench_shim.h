/* A C face for Google Benchmark, which has no C API. Modelled on its own
 * Rust binding (bindings/rust/src/rust_api.cc): a few extern "C" functions;
 * the timing loop stays on the C++ side and benchmark::State never crosses
 * over. A benchmark is a name, a C callback run once per iteration, and a
 * context pointer the callback receives; counters are declared up front as
 * per-iteration amounts and turned into rates by the library.
 *
 * Typical use:
 *   if (attn_gb_initialize(&argc, argv) != 0) return 2;   // unknown flag
 *   attn_gb_benchmark *b = attn_gb_register("name", fn, ctx);
 *   attn_gb_use_real_time(b);
 *   attn_gb_rate_counter(b, "GFLOP/s", gflop_per_call);
 *   attn_gb_run();
 *   attn_gb_shutdown(); */
#ifndef ATTN_GBENCH_SHIM_H
#define ATTN_GBENCH_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct attn_gb_benchmark attn_gb_benchmark; /* opaque */
typedef void (*attn_gb_fn)(void *ctx);

/* benchmark::Initialize: consumes the --benchmark_* flags it knows from
 * argv (updating *argc). Returns 0, or -1 after the library has printed
 * "unrecognized command-line flag" for whatever is left over. argv[0] is
 * the program name shown in Google Benchmark's own messages. */
int attn_gb_initialize(int *argc, char **argv);

/* Registers `fn(ctx)` as one iteration of benchmark `name` (copied). The
 * context must outlive attn_gb_run(). NULL on failure. */
attn_gb_benchmark *attn_gb_register(const char *name, attn_gb_fn fn, void *ctx);

/* Called before each timed loop of the benchmark (outside the timing):
 * sets up the inputs when they are not already there. A nonzero return
 * skips the benchmark with `msg` as its error (State::SkipWithError). */
typedef int (*attn_gb_setup_fn)(void *ctx, char *msg, size_t cap);
void attn_gb_setup(attn_gb_benchmark *b, attn_gb_setup_fn setup);

/* Time by the wall clock, not the main thread's CPU time: mandatory when
 * the callback runs OpenMP threads. */
void attn_gb_use_real_time(attn_gb_benchmark *b);

/* A rate counter: `per_iteration` units of work per callback, reported as
 * units per second of (real) time (kIsIterationInvariantRate). */
int attn_gb_rate_counter(attn_gb_benchmark *b, const char *name, double per_iteration);
/* A plain value counter reported as is. */
int attn_gb_value_counter(attn_gb_benchmark *b, const char *name, double value);
/* A plain counter worth 100 * (per_iteration * iterations / wall seconds) /
 * peak_per_second: the achieved rate as a percentage of a peak, timed by
 * the shim around the same loop. */
int attn_gb_percent_counter(attn_gb_benchmark *b, const char *name, double per_iteration,
                            double peak_per_second);

/* benchmark::RunSpecifiedBenchmarks (console reporter plus whatever
 * --benchmark_out asked for). Returns how many benchmarks matched the
 * filter and ran. */
size_t attn_gb_run(void);

/* benchmark::Shutdown. */
void attn_gb_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
