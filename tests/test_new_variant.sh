#!/usr/bin/env bash
# test_new_variant.sh SOURCE_DIR WORK_DIR PEAK_JSON
# The promise of docs/adding-a-variant.md, kept: in a scratch copy of the
# tree, a throw-away variant made of one new file (stream.c under another
# name) and one new line of impls/variants.inc is picked up by list,
# verify, bench, matrix and ctest with nothing else edited. Builds only the
# attnbench target (about 15 s on 2 cores).
set -euo pipefail
src=$1 work=$2 peak=$3
name=throwaway
rm -rf "$work"
mkdir -p "$work/tree"
for d in CMakeLists.txt include impls reference harness tests fuzz docs .clang-format; do
    [[ -e $src/$d ]] && cp -r "$src/$d" "$work/tree/"
done
tree=$work/tree

# The one file: stream's kernel and descriptor under the new name.
sed -e "s/attn_variant_stream/attn_variant_$name/" -e "s/\.name = \"stream\"/.name = \"$name\"/" \
    "$tree/impls/stream.c" >"$tree/impls/$name.c"
grep -q "attn_variant_$name" "$tree/impls/$name.c"
# The one line.
echo "ATTN_VARIANT(attn_variant_$name, \"$name.c\")" >>"$tree/impls/variants.inc"

cmake -S "$tree" -B "$work/build" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 ||
    { tail -20 "$work/configure.log"; exit 1; }
cmake --build "$work/build" --target attnbench -j2 >"$work/build.log" 2>&1 ||
    { tail -40 "$work/build.log"; exit 1; }
bin=$work/build/attnbench

check() { # what, regex, command...
    local what=$1 re=$2
    shift 2
    local out
    out=$("$@" 2>&1) || { echo "FAILED: $what exited non-zero"; printf '%s\n' "$out" | tail -20; exit 1; }
    grep -Eq -- "$re" <<<"$out" || { echo "FAILED: $what: no /$re/"; printf '%s\n' "$out" | tail -20; exit 1; }
    echo "ok: $what"
}
check list "^$name +available" "$bin" list
check verify "verify: [1-9][0-9]* passed, 0 failed" "$bin" verify --variant $name --cases quick
check bench "impl=$name,.*real_time" "$bin" bench --preset test --variant $name --peak "$peak" \
    --benchmark_filter=causal=1/threads:1 --benchmark_min_time=0.002
check matrix "^ok +impl=$name," "$bin" matrix --preset test --variant $name --peak "$peak" --bw-mib 64 \
    --out "$work/m.csv" --overwrite
grep -q "impl=$name," "$work/m.csv" || { echo "FAILED: matrix CSV has no $name row"; exit 1; }
# Without --variant too: the test preset takes every variant of the table.
check "matrix default variants" "impl=$name," "$bin" matrix --preset test --peak "$peak" --bw-mib 64 \
    --filter "impl=$name,.*causal=0" --out "$work/m2.csv" --overwrite
check "ctest -N" "verify_full_$name" ctest -N --test-dir "$work/build"
check "ctest -N" "verify_adversarial_$name" ctest -N --test-dir "$work/build"
echo "the throw-away variant '$name' was picked up everywhere"
