#!/usr/bin/env bash
# attnbench demo prints the seed article's numbers exactly (the digest's
# exact values, shared/seed-attention-math.md). Usage: test_demo.sh ATTNBENCH [--variant V]
set -u
out=$("$@" 2>&1) || { echo "demo exited $?"; echo "0 passed, 1 failed"; exit 1; }
want=(
  'exp: +24\.53 +54\.60 +2\.72 +492\.75 +2980\.96'
  'sum of exps: 3555\.56'
  'weights, exact \(double\): 0\.68998% 1\.53557% 0\.07645% 13\.85857% 83\.83943%'
  'weights, float32 \([a-z0-9]+\): 0\.6899[89]% 1\.5355[67]% 0\.0764[45]% 13\.8585[67]% 83\.8394[234]%'
  'fish +\[ +0\.000848, +0\.000848, +0\.998304\]'
  'cat +\[ +3\.862310, +2\.000000\]'
  'eats +\[ +2\.492819, +2\.478457\]'
  'fish +\[ +3\.995761, +2\.000000\]'
  'scores Q\.K\^T:'
  'fish +\[ +10\.000000, +10\.000000, +20\.000000\]'
)
pass=0 fail=0
for w in "${want[@]}"; do
    if grep -Eq -- "$w" <<<"$out"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "missing: /$w/"; fi
done
((fail)) && printf '%s\n' "--- demo output ---" "$out"
echo "$pass passed, $fail failed"
((fail == 0))
