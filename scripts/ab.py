#!/usr/bin/env python3
"""Two builds of libattn.so (or two variants) on one case, in alternating
rounds of one process: the ratio of their times, measured the way every
"alternating rounds" figure in README was.

On a shared machine the speed of the same call moves by 5-30 % from one
minute to the next (neighbours, frequency). Two timings taken minutes
apart then compare the minutes as much as the code. Here each round times
A, then B (the order flips every round), and the ratio is taken within the
round, so a slow stretch slows both sides of it; the median round ratio
and its spread are the result, with a 95 % interval of that median (the
order statistics that bound it whatever the rounds' distribution: with
11 rounds the 2nd and 10th smallest ratios). A change whose interval
holds 1.00 is not told apart from the noise by that run; rounds are
treated as independent, which a neighbour busy for several rounds
breaks, so repeat a run before trusting an interval that barely misses
1.00.

    scripts/ab.py --a old/libattn.so --b build/libattn.so \\
        --case impl=avx512,B=1,Hq=32,Hkv=8,nq=1,nkv=32768,dk=128,dv=128,causal=0,kv=f16 \\
        [--variant-b NAME | --case-b CASE] [--threads N] [--threads-b N]
        [--rounds N] [--seconds S] [--copies N] [--pages huge|base]

Decode cells (n_q <= 16) rotate through copies of Q, K, V and O spanning
twice the last-level cache, as bench and the matrix do (--copies N to say
how many): one copy called over and over is served partly from the L3,
and a change then looks faster or slower against a bandwidth no model's
decode sees (one copy of an f16 KV cache of 134 MB ran 1.22x faster than
eight in rotation on a Sapphire Rapids with a large L3). The arrays
are on huge pages (--pages base: 4 KiB), as bench's and the matrix's are.

--case is a canonical case name (verify, bench and the matrix CSV print
them; a p= class field is taken and ignored, since the public call runs
each variant in its own class); --variant-b times another variant as B, in
--b's build (give the same file as --a to compare two variants of one
build). --case-b times another case as B instead, in --b's build: a twin
of the same work in other element types or another variant (kv=f16
against f32, as the low-precision targets compare), or any other shape,
where the ratio is then one of times, not of speeds at equal work. Its
inputs are the same N(0,1) draws as A's, rounded into its own types.
--threads-b N runs B on N threads and A on --threads (or OMP_NUM_THREADS):
with one build as A and B, the ratio is the call's speed-up from its
threads, measured in the same rounds (2 threads against 1, as the
performance targets ask, without the minutes between two runs).
Each library is copied to a file of its own first, so the same
build may be A and B (a null test: its ratio shows the noise floor).
Exit 0 with the ratio, 1 when a call fails, 2 on bad usage.
"""

import argparse
import ctypes
import math
import os
import shutil
import statistics
import sys
import tempfile
import time

# NumPy's OpenBLAS starts a pool of its own at import, a thread per core
# but one, that nothing here calls, beside the OpenMP threads being timed
# (on a 2-core Zen 3 its idle thread took 3.5 % of the samples of a
# 1-thread run). Set before the import: the pool reads it once, then.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbench_csv as abcsv  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import layout  # noqa: E402  (NumPy's huge-page switch, shared with the peer workers)

# Bad usage raises DataError: abcsv.run_cli makes it one line and exit 2.
UsageError = abcsv.DataError
# The case name's shape fields, in attn_shape's order (abcsv.SHAPE_COLUMNS).
SHAPE_KEYS = ("B", "Hq", "Hkv", "nq", "nkv", "dk", "dv", "causal")


def dtype_code(name):
    """attn_dtype of a type name: abcsv.DTYPES is in the enum's order."""
    return abcsv.DTYPES.index(name)


class Shape(ctypes.Structure):
    # include/attn.h's attn_shape, field order and all.
    _fields_ = [(name, ctypes.c_int32) for name in abcsv.SHAPE_COLUMNS] + \
               [("scale", ctypes.c_float)]


class Types(ctypes.Structure):
    _fields_ = [("q", ctypes.c_int32), ("kv", ctypes.c_int32), ("o", ctypes.c_int32)]


def parse_case(name, flag="--case"):
    """impl=..,B=..,Hq=..,...[,scale=..][,q=..,kv=..,o=..] -> (variant, Shape, Types);
    `flag` names the option in the messages."""
    fields = {}
    for part in name.split(","):
        key, eq, value = part.partition("=")
        if not eq or not value:
            raise UsageError(f"{flag}: '{part}' is not key=value")
        if key in fields:
            raise UsageError(f"{flag}: '{key}' given twice")
        fields[key] = value
    allowed = {"impl", "scale", "q", "kv", "o", "data", "p", *SHAPE_KEYS}
    for key in fields:
        if key not in allowed:
            raise UsageError(f"{flag}: unknown field '{key}' (takes {', '.join(sorted(allowed))})")
    if fields.get("data", "normal") != "normal":
        raise UsageError(f"{flag}: data={fields['data']}: only normal data is timed here")
    if "impl" not in fields:
        raise UsageError(f"{flag}: impl= (the variant) is required")
    values = []
    for key in SHAPE_KEYS:
        if key not in fields:
            raise UsageError(f"{flag}: {key}= is required")
        try:
            values.append(int(fields[key]))
        except ValueError:
            raise UsageError(f"{flag}: {key}={fields[key]} is not an integer") from None
    try:
        scale = float(fields.get("scale", "0"))
    except ValueError:
        raise UsageError(f"{flag}: scale={fields['scale']} is not a number") from None
    types = []
    for key in ("q", "kv", "o"):
        t = fields.get(key, "f32")
        if t not in abcsv.DTYPES:
            raise UsageError(f"{flag}: {key}={t} (takes {', '.join(abcsv.DTYPES)})")
        types.append(dtype_code(t))
    named = dict(zip(SHAPE_KEYS, values))
    for key, value in named.items():
        if key != "causal" and not 1 <= value < 2**31:
            raise UsageError(f"{flag}: {key}={value}: from 1 to 2^31 - 1")
    if named["causal"] not in (0, 1):
        raise UsageError(f"{flag}: causal={named['causal']}: 0 or 1")
    if named["Hq"] % named["Hkv"]:
        raise UsageError(f"{flag}: Hkv={named['Hkv']} does not divide Hq={named['Hq']}")
    return fields["impl"], Shape(*values, scale), Types(*types)


def aligned(x):
    """x copied to a 64-byte boundary, as the harness allocates (aligned_alloc
    64): NumPy's large arrays start 16 bytes past one, and a kernel's
    64-byte loads would then straddle two lines each, a cost the harness's
    runs never pay."""
    raw = np.empty(x.nbytes + 64, dtype=np.uint8)
    skip = -raw.ctypes.data % 64
    out = raw[skip:skip + x.nbytes].view(x.dtype)
    out[:] = x
    return out


def tensor(rng, count, dtype):
    """N(0,1) values rounded to nearest even into dtype, as the harness makes them."""
    x = rng.standard_normal(count, dtype=np.float32)
    if dtype == dtype_code("f16"):
        x = x.astype(np.float16).view(np.uint16)
    elif dtype == dtype_code("bf16"):
        bits = x.view(np.uint32).astype(np.uint64)
        x = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return aligned(x)


def load(path, copy_dir, tag):
    if not os.path.isfile(path):
        raise UsageError(f"--{tag}: {path}: no such file")
    # A file of its own: dlopen would hand back the library already
    # loaded under the same path, so A and B would be one copy.
    copy = os.path.join(copy_dir, f"libattn_{tag}.so")
    shutil.copyfile(path, copy)
    try:
        lib = ctypes.CDLL(copy, mode=os.RTLD_LOCAL)
        for symbol in ("attn_run_typed", "attn_strerror"):  # or this is not libattn
            getattr(lib, symbol)
    except (OSError, AttributeError) as e:
        raise UsageError(f"--{tag}: {path} is not a loadable libattn.so ({e})") from None
    lib.attn_run_typed.restype = ctypes.c_int
    lib.attn_run_typed.argtypes = [ctypes.c_char_p, ctypes.POINTER(Shape), ctypes.POINTER(Types),
                                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_void_p]
    lib.attn_strerror.restype = ctypes.c_char_p
    lib.attn_strerror.argtypes = [ctypes.c_int]
    return lib


# As the harness (harness/perf_cell.c, attn_perf_copies): decode cells
# rotate copies spanning twice the LLC, at most 64, 256 MiB when unknown.
DECODE_MAX_NQ = 16
MAX_COPIES = 64
DEFAULT_LLC_BYTES = 256 << 20


def llc_bytes():
    """The largest cache sysfs lists for CPU 0, or 0 when it lists none."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    best = 0
    try:
        names = os.listdir(base)
    except OSError:
        return 0
    for name in names:
        try:
            with open(os.path.join(base, name, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text and text[-1] in units and text[:-1].isdigit():
            best = max(best, int(text[:-1]) * units[text[-1]])
        elif text.isdigit():
            best = max(best, int(text))
    return best


def auto_copies(shape, one_copy_bytes, llc):
    """Copies a call rotates through: 1 unless the cell is decode."""
    if shape.n_q > DECODE_MAX_NQ:
        return 1
    want = 2 * (llc if llc > 0 else DEFAULT_LLC_BYTES)
    return max(1, min(MAX_COPIES, -(-want // max(one_copy_bytes, 1))))


class Side:
    """One library and variant; its calls walk the copies in turn."""

    def __init__(self, lib, variant, shape, types, copies, threads=None, omp=None):
        self.lib, self.variant = lib, variant.encode()
        self.shape, self.types, self.copies = shape, types, copies
        # Its own thread count, set before each of its batches (the library
        # reads omp_get_max_threads() at every call); None: as the process's.
        # `seen`: what libgomp then reported, the count its calls ran on.
        self.threads, self.omp, self.seen = threads, omp, threads
        self.next = 0

    def call(self):
        buffers = self.copies[self.next]
        self.next = (self.next + 1) % len(self.copies)
        q, k, v, o = (b.ctypes.data for b in buffers)
        rc = self.lib.attn_run_typed(self.variant, ctypes.byref(self.shape),
                                     ctypes.byref(self.types), q, k, v, o)
        if rc != 0:
            raise RuntimeError(f"{self.variant.decode()}: {self.lib.attn_strerror(rc).decode()}")

    def seconds_per_call(self, reps):
        if self.threads is not None:
            self.omp.omp_set_num_threads(self.threads)
            self.seen = self.omp.omp_get_max_threads()
        t0 = time.perf_counter()
        for _ in range(reps):
            self.call()
        return (time.perf_counter() - t0) / reps


def calls_for(side, seconds):
    """Calls that take about `seconds`, from batches doubled until one
    takes a tenth of that, then timed twice more, the fastest of the
    three counting: one call alone (the first after a pause, a thread
    pool waking up) can be many times the next, one batch can lose a time
    slice to a neighbour, and a round of too few calls then measures the
    hiccup (rounds of 1.3 ms instead of 20 once, a null test at 0.26x)."""
    reps = 1
    while True:
        took = side.seconds_per_call(reps) * reps
        if took >= seconds / 10 or reps >= 1 << 24:
            took = min([took] + [side.seconds_per_call(reps) * reps for _ in range(2)])
            return max(1, round(reps * seconds / max(took, 1e-9)))
        reps *= 2


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="libattn.so of side A")
    ap.add_argument("--b", required=True, help="libattn.so of side B")
    ap.add_argument("--case", required=True, help="a canonical case name (impl=...,B=...,...)")
    ap.add_argument("--variant-b", help="B's variant (default: the case's)")
    ap.add_argument("--case-b", help="B's own case (default: --case): a twin in other types, "
                                     "or another shape")
    ap.add_argument("--threads", type=int, help="OMP_NUM_THREADS for both (default: as set)")
    ap.add_argument("--threads-b", type=int,
                    help="B's own thread count (default: --threads); A keeps --threads")
    ap.add_argument("--rounds", type=int, default=9, help="alternating rounds (default 9)")
    ap.add_argument("--seconds", type=float, default=0.2,
                    help="time per side per round, at least one call (default 0.2)")
    ap.add_argument("--pages", choices=("huge", "base"), default="huge",
                    help="pages under the arrays: transparent huge pages (default) or 4 KiB")
    ap.add_argument("--copies", type=int,
                    help="copies of the inputs the calls rotate through (default: 1, or for "
                         "decode, n_q <= 16, enough to span twice the last-level cache)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        if args.rounds < 1:
            raise UsageError(f"--rounds {args.rounds}: at least 1")
        for flag, n in (("--threads", args.threads), ("--threads-b", args.threads_b)):
            if n is not None and n < 1:
                raise UsageError(f"{flag} {n}: at least 1")
        if not args.seconds > 0:
            raise UsageError(f"--seconds {args.seconds}: must be > 0")
        if args.copies is not None and not 1 <= args.copies <= MAX_COPIES:
            raise UsageError(f"--copies {args.copies}: from 1 to {MAX_COPIES}")
        variant, shape, types = parse_case(args.case)
        if args.case_b and args.variant_b:
            raise UsageError("--variant-b with --case-b: give B's variant as --case-b's impl=")
        b_case = parse_case(args.case_b, "--case-b") if args.case_b else (
            args.variant_b or variant, shape, types)
        if args.threads is not None:
            os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before libgomp loads
        with tempfile.TemporaryDirectory() as copies:
            lib_a, lib_b = load(args.a, copies, "a"), load(args.b, copies, "b")
            return run(args, (variant, shape, types), b_case, lib_a, lib_b)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def use_pages(pages):
    """The peer workers' switch (scripts/peers/layout.py): NumPy's arrays of
    4 MiB or more on huge pages or not, as the harness's --pages."""
    try:
        layout.use_pages(pages)
    except layout.ProblemError as e:
        raise UsageError(f"--pages {pages}: {e}") from None


def median_interval(values, level=0.95):
    """(lo, hi, coverage): the narrowest interval of two order statistics,
    the k-th smallest and the k-th largest, that holds the median of the
    values' distribution with probability at least `level` (the number of
    values below the median is binomial(n, 1/2)); None when even the
    smallest and the largest do not (fewer than 6 values at 95 %)."""
    n = len(values)
    ordered = sorted(values)
    best = None
    below = 0.0  # P(fewer than k of the n values lie below the median)
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2.0 ** n
        coverage = 1.0 - 2.0 * below
        if coverage < level:
            break
        best = (ordered[k - 1], ordered[n - k], coverage)
    return best


def inputs(shape, types, copies_arg):
    """Q, K, V and O of the shape in its types, the first of its copies and
    the rest (the same draws on every call of this: rng seed 1)."""
    s = shape
    rng = np.random.default_rng(1)
    q = tensor(rng, s.batch * s.heads_q * s.n_q * s.d_k, types.q)
    k = tensor(rng, s.batch * s.heads_kv * s.n_kv * s.d_k, types.kv)
    v = tensor(rng, s.batch * s.heads_kv * s.n_kv * s.d_v, types.kv)
    o = aligned(np.zeros(s.batch * s.heads_q * s.n_q * s.d_v,
                         dtype=np.float32 if types.o == dtype_code("f32") else np.uint16))
    first = (q, k, v, o)
    count = copies_arg or auto_copies(s, sum(x.nbytes for x in first), llc_bytes())
    return [first] + [tuple(aligned(x) for x in first) for _ in range(count - 1)]


def both(x, y):
    """One count, or A's / B's when they differ."""
    return f"{x}" if x == y else f"{x} / {y}"


def threads_line(a, b):
    """The threads the calls ran on: as libgomp reported them after each
    side's setting (--threads-b), or OMP_NUM_THREADS for both."""
    if a.threads is None:
        return os.environ.get("OMP_NUM_THREADS", "default")
    return both(a.seen, b.seen)


def openmp():
    """libgomp, which libattn loaded: the thread count is its setting."""
    try:
        omp = ctypes.CDLL("libgomp.so.1")
        omp.omp_get_max_threads.restype = ctypes.c_int
        omp.omp_set_num_threads.argtypes = [ctypes.c_int]
        return omp
    except OSError as e:
        raise UsageError(f"--threads-b: libgomp not found ({e})") from None


def run(args, a_case, b_case, lib_a, lib_b):
    use_pages(args.pages)
    copies = inputs(a_case[1], a_case[2], args.copies)
    b_copies = inputs(b_case[1], b_case[2], args.copies) if args.case_b else copies
    if args.threads_b is not None:
        omp = openmp()
        a = Side(lib_a, *a_case, copies, omp.omp_get_max_threads(), omp)
        b = Side(lib_b, b_case[0], b_case[1], b_case[2], b_copies, args.threads_b, omp)
    else:
        a = Side(lib_a, *a_case, copies)
        b = Side(lib_b, b_case[0], b_case[1], b_case[2], b_copies)
    for side in (a, b):  # warm-up: workspaces, thread pools, caches
        side.call()
    # Another case may take another time a call: each side its own count.
    reps = {a: calls_for(a, args.seconds)}
    own = args.case_b or args.threads_b is not None
    reps[b] = calls_for(b, args.seconds) if own else reps[a]
    times_a, times_b, ratios = [], [], []
    for r in range(args.rounds):
        order = (a, b) if r % 2 == 0 else (b, a)
        t = {side: side.seconds_per_call(reps[side]) for side in order}
        times_a.append(t[a])
        times_b.append(t[b])
        ratios.append(t[a] / t[b])
    ms = statistics.median
    print(f"case {args.case}; B: {b.variant.decode()}"
          + (f", case {args.case_b}" if args.case_b else "") + "; threads "
          f"{threads_line(a, b)}; {args.rounds} rounds of "
          f"{both(reps[a], reps[b])} call(s) a side; {both(len(copies), len(b_copies))} "
          f"cop{'y' if len(copies) == len(b_copies) == 1 else 'ies'} of the inputs "
          f"on {args.pages} pages")
    print(f"A {ms(times_a) * 1e3:.4f} ms  B {ms(times_b) * 1e3:.4f} ms  (medians a call)")
    interval = median_interval(ratios)
    print(f"B speedup (A's time / B's, per round): median {ms(ratios):.3f}x "
          f"[{min(ratios):.3f} .. {max(ratios):.3f}]; "
          + (f"95 % interval of the median {interval[0]:.3f} .. {interval[1]:.3f}"
             if interval else "too few rounds for a 95 % interval of the median (6 at least)"))
    return 0


if __name__ == "__main__":
    sys.exit(abcsv.run_cli(main, sys.argv[1:]))
