#!/usr/bin/env bash
# The one command: measure this CPU and write results/<cpu-slug>/ —
# matrix.csv + matrix.meta.json, list.txt, peak.txt + peak.json, verify.txt,
# the PNGs (+ plots.json) and README.md.
# Safe to re-run: the matrix resumes where an interrupted run stopped, and
# plots and README are redrawn from whatever the CSV holds.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: scripts/run_matrix.sh [--full] [--peers] [--budget DUR]

Sets up or brings up to date (scripts/setup.sh, idempotent), then runs
attnbench list, peak, verify and matrix --resume into results/<cpu-slug>/,
and draws the plots and README.md there. Safe to re-run: an interrupted
matrix resumes, judged against the peak figures it started with.

  --full   run the full preset (default: quick), within a time budget
  --budget DUR  the whole script's time (30m, 90s, 1.5h, 2h30m; --full: 30m):
           the matrix gets what is left after set-up, peak and verify, less
           a reserve for the plots; it plans its cells to fit (matrix --budget)
  --peers  also time and check PyTorch, ONNX Runtime and OpenVINO attention on
           every cell, each in a process of its own (scripts/setup_peers.sh
           makes .venv-peers/ from scripts/requirements-peers.txt: a few GB,
           PyTorch's wheel brings CUDA libraries); a peer that cannot be
           installed or imported is a visible skip in its rows

Exit status: 0; 1 when verify or a matrix row failed (the plots and README
are still written); else the status of the first step that failed (an
interrupted matrix: run again to resume).
USAGE
}

preset=quick
peers=0
budget=""
next_is_budget=0
for arg in "$@"; do
    if ((next_is_budget)); then
        budget=$arg
        next_is_budget=0
        continue
    fi
    case "$arg" in
    --full) preset=full ;;
    --peers) peers=1 ;;
    --budget) next_is_budget=1 ;;
    --budget=*) budget=${arg#--budget=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
    esac
done

if ((next_is_budget)); then
    echo "error: --budget needs a value (e.g. 30m)" >&2
    exit 2
fi
[[ $preset == full && -z $budget ]] && budget=30m

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=build/attnbench
python=.venv/bin/python3

step() { printf '\n== %s\n' "$*"; }

step "set-up (scripts/setup.sh)"
bash scripts/setup.sh
peer_args=()
if ((peers)); then
    step "peers' environment (scripts/setup_peers.sh)"
    # A failed install is not fatal: the matrix then shows each peer's rows
    # as skipped, with the reason the worker could not start.
    bash scripts/setup_peers.sh || echo "warning: scripts/setup_peers.sh failed; peer rows will say why" >&2
    peer_args=(--peers all --peer-python "$root/.venv-peers/bin/python3")
fi

slug=$("$bin" list --slug)
if [[ -z $slug ]]; then
    echo "error: $bin list --slug printed no slug" >&2
    exit 1
fi
out=results/$slug
csv=$out/matrix.csv
mkdir -p "$out"

# --resume continues the matrix in matrix.csv. A matrix of the other preset
# is set aside as matrix-<preset>.csv (and picked up again on its next run)
# rather than mixed into this one.
preset_of() {
    "$python" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("preset", ""))' "$1" \
        2>/dev/null || true
}
if [[ -f $csv && -f $out/matrix.meta.json ]]; then
    old=$(preset_of "$out/matrix.meta.json")
    if [[ -n $old && $old != "$preset" ]]; then
        mv -f "$csv" "$out/matrix-$old.csv"
        mv -f "$out/matrix.meta.json" "$out/matrix-$old.meta.json"
        # the plan names cells both presets share: it goes with its CSV
        [[ -f $out/matrix.plan ]] && mv -f "$out/matrix.plan" "$out/matrix-$old.plan"
    fi
fi
if [[ ! -f $csv && -f $out/matrix-$preset.csv ]]; then
    mv "$out/matrix-$preset.csv" "$csv"
    if [[ -f $out/matrix-$preset.meta.json ]]; then
        mv "$out/matrix-$preset.meta.json" "$out/matrix.meta.json"
    fi
    [[ -f $out/matrix-$preset.plan ]] && mv -f "$out/matrix-$preset.plan" "$out/matrix.plan"
fi

step "attnbench list"
"$bin" list | tee "$out/list.txt"

# A fresh matrix is judged against the peaks measured here (peak.txt/.json);
# a resumed one keeps the peaks in its matrix.meta.json, like its first rows.
step "attnbench peak"
peak_args=()
if [[ -f $csv ]]; then
    echo "resuming $csv: keeping the peaks of its first run ($out/matrix.meta.json)"
else
    "$bin" peak --out "$out/peak.json" | tee "$out/peak.txt"
    peak_args=(--peak "$out/peak.json")
fi

step "attnbench verify"
verify_status=0
"$bin" verify | tee "$out/verify.txt" || verify_status=$?

# matrix exits 1 when a row failed rule A: the results still get drawn.
step "attnbench matrix --preset $preset"
budget_args=()
if [[ -n $budget ]]; then
    # The matrix gets what is left of the whole script's budget, less 30 s
    # for the plots and the page.
    total=$("$python" -c '
import re, sys
m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?", sys.argv[1])
if not m or not any(m.groups()):
    sys.exit("error: --budget %r: a duration like 30m, 90s, 1.5h or 2h30m" % sys.argv[1])
h, mi, s = (float(x or 0) for x in m.groups())
print(int(h * 3600 + mi * 60 + s))' "$budget") || exit 2
    left=$((total - SECONDS - 30))
    ((left < 60)) && left=60
    budget_args=(--budget "${left}s")
    echo "budget: $budget in all; ${left} s left for the matrix"
fi
matrix_status=0
"$bin" matrix --preset "$preset" "${peak_args[@]}" "${peer_args[@]}" "${budget_args[@]}" \
    --out "$csv" --resume ||
    matrix_status=$?
if [[ $matrix_status -ne 0 && $matrix_status -ne 1 ]]; then
    echo "error: attnbench matrix exited $matrix_status; run scripts/run_matrix.sh again to resume" >&2
    exit "$matrix_status"
fi

step "plots and README"
"$python" scripts/plot.py "$csv" -o "$out"
"$python" scripts/report.py "$csv" -o "$out/README.md"

if [[ $verify_status -ne 0 || $matrix_status -ne 0 ]]; then
    [[ $verify_status -eq 0 ]] || echo "verify failed (exit $verify_status): see $out/verify.txt" >&2
    [[ $matrix_status -eq 0 ]] || echo "matrix: a row failed rule A: see $out/README.md" >&2
    exit 1
fi
echo "done: $out/README.md"
