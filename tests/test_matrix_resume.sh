#!/usr/bin/env bash
# An interrupted matrix run resumes to the same rows as an uninterrupted one:
# SIGINT after the first rows -> exit 130 and whole rows only; SIGKILL ->
# whole rows only, and --resume completes them; a torn last
# line (a kill mid-write) is dropped on --resume; --resume finishes without
# duplicates; the element types are part of a row's identity (an f32 row
# never stands for a bf16kv cell of the same shape); a resume on pages other
# than its roof's and a foreign CSV are refused with exit 2.
#   test_matrix_resume.sh ATTNBENCH PYTHON CHECKER PEAK.json WORKDIR
set -u
attnbench=$1 python=$2 checker=$3 peak=$4 dir=$5
mkdir -p "$dir"
cd "$dir" || exit 1
rm -f full.csv full.meta.json cut.csv cut.meta.json killed.csv killed.meta.json foreign.csv \
    typed.csv typed.meta.json old.csv
fail=0
note() { echo "FAILED: $*"; fail=1; }
# wait_rows PID CSV POLLS [FILE]: until CSV holds 2 rows (and FILE exists,
# when given), PID has ended, or POLLS polls of 0.05 s have passed.
wait_rows() {
    local pid=$1 csv=$2 polls=$3 also=${4:-} rows
    for _ in $(seq 1 "$polls"); do
        rows=$(($(wc -l 2>/dev/null <"$csv" || echo 0) - 1))
        ((rows >= 2)) && [[ -z $also || -f $also ]] && return
        kill -0 "$pid" 2>/dev/null || return # it ended (or never started): stop polling
        sleep 0.05
    done
}
common=(--preset test --peak "$peak" --bw-mib 64)

"$attnbench" matrix "${common[@]}" --out full.csv >full.log 2>&1 || note "uninterrupted run: $(tail -3 full.log)"

# Slow the cells down (min-time) so there is time to interrupt mid-run.
# Job control on: without it the shell starts background jobs with SIGINT
# ignored, and attnbench (rightly) keeps an inherited SIG_IGN.
set -m
"$attnbench" matrix "${common[@]}" --min-time 0.15 --out cut.csv >cut.log 2>&1 &
pid=$!
wait_rows "$pid" cut.csv 300
kill -INT "$pid"
wait "$pid"
code=$?
set +m
rows=$(($(wc -l <cut.csv) - 1))
echo "interrupted after $rows rows, exit $code"
((code == 130)) || note "interrupted run exited $code, want 130"
grep -q "interrupted" cut.log || note "no interruption message"
total=$(($(wc -l <full.csv) - 1))
((rows >= 2 && rows < total)) || note "interrupted with $rows of $total rows"
"$python" "$checker" whole-rows cut.csv || fail=1
# Its rows were measured on the pages its meta.json's roof was: resuming on
# other pages is refused, and leaves the file as it was.
before=$(md5sum <cut.csv)
"$attnbench" matrix --preset test --bw-mib 64 --resume --pages base --out cut.csv >pages.log 2>&1
code=$?
((code == 2)) || note "--resume on other pages exited $code, want 2"
grep -q "its read roof was measured on huge pages" pages.log || note "no pages refusal: $(tail -2 pages.log)"
[[ $(md5sum <cut.csv) == "$before" ]] || note "the refused resume changed cut.csv"

# SIGKILL cannot be caught: every row already written must still be whole
# (one write() per row), and --resume must finish the same set of rows.
"$attnbench" matrix "${common[@]}" --min-time 0.15 --out killed.csv >killed.log 2>&1 &
pid=$!
wait_rows "$pid" killed.csv 300
kill -KILL "$pid"
wait "$pid" 2>/dev/null
rows=$(($(wc -l <killed.csv) - 1))
echo "killed after $rows rows"
((rows >= 2 && rows < total)) || note "killed with $rows of $total rows"
"$python" "$checker" whole-rows killed.csv || fail=1
"$attnbench" matrix "${common[@]}" --out killed.csv --resume >killed-resume.log 2>&1 ||
    note "resume after SIGKILL: $(tail -3 killed-resume.log)"
"$python" "$checker" same-keys full.csv killed.csv || fail=1

# A kill in the middle of a write leaves a torn line: resume must drop it.
printf '"impl=naive,B=1,Hq=2,Hkv=2,nq=64,nkv=64' >>cut.csv
"$attnbench" matrix "${common[@]}" --out cut.csv --resume >resume.log 2>&1 || note "resume: $(tail -3 resume.log)"
grep -q "dropped a partial last line" resume.log || note "torn line not reported"
grep -q "already in cut.csv" resume.log || note "resume did not count existing rows"
"$python" "$checker" whole-rows cut.csv || fail=1
"$python" "$checker" same-keys full.csv cut.csv || fail=1

# A second resume has nothing left to do.
"$attnbench" matrix "${common[@]}" --out cut.csv --resume >again.log 2>&1 || note "second resume failed"
grep -q "0 cells to run" again.log || note "second resume ran cells: $(head -1 again.log)"
"$python" "$checker" same-keys full.csv cut.csv || fail=1

# The types are part of the cell: f32 rows done, --dtype f32,bf16kv resumes
# to run exactly the bf16kv cells, each once, beside its f32 row.
typed=(--preset test --peak "$peak" --bw-mib 64 --variant stream --threads 1 --repetitions 1 --min-time 0)
"$attnbench" matrix "${typed[@]}" --dtype f32 --out typed.csv >typed.log 2>&1 || note "f32 run: $(tail -3 typed.log)"
"$attnbench" matrix "${typed[@]}" --dtype f32,bf16kv --out typed.csv --resume >typed-resume.log 2>&1 ||
    note "typed resume: $(tail -3 typed-resume.log)"
grep -q "3 cells to run (3 already in typed.csv)" typed-resume.log ||
    note "typed resume did not run just the bf16kv cells: $(grep 'cells to run' typed-resume.log)"
"$python" - typed.csv <<'PY' || note "typed.csv: not one f32 and one bf16kv row per case"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
kinds = sorted((r["kv_dtype"], r["case"].endswith(",q=f32,kv=bf16,o=f32")) for r in rows)
sys.exit(0 if kinds == [("bf16", True)] * 3 + [("f32", False)] * 3 else 1)
PY
"$python" "$checker" whole-rows typed.csv || fail=1

# A file of the format before the element-type columns is refused, saying
# so, and left as it was.
cp "$(dirname "$checker")/scripts/fixtures/matrix.csv" old.csv
"$attnbench" matrix "${common[@]}" --out old.csv --resume >old.log 2>&1
code=$?
((code == 2)) || note "pre-dtype CSV: exit $code, want 2"
grep -q "old.csv' was written before the q_dtype, kv_dtype and o_dtype columns" old.log ||
    note "pre-dtype CSV message: $(cat old.log)"
cmp -s old.csv "$(dirname "$checker")/scripts/fixtures/matrix.csv" || note "the pre-dtype CSV was modified"

# So is one of the format before the paired_case and paired_threads columns
# (typed.csv without them and what came after them), and one of the format
# before the roof_source column.
drop_columns() { # drop_columns OUT COLUMN...: typed.csv without those columns
    "$python" - typed.csv "$@" <<'PY' || note "could not write $1"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
names = [k for k in rows[0] if k not in sys.argv[3:]]
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=names, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
PY
}
refused_older() { # refused_older FILE WHAT: --resume into FILE exits 2 naming WHAT, FILE unchanged
    cp "$1" "$1.orig"
    "$attnbench" matrix "${common[@]}" --out "$1" --resume >"$1.log" 2>&1
    code=$?
    ((code == 2)) || note "$1: exit $code, want 2"
    grep -q "$1' was written before the $2" "$1.log" || note "$1 message: $(cat "$1.log")"
    cmp -s "$1" "$1.orig" || note "$1 was modified"
}
drop_columns unpaired.csv paired_case paired_threads roof_source
refused_older unpaired.csv "paired_case and paired_threads columns"
drop_columns unroofed.csv roof_source
refused_older unroofed.csv "roof_source column"

# --budget interrupted: FILE.plan keeps the wall time spent; --resume
# carries on the same plan (the same cells, each once) with that time off
# the budget, and both runs together stay within it. The budget is ample
# (calibration alone may take half a minute under ASan on a busy machine):
# what is checked is the bookkeeping; the fit is test_matrix_plan's.
budget_s=600
bud=(--preset test --peak "$peak" --bw-mib 64 --threads 1 --min-time 0.5 --budget 10m)
rm -f budget.csv budget.meta.json budget.plan
set -m
"$attnbench" matrix "${bud[@]}" --out budget.csv >budget.log 2>&1 &
pid=$!
# Calibration comes first (40 s under ASan on a busy 2-core machine): wait
# up to 5 minutes for the first rows.
wait_rows "$pid" budget.csv 6000 budget.plan
kill -INT "$pid"
wait "$pid"
code=$?
set +m
((code == 130)) || note "budgeted run: exit $code, want 130 ($(tail -2 budget.log))"
spent=$(sed -n 's/^# state elapsed_s=\([0-9.e+-]*\) .*/\1/p' budget.plan)
echo "budgeted run interrupted after $(($(wc -l <budget.csv) - 1)) rows, ${spent:-no} s in budget.plan"
[[ -n "$spent" ]] && "$python" -c "import sys; sys.exit(not 0 < float('$spent') < $budget_s)" ||
    note "budget.plan after the interrupt: no time spent recorded ('$spent')"
"$attnbench" matrix "${bud[@]}" --out budget.csv --resume >budget-resume.log 2>&1 ||
    note "budgeted resume: $(tail -3 budget-resume.log)"
grep -q "the runs before spent [0-9]* s of the $budget_s s budget" budget-resume.log ||
    note "the resumed run did not carry on the plan: $(grep 'matrix:' budget-resume.log | head -3)"
total=$(sed -n 's/^# state elapsed_s=\([0-9.e+-]*\) .*/\1/p' budget.plan)
echo "both runs: ${total:-?} s of a ${budget_s} s budget"
"$python" -c "import sys; sys.exit(not (float('$spent') < float('$total') <= 1.1 * $budget_s))" ||
    note "both runs: ${total:-?} s recorded of a ${budget_s} s budget (first ${spent:-?} s)"
"$python" - full.csv budget.csv <<'PY' || note "budget.csv: not each 1-thread cell once"
import csv, sys
want = sorted(r["case"] for r in csv.DictReader(open(sys.argv[1])) if r["threads"] == "1")
got = sorted(r["case"] for r in csv.DictReader(open(sys.argv[2])))
sys.exit(0 if want == got and want else 1)
PY
"$python" "$checker" whole-rows budget.csv || fail=1

# Resuming into a CSV that is not ours is refused.
printf 'a,b,c\n1,2,3\n' >foreign.csv
"$attnbench" matrix "${common[@]}" --out foreign.csv --resume >foreign.log 2>&1
code=$?
((code == 2)) || note "foreign CSV: exit $code, want 2"
grep -q "foreign.csv' is not an attnbench results CSV" foreign.log || note "foreign CSV message: $(cat foreign.log)"
grep -q '^a,b,c$' foreign.csv || note "the foreign CSV was modified"

if ((fail)); then
    echo "0 passed, 1 failed"
    exit 1
fi
echo "1 passed, 0 failed"
