#!/usr/bin/env bash
# Runs bench or matrix on the test preset and checks the files they write
# with bench_check.py.
#   test_bench_files.sh bench  ATTNBENCH PYTHON CHECKER PEAK.json WORKDIR
#   test_bench_files.sh matrix ATTNBENCH PYTHON CHECKER PEAK.json WORKDIR DOC.md
set -u
mode=$1 attnbench=$2 python=$3 checker=$4 peak=$5 dir=$6
mkdir -p "$dir"
cd "$dir" || exit 1
fail=0
case $mode in
bench)
    rm -f bench.json
    "$attnbench" bench --preset test --peak "$peak" --benchmark_min_time=0.002 \
        --benchmark_out=bench.json --benchmark_out_format=json >bench.log 2>&1 ||
        { fail=1; tail -5 bench.log; }
    "$python" "$checker" bench bench.json || fail=1
    ;;
matrix)
    doc=$7
    rm -f cols.csv cols.meta.json
    "$attnbench" matrix --preset test --peak "$peak" --bw-mib 64 --out cols.csv >cols.log 2>&1 ||
        { fail=1; tail -5 cols.log; }
    "$python" "$checker" csv cols.csv "$doc" || fail=1
    "$python" "$checker" meta cols.meta.json || fail=1
    ;;
*)
    echo "unknown mode $mode"
    fail=1
    ;;
esac
if ((fail)); then
    echo "0 passed, 1 failed"
    exit 1
fi
echo "1 passed, 0 failed"
