#!/usr/bin/env bash
# Runs bench or matrix on the test preset and checks the files they write
# with bench_check.py.
#   test_bench_files.sh bench  ATTNBENCH PYTHON CHECKER PEAK.json WORKDIR
#   test_bench_files.sh matrix ATTNBENCH PYTHON CHECKER PEAK.json WORKDIR DOC.md
#   test_bench_files.sh roofline ATTNBENCH PYTHON CHECKER PEAK.json WORKDIR DOC.md
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
roofline)
    # The roofline's side of two decode rows: 64 query heads on one K/V
    # head do 26 flops a byte (compute-bound on any CPU measured: ridges
    # of 4-12), one query head per K/V head 0.5 (memory-bound).
    doc=$7
    rm -f roofline.csv roofline.meta.json
    "$attnbench" matrix --shape Hq=64,Hkv=1,nq=1,nkv=256,dk=16 --shape Hq=4,Hkv=4,nq=1,nkv=256,dk=16 \
        --variant naive --threads 1 --peak "$peak" --roof run --out roofline.csv --repetitions 1 \
        --min-time 0 >roofline.log 2>&1 || { fail=1; tail -5 roofline.log; }
    "$python" "$checker" csv roofline.csv "$doc" || fail=1
    "$python" "$checker" limit roofline.csv Hq=64,Hkv=1, fma || fail=1
    "$python" "$checker" limit roofline.csv Hq=4,Hkv=4, bandwidth || fail=1
    # With the roofs timed beside the rows (the default): both of a decode
    # row's roofs measured in its rounds, and its side chosen from them.
    rm -f paired.csv paired.meta.json
    "$attnbench" matrix --shape Hq=64,Hkv=1,nq=1,nkv=256,dk=16 --shape Hq=4,Hkv=4,nq=1,nkv=256,dk=16 \
        --variant naive --threads 1 --peak "$peak" --bw-mib 16 --out paired.csv --repetitions 3 \
        --min-time 0 >paired.log 2>&1 || { fail=1; tail -5 paired.log; }
    "$python" "$checker" csv paired.csv "$doc" || fail=1
    "$python" "$checker" paired-roofs paired.csv || fail=1
    "$python" "$checker" limit paired.csv Hq=64,Hkv=1, fma || fail=1
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
