#!/usr/bin/env bash
# test_wrong_visibility.sh ATTNBENCH_WRONG ATTNBENCH
# The judge is independent of the judged: with the shared visibility helper
# off by one (tests/wrong_visibility.c), verify must FAIL every variant (all
# of them take visibility from impls/visibility.c: naive, blocked and blas
# directly, the online ones through the driver). The same command with the
# right helper passes them all (the control).
set -u
wrong=$1 right=$2
mapfile -t users < <("$right" list --names)
((${#users[@]} > 0)) || { echo "FAILED: list --names gave no variant"; exit 1; }
args=(--cases quick --seeds 3)
out=$("$wrong" verify "${args[@]}" 2>&1)
rc=$?
fail=0
((rc != 0)) || { echo "FAILED: verify with the wrong helper exited 0"; fail=1; }
for v in "${users[@]}"; do
    if grep -Eq "^SKIP impl=$v " <<<"$out"; then
        echo "skip: $v (not runnable here)"
    elif grep -Eq "^FAIL impl=$v," <<<"$out"; then
        echo "ok: $v fails with one key too many"
    else
        echo "FAILED: $v passed every case with the wrong visibility helper"
        fail=1
    fi
done
"$right" verify "${args[@]}" >/dev/null 2>&1 || { echo "FAILED: the control run failed"; fail=1; }
((fail == 0)) || { printf '%s\n' "--- output ---" "$out" | grep -E "^(FAIL|SKIP)" | head -20; exit 1; }
echo "the reference caught the wrong visibility helper"
