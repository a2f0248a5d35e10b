#!/usr/bin/env bash
# An interrupted matrix run resumes to the same rows as an uninterrupted one:
# SIGINT after the first rows -> exit 130 and whole rows only; SIGKILL ->
# whole rows only, and --resume completes them; a torn last
# line (a kill mid-write) is dropped on --resume; --resume finishes without
# duplicates; a foreign CSV is refused with exit 2.
#   test_matrix_resume.sh ATTNBENCH PYTHON CHECKER PEAK.json WORKDIR
set -u
attnbench=$1 python=$2 checker=$3 peak=$4 dir=$5
mkdir -p "$dir"
cd "$dir" || exit 1
rm -f full.csv full.meta.json cut.csv cut.meta.json killed.csv killed.meta.json foreign.csv
fail=0
note() { echo "FAILED: $*"; fail=1; }
common=(--preset test --peak "$peak")

"$attnbench" matrix "${common[@]}" --out full.csv >full.log 2>&1 || note "uninterrupted run: $(tail -3 full.log)"

# Slow the cells down (min-time) so there is time to interrupt mid-run.
# Job control on: without it the shell starts background jobs with SIGINT
# ignored, and attnbench (rightly) keeps an inherited SIG_IGN.
set -m
"$attnbench" matrix "${common[@]}" --min-time 0.15 --out cut.csv >cut.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    rows=$(($(wc -l 2>/dev/null <cut.csv || echo 0) - 1))
    ((rows >= 2)) && break
    kill -0 "$pid" 2>/dev/null || break # it ended (or never started): stop polling
    sleep 0.05
done
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

# SIGKILL cannot be caught: every row already written must still be whole
# (one write() per row), and --resume must finish the same set of rows.
"$attnbench" matrix "${common[@]}" --min-time 0.15 --out killed.csv >killed.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    rows=$(($(wc -l 2>/dev/null <killed.csv || echo 0) - 1))
    ((rows >= 2)) && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
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
