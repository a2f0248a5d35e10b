#!/usr/bin/env bash
# ctest peers_matrix_fake / peers_matrix_real: matrix --peers end to end.
#   test_matrix_peers.sh fake ATTNBENCH PEAK WORKDIR FAKE_PEER_SH
#   test_matrix_peers.sh real ATTNBENCH PEAK WORKDIR PEERS_PYTHON
# fake: a peer whose output is wrong is a failed row (a finding with E_M and
#       the rule that caught it), timed in rounds paired with a variant, and
#       the matrix still exits 0; a peer that cannot import its library is a
#       skipped row saying so.
# real: every peer has a row per cell of the test preset, kind = peer, each
#       ok row with E_M within rule A and a paired variant, versions in the
#       sidecar.
set -u
mode=$1 attnbench=$2 peak=$3 work=$4 extra=$5
mkdir -p "$work" && cd "$work" || exit 1
fail=0
check() { if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=$((fail + 1)); fi; }
rows() { # rows CSV PYTHON-EXPR: exit 0 when the expression holds
    python3 - "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
peer = [r for r in rows if r["kind"] == "peer"]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
sidecar_peers() { # sidecar_peers META PYTHON-EXPR on p, its "peers": exit 0 when it holds
    python3 - "$1" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])).get("peers", {})
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
matrix() { # matrix OUT LOG --overwrite|--resume [matrix args...]
    local out=$1 log=$2
    shift 2
    "$attnbench" matrix --preset test --variant avx2 --variant stream --threads 2 \
        --repetitions 1 --min-time 0 --peak "$peak" --out "$out.csv" \
        --peer-rounds 2 "$@" >"$log" 2>&1
}
run() { # run OUT [matrix args...]
    local out=$1
    shift
    matrix "$out" "$out.log" --overwrite "$@"
}
if [[ $mode == fake ]]; then
    FAKE_PEER_MODE=fake run wrong --peers torch,openvino --peer-python sh --peer-worker "$extra"
    check "exit 0: a wrong peer is a finding, not a failure of the run" test $? -eq 0
    check "a row per peer and cell, paired with a variant" rows wrong.csv \
        'len(peer) == 6 and all(r["paired_variant"] in ("avx2", "stream") and float(r["paired_time_ns_median"]) > 0 for r in peer)'
    check "its wrong output failed rule A, with E_M" rows wrong.csv \
        'all(r["status"] == "failed" and r["reason"].startswith("rule A") and float(r["max_err_u"]) > 1e3 for r in peer)'
    check "the op and the empty-call overhead are in the row" rows wrong.csv \
        'all(r["peer_op"].startswith("fake(") and float(r["overhead_ns"]) > 0 for r in peer)'
    check "the summary names the findings" grep -q "peer rows failed" wrong.log
    fake_versions='{"torch": "0.0-\"fake\"\\x", "openvino": "0.0-\"fake\"\\x"}'
    check "the sidecar is JSON with the version as the worker said it" \
        sidecar_peers wrong.meta.json "p == $fake_versions"
    # A resume whose torch and openvino cells are all in the CSV starts
    # neither (a started worker would now fail to import: nolib); their
    # versions stay those of the run that timed their rows.
    FAKE_PEER_MODE=nolib matrix wrong resumed.log --resume \
        --peers torch,openvino,onnxruntime --peer-python sh --peer-worker "$extra"
    check "a resume keeps the versions of the peers it did not restart" \
        sidecar_peers wrong.meta.json "p == $fake_versions"
    matrix wrong resumed2.log --resume
    check "so does a resume without --peers" \
        sidecar_peers wrong.meta.json 'sorted(p) == ["openvino", "torch"]'
    FAKE_PEER_MODE=nolib run nolib --peers torch --peer-python sh --peer-worker "$extra"
    check "a peer without its library: skipped rows saying why" rows nolib.csv \
        'len(peer) == 3 and all(r["status"] == "skipped" and "cannot import nolib" in r["reason"] for r in peer)'
    FAKE_PEER_MODE=skipper run skipper --peers onnxruntime --peer-python sh --peer-worker "$extra"
    check "a peer that cannot do the problem: skipped with its reason" rows skipper.csv \
        'len(peer) == 3 and all(r["status"] == "skipped" and r["reason"] for r in peer)'
    FAKE_PEER_MODE=fake run typed --peers torch --peer-python sh --peer-worker "$extra" --dtype f32,bf16,f16,bf16kv
    check "peers run f32 and all-bf16 cells: f16 and mixed cells are skipped peer rows saying so" rows typed.csv \
        'len(peer) == 12 and all((r["status"] == "skipped" and r["reason"] == "peers run float32 or bfloat16 (Q, K/V and O in one type)") == (r["q_dtype"] == "f16" or r["q_dtype"] != r["kv_dtype"]) for r in peer)'
    check "a bf16 cell reaches the peer, which answers for itself" rows typed.csv \
        'sum(r["q_dtype"] == r["kv_dtype"] == "bf16" for r in peer) == 3 and all(r["status"] == "skipped" and "fake worker does f32 only" in r["reason"] for r in peer if r["q_dtype"] == r["kv_dtype"] == "bf16")'
    # --budget covers the peers: each gets its share of the time, and its
    # cells past that share are skipped rows saying so. The slow peer's
    # setup takes the whole budget, so at least 2 of its 3 cells fall past
    # its share however long the variants and their calibration took.
    FAKE_PEER_MODE=slow run slow --peers torch --peer-python sh --peer-worker "$extra" --budget 2s
    check "a peer's cells past its share of --budget: skipped over budget" rows slow.csv \
        'len(peer) == 3 and sum(r["status"] == "skipped" and r["reason"].startswith("over budget") for r in peer) >= 2'
    FAKE_PEER_MODE=fake run roomy --peers torch --peer-python sh --peer-worker "$extra" --budget 120s
    check "within its share, every peer cell runs" rows roomy.csv \
        'len(peer) == 3 and not [r for r in peer if "over budget" in r["reason"]]'
    # A peer cell begun inside its share stops its rounds where the next
    # would end past it: 100 rounds of 0.3 s would take 30 s a cell, so
    # the run would end 30 s or more past the budget's end; it ends near
    # it (6 s of slack for a slow machine: under ASan, beside other
    # tests, a 6 s budget's run took 8 s). A peer cell must have been
    # timed (not all of them skipped over budget), or this proves nothing.
    start_ns=$(date +%s%N)
    FAKE_PEER_MODE=slowtime run rounds --peers torch --peer-python sh --peer-worker "$extra" \
        --budget 12s --peer-rounds 100
    wall_ms=$((($(date +%s%N) - start_ns) / 1000000))
    echo "     (--budget 12s with 100 rounds of 0.3 s a peer cell: $wall_ms ms)"
    check "a peer cell timed within its share of --budget" rows rounds.csv \
        'any(r["status"] != "skipped" and 0 < int(r["repetitions"]) for r in peer)'
    check "its rounds end with the share" test "$wall_ms" -lt 18000
    # Interrupted while a peer runs, the sidecar still names the library
    # that timed the peer rows already in the CSV (a resume does not start
    # that peer again for them, so it could not learn the version later).
    # Job control on, or the background job would ignore SIGINT.
    rm -f cut.csv cut.meta.json # a row left from an earlier run must not stop the wait
    set -m
    FAKE_PEER_MODE=slow "$attnbench" matrix --preset test --variant avx2 --threads 2 \
        --repetitions 1 --min-time 0 --peak "$peak" --out cut.csv --overwrite \
        --peer-rounds 2 --peers torch --peer-python sh --peer-worker "$extra" >cut.log 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do # until the first peer row (2 s of setup), at most 60 s
        grep -q ',torch,peer,' cut.csv 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -INT "$pid"
    wait "$pid"
    code=$?
    set +m
    check "interrupted among the peer cells: exit 130, a peer row kept" \
        sh -c "test $code -eq 130 && grep -q ',torch,peer,' cut.csv"
    check "the interrupted run's sidecar names the peer's version" \
        sidecar_peers cut.meta.json "p == ${fake_versions%%, \"openvino\"*}}"
    "$attnbench" matrix --preset test --peers tensorflow --out bad.csv >bad.log 2>&1
    check "an unknown peer is refused, exit 2" sh -c "test $? -eq 2 && grep -q \"'tensorflow' is not a peer\" bad.log"
    total=19
else
    run real --peers all --peer-python "$extra"
    check "exit 0" test $? -eq 0
    check "three peers x three cells" rows real.csv \
        'sorted({r["variant"] for r in peer}) == ["onnxruntime", "openvino", "torch"] and len(peer) == 9'
    check "every ok peer row is checked (E_M) and paired" rows real.csv \
        'all(float(r["max_err_u"]) < 100 and r["paired_variant"] for r in peer if r["status"] == "ok") and sum(r["status"] == "ok" for r in peer) >= 6'
    check "no peer row failed" rows real.csv 'not [r for r in peer if r["status"] == "failed"]'
    check "the sidecar has the versions" \
        sidecar_peers real.meta.json 'set(p) == {"torch", "onnxruntime", "openvino"}'
    total=5
fi
echo "matrix_peers_$mode: $((total - fail)) passed, $fail failed"
exit $((fail > 0))
