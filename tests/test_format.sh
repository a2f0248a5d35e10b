#!/usr/bin/env bash
# Every C/C++ source is as clang-format (the checked-in .clang-format) would
# write it. Usage: test_format.sh SOURCE_DIR
set -u
cd "$1" || exit 1
command -v clang-format >/dev/null || { echo "clang-format missing"; echo "0 passed, 1 failed"; exit 1; }
pass=0 fail=0
while IFS= read -r f; do
    if clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "not clang-formatted: $f"
    fi
done < <(git ls-files '*.c' '*.h' '*.cc' 2>/dev/null || find . -name '*.[ch]' -o -name '*.cc')
echo "$pass passed, $fail failed"
((fail == 0))
