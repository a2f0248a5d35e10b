// The one C++ file of attnbench: Google Benchmark behind the extern "C"
// functions of gbench_shim.h. No exception and no benchmark::State ever
// crosses into C; the timing loop is here.
#include "gbench_shim.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace
{

struct CounterSpec {
    enum Kind { kRate, kValue, kPercent } kind;
    std::string name;
    double amount; // per iteration (rate, percent) or the value itself
    double peak;   // per second (percent only)
};

} // namespace

// The handle C holds. It is owned by the lambda registered with Google
// Benchmark (a shared_ptr in its capture), so it lives as long as the
// library keeps the benchmark: no registry of our own.
struct attn_gb_benchmark {
    attn_gb_fn fn = nullptr;
    attn_gb_setup_fn setup = nullptr;
    void *ctx = nullptr;
    benchmark::internal::Benchmark *bench = nullptr;
    std::vector<CounterSpec> counters;
};

namespace
{

void run_benchmark(attn_gb_benchmark *b, benchmark::State &state)
{
    if (b->setup) {
        char msg[256] = "setup failed";
        if (b->setup(b->ctx, msg, sizeof msg) != 0) {
            state.SkipWithError(msg);
            for (auto _ : state) {
            } // 1.7 asserts the loop was entered even when skipping
            return;
        }
    }
    // Our own wall clock around the same loop the library times, for the
    // percentage counters (State does not expose its elapsed time).
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state)
        b->fn(b->ctx);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const double iterations = static_cast<double>(state.iterations());
    for (const CounterSpec &c : b->counters) {
        switch (c.kind) {
        case CounterSpec::kRate:
            state.counters[c.name] =
                benchmark::Counter(c.amount, benchmark::Counter::kIsIterationInvariantRate);
            break;
        case CounterSpec::kValue:
            state.counters[c.name] = benchmark::Counter(c.amount);
            break;
        case CounterSpec::kPercent: {
            double rate = elapsed.count() > 0 ? c.amount * iterations / elapsed.count() : 0.0;
            state.counters[c.name] = benchmark::Counter(c.peak > 0 ? 100.0 * rate / c.peak : 0.0);
            break;
        }
        }
    }
}

int add_counter(attn_gb_benchmark *b, CounterSpec spec)
{
    if (!b || !spec.name.size())
        return -1;
    try {
        b->counters.push_back(std::move(spec));
    } catch (...) {
        return -1;
    }
    return 0;
}

} // namespace

extern "C" {

int attn_gb_initialize(int *argc, char **argv)
{
    try {
        benchmark::Initialize(argc, argv);
        return benchmark::ReportUnrecognizedArguments(*argc, argv) ? -1 : 0;
    } catch (...) {
        return -1;
    }
}

attn_gb_benchmark *attn_gb_register(const char *name, attn_gb_fn fn, void *ctx)
{
    if (!name || !fn)
        return nullptr;
    try {
        auto handle = std::make_shared<attn_gb_benchmark>();
        handle->fn = fn;
        handle->ctx = ctx;
        handle->bench = benchmark::RegisterBenchmark(
            name, [handle](benchmark::State &state) { run_benchmark(handle.get(), state); });
        return handle->bench ? handle.get() : nullptr;
    } catch (...) {
        return nullptr;
    }
}

void attn_gb_setup(attn_gb_benchmark *b, attn_gb_setup_fn setup)
{
    if (b)
        b->setup = setup;
}

void attn_gb_use_real_time(attn_gb_benchmark *b)
{
    if (b)
        b->bench->UseRealTime();
}

int attn_gb_rate_counter(attn_gb_benchmark *b, const char *name, double per_iteration)
{
    return name ? add_counter(b, {CounterSpec::kRate, name, per_iteration, 0.0}) : -1;
}

int attn_gb_value_counter(attn_gb_benchmark *b, const char *name, double value)
{
    return name ? add_counter(b, {CounterSpec::kValue, name, value, 0.0}) : -1;
}

int attn_gb_percent_counter(attn_gb_benchmark *b, const char *name, double per_iteration,
                            double peak_per_second)
{
    return name ? add_counter(b, {CounterSpec::kPercent, name, per_iteration, peak_per_second})
                : -1;
}

size_t attn_gb_run(void)
{
    try {
        return benchmark::RunSpecifiedBenchmarks();
    } catch (...) {
        return 0;
    }
}

void attn_gb_shutdown(void)
{
    try {
        benchmark::ClearRegisteredBenchmarks();
        benchmark::Shutdown();
    } catch (...) {
    }
}

} // extern "C"
