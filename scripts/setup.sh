#!/usr/bin/env bash
# Sets up attnbench on a Debian machine: installs what is missing with
# apt-get, makes the Python virtual environment for scripts/, configures and
# builds into build/. Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh [--build-dir DIR] [extra cmake -D options...]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir="$root/build"
if [[ ${1:-} == --build-dir ]]; then
    build_dir=$2
    shift 2
fi

# Debian packages: compilers and CMake; Google Benchmark 1.7 (the bench
# shim); libxsmm 1.17 (JIT GEMM tiles); OpenBLAS (the BLAS peer); clang,
# libomp-dev (clang's OpenMP, and Archer for TSan) and valgrind (sanitizers,
# fuzzers, memcheck); clang-format (the format test); python3-venv (scripts/);
# libsimde-dev (header-only: the avx512 sources emulated on AVX2 in a test).
packages=(cmake make gcc g++ pkg-config git libbenchmark-dev libxsmm-dev libopenblas-dev libsimde-dev
          clang clang-format llvm libomp-dev valgrind python3 python3-venv python3-pip)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The Python side (plots, report, compare) runs from its own environment,
# pinned by scripts/requirements.txt; rebuilt when the pins change.
venv="$root/.venv"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$root/scripts/requirements.txt" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python3 || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    echo "setup: creating $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/scripts/requirements.txt"
    echo "$want" > "$stamp"
fi

cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
