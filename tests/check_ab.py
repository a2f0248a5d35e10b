#!/usr/bin/env python3
"""scripts/ab.py on the build's libattn.so: a null test (the same build as A
and B gives a ratio near 1 and both medians), another variant as B with
its ratio the right way round, a verify case name with its p= class, bad
usage (exit 2 and a message naming the field or file) and a failing call
(exit 1 with the library's message), never a traceback; --case-b (B's own
case: its inputs, its calls a round, its name in the output); --threads-b
(B's own thread count, as libgomp reports it). argv[1]: libattn.so."""
import os
import re
import subprocess
import sys

AB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "ab.py")
LIB = sys.argv[1]
CASE = "impl=stream,B=1,Hq=2,Hkv=1,nq=8,nkv=48,dk=16,dv=12,causal=1,kv=bf16"
failures = []


def ab(*extra, case=CASE, threads="1"):
    cmd = [sys.executable, AB, "--a", LIB, "--b", LIB, "--case", case, "--rounds", "3",
           "--seconds", "0.02", "--threads", threads, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def check(ok, what, got):
    if not ok:
        failures.append(f"{what}: rc {got.returncode}\nstdout: {got.stdout}\nstderr: {got.stderr}")


# The null test: 5 rounds of ~50 ms a side, so the median stands on 3.
NULL_SECONDS = 0.05
r = ab("--rounds", "5", "--seconds", str(NULL_SECONDS))
m = re.search(r"(\d+) call\(s\) a side.*A ([0-9.]+) ms  B ([0-9.]+) ms.*"
              r"median ([0-9.]+)x \[([0-9.]+) \.\. ([0-9.]+)\]", r.stdout, re.S)
check(r.returncode == 0 and m is not None, "null test runs and prints the ratio", r)
if m:
    calls = int(m.group(1))
    a_ms, b_ms, med, lo, hi = map(float, m.groups()[1:])
    check(a_ms > 0 and b_ms > 0 and lo <= med <= hi, "medians positive, median within its range",
          r)
    check(0.5 < med < 2.0, f"the same build as A and B: {med}x, want near 1", r)
    # A round lasts about --seconds: rounds sized from one slow call or
    # batch were a few calls long and measured a single hiccup (a round
    # timed 566x its twin that way, and 1.3 ms rounds of a 20 ms request
    # a null test at 0.26x).
    round_s = calls * a_ms * 1e-3
    check(NULL_SECONDS / 3 < round_s < NULL_SECONDS * 3,
          f"a round of {calls} calls lasts {round_s * 1e3:.1f} ms, want about "
          f"{NULL_SECONDS * 1e3:.0f} ms", r)
# Direction: the textbook naive (n_q x n_kv scores through memory) is ~3x
# slower than blocked at this shape, on one thread; the ratio is A's time
# over B's, so > 1 when B is the faster.
BIG = "impl=naive,B=1,Hq=2,Hkv=1,nq=256,nkv=256,dk=64,dv=64,causal=0"
for case, b, faster in [(BIG, "blocked", True), (BIG.replace("naive", "blocked"), "naive", False)]:
    r = ab("--variant-b", b, case=case)
    m = re.search(r"median ([0-9.]+)x", r.stdout)
    ok = r.returncode == 0 and f"B: {b}" in r.stdout and m is not None
    ok = ok and (float(m.group(1)) > 1.3 if faster else float(m.group(1)) < 1 / 1.3)
    check(ok, f"{b} as B on {case}: speedup {'>' if faster else '<'} 1 (A's time / B's)", r)

# --case-b: B runs its own case (a twin in other types, or another shape),
# with its own inputs and its own calls a round; a quarter of the rows
# takes about a quarter of the time, so B is the faster by far.
SMALL = BIG.replace("naive", "blocked").replace("nq=256", "nq=64")
r = ab("--case-b", SMALL, case=BIG.replace("naive", "blocked"))
m = re.search(r"rounds of (\d+) / (\d+) call\(s\) a side.*median ([0-9.]+)x", r.stdout, re.S)
check(r.returncode == 0 and f"B: blocked, case {SMALL}" in r.stdout and m is not None
      and int(m.group(2)) > int(m.group(1)) and float(m.group(3)) > 2.0,
      "--case-b with a quarter of the rows: its own case, more calls a round, B > 2x", r)
r = ab("--case-b", CASE.replace("kv=bf16", "kv=f16"))
check(r.returncode == 0 and "kv=f16" in r.stdout and "median" in r.stdout,
      "--case-b: a twin in other element types", r)
r = ab("--case-b", CASE.replace("causal=1", "causal=2"))
check(r.returncode == 2 and "--case-b: causal=2" in r.stderr and "Traceback" not in r.stderr,
      "a bad --case-b names itself and the field", r)
r = ab("--case-b", CASE, "--variant-b", "naive")
check(r.returncode == 2 and "--variant-b with --case-b" in r.stderr, "--variant-b with --case-b", r)

# --threads-b: B on threads of its own, A on --threads; the line names the
# counts libgomp reported after each side's setting (no timing asserted:
# two threads' speed-up depends on the machine's other load), both ways.
TWO_HEADS = BIG.replace("naive", "blocked")
for a_threads, b_threads in (("1", "2"), ("3", "1")):
    r = ab("--threads-b", b_threads, case=TWO_HEADS, threads=a_threads)
    check(r.returncode == 0 and f"threads {a_threads} / {b_threads};" in r.stdout
          and "median" in r.stdout,
          f"--threads {a_threads} --threads-b {b_threads}: each side on its own count", r)
r = ab("--threads-b", "0")
check(r.returncode == 2 and "--threads-b 0: at least 1" in r.stderr
      and "Traceback" not in r.stderr, "--threads-b 0", r)

for case, field in [(CASE.replace("dk=16", "dk=16,foo=3"), "'foo'"),
                    (CASE.replace("Hq=2", "Hq=3").replace("Hkv=1", "Hkv=2"), "Hkv=2"),
                    (CASE.replace("nq=8", "nq=0"), "nq=0"),
                    (CASE.replace("kv=bf16", "kv=f8"), "kv=f8"),
                    (CASE.replace("causal=1", "causal=2"), "causal=2"),
                    (CASE.replace(",nkv=48", ""), "nkv="),
                    (CASE.replace("nkv=48", "nkv=4294967297"), "nkv=4294967297")]:
    r = ab(case=case)
    check(r.returncode == 2 and field in r.stderr and "Traceback" not in r.stderr,
          f"bad case {case}: exit 2 naming {field}", r)
r = ab("--rounds", "0")
check(r.returncode == 2 and "--rounds" in r.stderr, "--rounds 0", r)
for bad in ("0", "65"):
    r = ab("--copies", bad)
    check(r.returncode == 2 and f"--copies {bad}: from 1 to 64" in r.stderr, f"--copies {bad}", r)
r = ab("--pages", "4k")
check(r.returncode == 2 and "--pages" in r.stderr and "Traceback" not in r.stderr, "--pages 4k", r)
# Decode (n_q <= 16) rotates copies past the last-level cache, as bench and
# the matrix do; prefill uses one; both say so, and on which pages.
r = ab()
m = re.search(r"(\d+) copies of the inputs on huge pages", r.stdout)
check(r.returncode == 0 and m is not None and int(m.group(1)) > 1,
      "a decode case rotates copies on huge pages", r)
r = ab("--copies", "3", "--pages", "base")
check(r.returncode == 0 and "3 copies of the inputs on base pages" in r.stdout,
      "--copies 3 --pages base", r)
r = ab(case=BIG.replace("naive", "blocked"))
check(r.returncode == 0 and "1 copy of the inputs on huge pages" in r.stdout,
      "a prefill case: one copy", r)
r = subprocess.run([sys.executable, AB, "--a", LIB + ".missing", "--b", LIB, "--case", CASE],
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 2 and ".missing" in r.stderr, "a missing library", r)
r = ab(case=CASE.replace("impl=stream", "impl=nosuch"))
check(r.returncode == 1 and "nosuch" in r.stderr and "no variant" in r.stderr
      and "Traceback" not in r.stderr, "an unknown variant: the library's message, exit 1", r)
r = ab(case=CASE + ",p=bf16")
check(r.returncode == 0 and "median" in r.stdout, "a verify case name with p=", r)
r = subprocess.run([sys.executable, AB, "--a", AB, "--b", LIB, "--case", CASE],
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 2 and "not a loadable libattn.so" in r.stderr
      and "Traceback" not in r.stderr, "a file that is no library", r)

# The tensors start on 64-byte boundaries, as the harness's do, and hold
# the values given.
sys.path.insert(0, os.path.dirname(AB))
import ab as ab_module  # noqa: E402
import numpy as np  # noqa: E402

for dtype, count in [(np.float32, 1000), (np.uint16, 4097)]:
    x = np.arange(count, dtype=dtype)
    y = ab_module.aligned(x)
    if y.ctypes.data % 64 or not np.array_equal(x, y) or y.dtype != x.dtype:
        failures.append(f"aligned({dtype.__name__} x {count}): at {y.ctypes.data % 64} past a "
                        f"64-byte boundary, equal {np.array_equal(x, y)}")

for f in failures:
    print("FAILED", f)
print(f"ab: {'all' if not failures else len(failures)} {'checks passed' if not failures else 'failed'}")
sys.exit(1 if failures else 0)
