#!/usr/bin/env bash
# ctest matrix_roof_exceeded: a deliberately low roof (--peak FILE with a
# tiny figure, judged with --roof run) must be caught everywhere a user
# looks: matrix's warning naming the row, the roof and the ratio; the CSV's
# roof_exceeded column; the sidecar's roof_exceeded list; the results
# page's opening banner. With the roof measured beside each row (--roof
# paired, the default) the same tiny file's figures must not reach a row.
#   test_roof_exceeded.sh ATTNBENCH PYTHON REPORT_PY WORKDIR
set -u
attnbench=$1 python=$2 report=$3 work=$4
mkdir -p "$work" && cd "$work" || exit 1
cat >tiny.json <<'JSON'
{"fma_gflops": {"scalar": {"1": 0.01, "2": 0.01}, "avx2": {"1": 0.01, "2": 0.01},
                "avx512": {"1": 0.01, "2": 0.01}},
 "read_gbytes_per_s": {"1": 0.001, "2": 0.001}, "triad_gbytes_per_s": {"1": 0.001, "2": 0.001}}
JSON
fail=0
check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=$((fail + 1)); fi
}
"$attnbench" matrix --preset test --variant naive --threads 1 --repetitions 1 --min-time 0 \
    --peak tiny.json --roof run --out low.csv --overwrite >low.out 2>low.err
check "matrix exits 0 (a low roof is a warning, not a failure)" test $? -eq 0
check "warning names a row, its ratio and the roof" \
    grep -Eq 'warning: impl=naive,B=1,[^ ]* threads=1 runs at [0-9.e+]+% of its roof \((FMA peak 0.0|read bandwidth 0.00)' low.err
check "summary warning points at the sidecar" grep -q 'above 100% of their roof' low.err
check "every ok row has roof_exceeded = 1, its roof the run's" "$python" - low.csv <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
sys.exit(0 if rows and all(r["roof_exceeded"] == "1" and float(r["pct_peak"]) > 100
                           and r["roof_source"] == "run" for r in rows) else 1)
PY
check "the sidecar lists them" "$python" -c '
import json, sys
m = json.load(open("low.meta.json"))
sys.exit(0 if len(m["roof_exceeded"]) == 3 and all(r["pct_peak"] > 100 for r in m["roof_exceeded"]) else 1)'
check "the page opens with the banner" sh -c \
    "'$python' '$report' low.csv -o page/README.md >/dev/null 2>&1 && sed -n 3,6p page/README.md | grep -q 'Roof exceeded: the peak under-measures this CPU'"
# The tiny file, roofs paired: every ok row's roof is measured beside it,
# the roof of its limit far above the file's (a prefill row's other column
# keeps the file's); a decode row's both, its side chosen from them
# (under ASan the FMA passes slow to ~8 GFLOP/s, and a decode row of 1
# flop a byte can land on either side).
"$attnbench" matrix --preset test --variant naive --threads 1 --repetitions 1 --min-time 0 \
    --peak tiny.json --bw-mib 64 --out paired.csv --overwrite >paired.out 2>paired.err
check "paired roofs: matrix exits 0" test $? -eq 0
check "paired roofs: measured beside every row, none exceeded" "$python" - paired.csv <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
def roof(r):
    return float(r["peak_gbytes_per_s" if r["limit"] == "bandwidth" else "peak_gflops"])
decode = [r for r in rows if int(r["n_q"]) <= 16]
sys.exit(0 if rows and decode and len(decode) < len(rows) and all(
    r["roof_source"] == "paired" and r["roof_exceeded"] == "0" and roof(r) > 0.5
    and float(r["pct_peak"]) < 100 for r in rows) and all(
    float(r["peak_gflops"]) > 0.5 and float(r["peak_gbytes_per_s"]) > 0.5 for r in decode)
    else 1)
PY
check "paired roofs: no warning" sh -c "! grep -q 'roof under-measures' paired.err"
# The same run against the measured roof: no warning, no flag, no banner.
"$attnbench" matrix --preset test --variant naive --threads 1 --repetitions 1 --min-time 0 \
    --peak "$ATTN_PEAK" --bw-mib 64 --out fair.csv --overwrite >fair.out 2>fair.err
check "a fair roof: no warning" sh -c "! grep -q 'roof under-measures' fair.err"
check "a fair roof: no banner" sh -c \
    "'$python' '$report' fair.csv -o fair/README.md >/dev/null 2>&1 && ! grep -q 'Roof exceeded' fair/README.md"
echo "roof_exceeded: $((11 - fail)) passed, $fail failed"
exit $((fail > 0))
