#!/usr/bin/env bash
# expect.sh CODE REGEX command [args...]
# Runs the command and passes when it exits with CODE and its combined
# stdout+stderr matches the extended REGEX ('' to skip the match).
set -u
want=$1 pattern=$2
shift 2
out=$("$@" 2>&1)
got=$?
fail=0
if [[ $got -ne $want ]]; then
    echo "FAILED: exit $got, want $want: $*"
    fail=1
fi
if [[ -n $pattern ]] && ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAILED: output does not match /$pattern/: $*"
    fail=1
fi
if ((fail)); then
    printf '%s\n' "--- output ---" "$out" | head -40
    echo "0 passed, 1 failed"
    exit 1
fi
echo "1 passed, 0 failed"
