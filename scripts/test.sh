#!/usr/bin/env bash
# Sets up (scripts/setup.sh) with warnings as errors, then runs every test.
#   scripts/test.sh [ctest options...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" -DATTN_WERROR=ON
# The peers' tests (ctest label peers) need their environment: a few GB of
# PyPI wheels (torch brings CUDA libraries), about two minutes the first time.
"$root/scripts/setup_peers.sh"
cd "$root/build"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
"$root/scripts/test_hardening.sh" # ASan+UBSan ctest, fuzzers, TSan, valgrind
