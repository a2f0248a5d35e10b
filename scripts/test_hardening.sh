#!/usr/bin/env bash
# Hardening checks, run by scripts/test.sh after the normal ctest run:
#   asan      every ctest again, built with AddressSanitizer + UBSan (gcc, build-asan/)
#   fuzz      each libFuzzer target in fuzz/ for FUZZ_SECONDS from its seed corpus
#             (clang, ASan + UBSan, build-fuzz/)
#   tsan      tests/test_concurrent and test_threads under ThreadSanitizer (clang +
#             libomp + Archer, build-tsan/)
#   valgrind  memcheck on build/ (set up by scripts/setup.sh): special-value verify
#             runs, the CLI's refusals, test_contract, test_concurrent
# Any sanitizer report, fuzzer crash, data race or memcheck error fails.
#
#   scripts/test_hardening.sh [asan] [fuzz] [tsan] [valgrind]    (default: all four)
# Environment: FUZZ_SECONDS (default 45) per target; ASAN_CTEST_ARGS, extra ctest
# arguments for the ASan run (e.g. "-R verify_"); CLEAN=1 to rebuild from scratch;
# HARDENING=0 to skip all of it (scripts/test.sh then runs only the normal ctest).
set -euo pipefail
if [[ ${HARDENING:-1} == 0 ]]; then
    echo "hardening: skipped (HARDENING=0)"
    exit 0
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc)
fuzz_seconds=${FUZZ_SECONDS:-45}
stages=("$@")
((${#stages[@]})) || stages=(asan fuzz tsan valgrind)
summary=()

say() { printf '\n=== hardening: %s\n' "$*"; }
fail() {
    echo "hardening: FAILED: $*" >&2
    exit 1
}
configure() { # configure DIR [cmake options...]
    local dir=$1
    shift
    [[ ${CLEAN:-0} == 1 ]] && rm -rf "$dir"
    cmake -S "$root" -B "$dir" "$@" >/dev/null
}

# A sanitizer report gets exit code 86, never 1 or 2, so a CLI test that
# expects a refusal (exit 1 or 2) cannot mistake a report for it.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86

stage_asan() {
    say "ASan + UBSan: every ctest (gcc, build-asan/)"
    local dir="$root/build-asan"
    configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_SANITIZE=ON -DATTN_WERROR=ON
    cmake --build "$dir" -j "$jobs"
    # Not repeated: label python (the scripts' unit tests run no C code) and
    # asan_skip (timing plausibility checks, meaningless with instrumented
    # loads; tests/CMakeLists.txt says which).
    # shellcheck disable=SC2086
    (cd "$dir" && ctest --output-on-failure --timeout 900 -j "$jobs" -LE 'asan_skip|python' \
        ${ASAN_CTEST_ARGS:-}) || fail "ctest under ASan + UBSan (build-asan/)"
}

stage_fuzz() {
    say "libFuzzer: each target ${fuzz_seconds}s from fuzz/corpus (clang, build-fuzz/)"
    local dir="$root/build-fuzz"
    configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_FUZZ=ON \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
    cmake --build "$dir" -j "$jobs" --target fuzz_all
    local targets=() t pids=() failed=()
    for t in "$root"/fuzz/fuzz_*.c; do
        t=$(basename "$t" .c)
        [[ -x $dir/fuzz/$t ]] && targets+=("$t")
    done
    # The targets run side by side; new inputs go to build-fuzz/corpus/<t>,
    # never into the checked-in seeds. -close_fd_mask=3 silences the code
    # under test (the CLI parsers print every refusal); a crash is re-run
    # below with its output.
    for t in "${targets[@]}"; do
        rm -rf "$dir/artifacts/$t"
        mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t"
        "$dir/fuzz/$t" -max_total_time="$fuzz_seconds" -timeout=30 -close_fd_mask=3 \
            -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t/" \
            "$dir/corpus/$t" "$root/fuzz/corpus/$t" >"$dir/$t.log" 2>&1 &
        pids+=($!)
    done
    for i in "${!targets[@]}"; do
        t=${targets[$i]}
        if wait "${pids[$i]}"; then
            local execs
            execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$t.log")
            echo "$t: ${execs:-?} executions in ${fuzz_seconds}s, no crash"
            summary+=("fuzz $t: ${execs:-?} executions")
        else
            failed+=("$t")
            echo "$t: CRASH (log: $dir/$t.log)"
            grep -m1 -A30 -E 'ERROR: |runtime error|violated|deadly signal|timeout' "$dir/$t.log" ||
                tail -30 "$dir/$t.log"
            local a
            for a in "$dir/artifacts/$t"/*; do
                [[ -f $a ]] || continue
                echo "--- reproducing $a"
                "$dir/fuzz/$t" "$a" 2>&1 | grep -v '^INFO' | head -40 || true
            done
        fi
    done
    ((${#failed[@]} == 0)) || fail "fuzz targets crashed: ${failed[*]} (inputs in $dir/artifacts/)"
}

stage_tsan() {
    say "ThreadSanitizer: test_concurrent, test_threads (clang + libomp, build-tsan/)"
    local dir="$root/build-tsan" flags="-fsanitize=thread -fno-omit-frame-pointer"
    configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
        -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
        -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
    cmake --build "$dir" -j "$jobs" --target test_concurrent test_threads
    # LLVM's OpenMP runtime is not built with TSan, so TSan cannot see its
    # barriers and would report every parallel region. Archer (libarcher.so,
    # shipped with libomp-dev) tells TSan about OpenMP's synchronisation
    # through OMPT, so the variants' own parallel regions are checked too;
    # ignore_noninstrumented_modules keeps the runtime's internals out.
    # Without Archer: one OpenMP thread per call (the pthreads still race).
    local archer omp_threads=2 cap=3
    archer=$(ls /usr/lib/llvm-"$(clang -dumpversion | cut -d. -f1)"/lib/libarcher.so 2>/dev/null ||
        true)
    if [[ -z $archer ]]; then
        echo "tsan: libarcher.so not found: OpenMP limited to 1 thread per call"
        omp_threads=1 cap=1
    fi
    local tsan="halt_on_error=1:exitcode=66:ignore_noninstrumented_modules=1:second_deadlock_stack=1"
    OMP_TOOL_LIBRARIES=$archer OMP_NUM_THREADS=$omp_threads ATTN_TEST_MAX_THREADS=$cap \
        TSAN_OPTIONS=$tsan "$dir/tests/test_concurrent" || fail "test_concurrent under ThreadSanitizer"
    # Every variant at 1..4 OpenMP threads: races inside their own parallel
    # regions (split-KV merges, per-thread workspace slices). Needs Archer.
    if [[ -n $archer ]]; then
        OMP_TOOL_LIBRARIES=$archer TSAN_OPTIONS=$tsan "$dir/tests/test_threads" ||
            fail "test_threads under ThreadSanitizer"
    fi
}

# vg EXPECTED_EXIT command...: memcheck errors exit 99, anything else must
# be the command's own expected exit code.
vg() {
    local want=$1 got=0
    shift
    valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible \
        --suppressions="$root/tests/valgrind.supp" "$@" >"$vg_log" 2>&1 || got=$?
    if [[ $got -ne $want ]]; then
        tail -40 "$vg_log"
        fail "valgrind: exit $got, want $want: $*"
    fi
    echo "memcheck clean (exit $got): ${*#"$root"/}"
}

stage_valgrind() {
    say "valgrind memcheck (build/)"
    if ! command -v valgrind >/dev/null; then
        echo "valgrind: SKIP (not installed)"
        summary+=("valgrind: SKIPPED, not installed")
        return
    fi
    local b="$root/build"
    [[ -x $b/attnbench ]] || fail "build/attnbench missing: run scripts/setup.sh first"
    cmake --build "$b" -j "$jobs" --target test_contract test_concurrent >/dev/null
    vg_log="$b/valgrind.log"
    export OMP_NUM_THREADS=2
    # ctest's valgrind_verify_quick covers verify --cases quick; here the
    # special-value paths (NaN, Inf, masked non-finite, subnormal data).
    vg 0 "$b/attnbench" verify --cases adversarial \
        --filter 'data=(nan_q|nan_k|nan_v|masked_nonfinite|inf|subnormal)'
    vg 0 "$b/attnbench" list
    vg 0 "$b/attnbench" demo
    vg 2 "$b/attnbench" verify --filter '('
    vg 2 "$b/attnbench" verify --seeds 12x
    ATTN_CPU_MASK=-avx2,,-fma vg 2 "$b/attnbench" list
    vg 0 "$b/tests/test_contract"
    vg 0 "$b/tests/test_concurrent"
    unset OMP_NUM_THREADS
}

for stage in "${stages[@]}"; do
    start=$SECONDS
    case $stage in
    asan | fuzz | tsan | valgrind) "stage_$stage" ;;
    *) fail "unknown stage '$stage' (asan, fuzz, tsan, valgrind)" ;;
    esac
    summary+=("stage $stage: $((SECONDS - start)) s")
done
say "passed"
printf '  %s\n' "${summary[@]}"
