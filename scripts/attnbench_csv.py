"""Loading and validation of attnbench results: the matrix CSV and its
sidecar FILE.meta.json (docs/results-format.md is the contract).

plot.py, report.py and compare.py all read results through load(); the
column list lives here only. Anything wrong with an input raises DataError,
which run_cli() turns into one line `error: ...` on stderr and exit code 2.
"""

import csv
import json
import math
import os
import re
import sys

class DataError(Exception):
    """An input the scripts cannot use; the message is one line for the user."""


# The columns are specified once, in docs/results-format.md's Columns table
# (name, type, meaning); the C writer walks its own copy of that table and
# ctest results_schema checks that the two agree. A file's header gives the
# columns it has; the spec gives each one's type.
SPEC_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "docs",
                         "results-format.md")
SPEC_TYPES = {"string": str, "int": int, "float": float}


def spec_columns(path=SPEC_PATH):
    """(name, type) pairs of the Columns table, in order."""
    columns, in_table = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## Columns"):
                in_table = True
            elif line.startswith("## ") and in_table:
                break
            elif in_table and line.startswith("| `"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                name, kind = cells[0].strip("`"), cells[1]
                if kind not in SPEC_TYPES:
                    raise DataError(f"{path}: column {name}: unknown type {kind!r}")
                columns.append((name, SPEC_TYPES[kind]))
    return tuple(columns)


COLUMNS = spec_columns()
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)
SHAPE_COLUMNS = ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "d_k", "d_v", "causal")
# Element types of Q, K/V and O. Files written before these columns existed
# (the results/ folders of earlier runs) have none of them: every row of
# such a file was f32, and reads as such.
DTYPE_COLUMNS = ("q_dtype", "kv_dtype", "o_dtype")
# What a row was timed in alternation with, beside paired_variant. Files
# written before these columns have none of them: their rows read as
# paired with nothing named (None), as they were.
PAIRED_COLUMNS = ("paired_case", "paired_threads")
# Where a row's roof came from: "paired" (measured in rounds alternating
# with the row's calls) or "run" (the run's peak). Files written before this
# column judged every row against the run's peak, and read as such.
ROOF_COLUMNS = ("roof_source",)
OPTIONAL_COLUMNS = DTYPE_COLUMNS + PAIRED_COLUMNS + ROOF_COLUMNS
DTYPES = ("f32", "f16", "bf16")
ALL_F32 = ("f32", "f32", "f32")
# The names bench and matrix --dtype give the type combinations.
DTYPE_AXIS_NAMES = {ALL_F32: "f32", ("bf16",) * 3: "bf16", ("f16",) * 3: "f16",
                    ("f32", "f16", "f32"): "f16kv", ("f32", "bf16", "f32"): "bf16kv"}
DTYPE_AXIS_ORDER = ("f32", "bf16", "f16", "bf16kv", "f16kv")
LIMITS = ("fma", "bandwidth")

# The variants the suite ships, in the order tables and legends list them.
VARIANT_ORDER = ("naive", "blocked", "stream", "avx2", "avx512", "xsmm", "blas")


def meta_path(csv_path):
    """FILE.csv -> FILE.meta.json (any other name: NAME.meta.json)."""
    root, ext = os.path.splitext(csv_path)
    return (root if ext == ".csv" else csv_path) + ".meta.json"


def _parse_field(path, line, name, kind, text):
    text = text.strip()
    if kind is str:
        return text
    if text == "":
        return None
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise DataError(f"{path}:{line}: column '{name}': {text!r} is not {what}") from None


def _parse_row(path, line, record):
    if None in record:
        raise DataError(f"{path}:{line}: more fields than the header has columns")
    if any(value is None for value in record.values()):
        raise DataError(f"{path}:{line}: fewer fields than the header has columns")
    types = dict(COLUMNS)
    row = {name: _parse_field(path, line, name, types.get(name, str), text)
           for name, text in record.items()}
    if row["limit"] not in LIMITS + ("",):
        raise DataError(f"{path}:{line}: column 'limit': {row['limit']!r} is not fma or bandwidth")
    if not row["variant"]:
        raise DataError(f"{path}:{line}: column 'variant' is empty")
    row.setdefault("paired_case", "")
    row.setdefault("paired_threads", None)
    row.setdefault("roof_source", "run")
    for name in DTYPE_COLUMNS:
        row.setdefault(name, "f32")
        if row[name] not in DTYPES:
            raise DataError(f"{path}:{line}: column '{name}': {row[name]!r} is not "
                            f"{', '.join(DTYPES)}")
    return row


def _open_text(path):
    if not os.path.exists(path):
        raise DataError(f"{path}: no such file")
    if os.path.isdir(path):
        raise DataError(f"{path}: is a directory, not a CSV file")
    try:
        return open(path, newline="", encoding="utf-8")
    except OSError as err:
        raise DataError(f"{path}: cannot open: {err.strerror}") from None


def read_csv(path):
    """Rows of one matrix CSV as dicts of typed values."""
    with _open_text(path) as f:
        try:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            if not header:
                raise DataError(f"{path}: empty file (no header row)")
            missing = [name for name in COLUMN_NAMES
                       if name not in header and name not in OPTIONAL_COLUMNS]
            if missing:
                raise DataError(f"{path}: missing columns: {', '.join(missing)}")
            rows = [_parse_row(path, reader.line_num, record) for record in reader]
        except csv.Error as err:
            raise DataError(f"{path}: not a readable CSV: {err}") from None
        except UnicodeDecodeError:
            raise DataError(f"{path}: not UTF-8 text") from None
    if not rows:
        raise DataError(f"{path}: no data rows (only a header)")
    return rows


def read_meta(csv_path):
    """The sidecar JSON as a dict; {} (with a note) when there is none."""
    path = meta_path(csv_path)
    if not os.path.exists(path):
        note(f"no {os.path.basename(path)} beside {csv_path}: machine details unknown")
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: cannot read: {err}") from None
    except json.JSONDecodeError as err:
        raise DataError(f"{path}: not valid JSON: {err.msg} at line {err.lineno}") from None
    if not isinstance(meta, dict):
        raise DataError(f"{path}: expected a JSON object at the top level")
    return meta


class Results:
    """Rows of one or more CSVs of one machine, and that machine's metadata."""

    def __init__(self, paths, rows, meta):
        self.paths = list(paths)
        self.rows = rows
        self.meta = meta


def load(paths):
    """Reads the CSVs in order; a later row with the same key replaces an
    earlier one (a re-measured cell). Metadata comes from the first file
    that has it."""
    by_key = {}
    meta = {}
    for path in paths:
        rows = read_csv(path)
        file_meta = read_meta(path)
        if not meta:
            meta = file_meta
        elif file_meta and file_meta.get("cpu_model") != meta.get("cpu_model"):
            note(f"{path} is from another machine ({file_meta.get('cpu_model')}); "
                 "titles name the first")
        for row in rows:
            by_key[row_key(row)] = row
    return Results(paths, list(by_key.values()), meta)


def load_one(path):
    return load([path])


# Row helpers -----------------------------------------------------------------

def shape_of(row):
    return tuple(row[name] for name in SHAPE_COLUMNS)


def types_of(row):
    """(q, kv, o) element types: ('f32', 'bf16', 'f32') for a bf16 KV cache."""
    return tuple(row.get(name) or "f32" for name in DTYPE_COLUMNS)


def is_f32(row):
    return types_of(row) == ALL_F32


def dtype_label(row):
    """The --dtype name of the row's types ('bf16kv'), or 'q=..,kv=..,o=..'."""
    types = types_of(row)
    return DTYPE_AXIS_NAMES.get(types) or "q={},kv={},o={}".format(*types)


def dtype_sort_key(label):
    if label in DTYPE_AXIS_ORDER:
        return (0, DTYPE_AXIS_ORDER.index(label), label)
    return (1, 0, label)


def f32_rows(rows):
    """The all-f32 rows: what every view that compares variants on one
    cell reads, so a bf16 row never stands in for an f32 one."""
    return [r for r in rows if is_f32(r)]


def scale_of(row):
    """The cell's own scale, from its case name's `scale=` (perf-targets'
    peaked-attention cells); 0.0, the default 1/sqrt(d_k), without one."""
    m = re.search(r"(?:^|,)scale=([^,]+)", row.get("case") or "")
    try:
        return float(m.group(1)) if m else 0.0
    except ValueError:
        return 0.0


def usual_scale(row):
    """True for a row at the default scale: what the plots and tables
    compare (a row at a scale of its own has a twin at the usual one)."""
    return scale_of(row) == 0.0


def row_key(row):
    """What identifies a cell of the matrix: variant, shape, scale, element
    types, threads."""
    return (row["variant"], shape_of(row), scale_of(row), types_of(row), row["threads"])


def is_ok(row):
    return row["status"] == "ok"


def is_skipped(row):
    return row["status"] == "skipped"


def is_failed(row):
    return row["status"] == "failed"


def is_peer(row):
    """A framework's row (torch, onnxruntime, openvino), timed beside ours."""
    return row.get("kind") == "peer"


def status_text(row):
    """'ok', or 'skipped: needs avx512f': the status with its reason."""
    return row["status"] + (f": {row['reason']}" if row.get("reason") else "")


def is_finite(value):
    return value is not None and math.isfinite(value)


def has_timing(row):
    """Measured and not skipped: a row the performance views can use."""
    return not is_skipped(row) and is_finite(row["time_ns_median"]) and row["time_ns_median"] > 0


def case_types(case):
    """(q, kv, o) element types named in a canonical case string; f32 where
    the name has none (an all-f32 case carries no type fields)."""
    fields = dict(f.split("=", 1) for f in (case or "").split(",") if "=" in f)
    return tuple(fields.get(k) or "f32" for k in ("q", "kv", "o"))


def paired_ratio(peer, row):
    """peer's median time over `row`'s from the rounds in which the two
    alternated (> 1: `row` faster), or None when the peer was not paired
    with this very cell (another variant, thread count or element types):
    its paired time is then another variant's and says nothing of `row`."""
    paired = peer.get("paired_time_ns_median")
    if (not has_timing(peer) or not is_finite(paired) or paired <= 0
            or peer.get("paired_variant") != row["variant"]
            or peer["threads"] != row["threads"] or shape_of(peer) != shape_of(row)
            or types_of(peer) != types_of(row)):
        return None
    # Files from before these columns leave them empty: nothing to contradict.
    if peer.get("paired_threads") not in (None, row["threads"]):
        return None
    if peer.get("paired_case") and case_types(peer["paired_case"]) != types_of(row):
        return None
    return peer["time_ns_median"] / paired


def peer_over(peer, row):
    """(peer's time over `row`'s, paired): the ratio of the rounds in which
    the two alternated (paired_ratio) and True, or, where the peer was
    paired with another cell or with none, the ratio of the two medians
    timed apart and False."""
    ratio = paired_ratio(peer, row)
    if ratio is not None:
        return ratio, True
    return peer["time_ns_median"] / row["time_ns_median"], False


def shape_label(row, with_types=False):
    """A short, readable name of the shape: the fields that differ from the
    common case (batch 1, MHA, n_q = n_kv, d_v = d_k, no mask) are added;
    with_types, the element types when not all f32."""
    n_q, n_kv, d_k, d_v = row["n_q"], row["n_kv"], row["d_k"], row["d_v"]
    parts = [f"n={n_kv}" if n_q == n_kv else f"nq={n_q} nkv={n_kv}"]
    parts.append(f"d={d_k}" if d_v == d_k else f"dk={d_k} dv={d_v}")
    heads = f"H={row['heads_q']}"
    if row["heads_kv"] != row["heads_q"]:
        heads += f"/{row['heads_kv']}"
    parts.append(heads)
    if row["batch"] != 1:
        parts.append(f"B={row['batch']}")
    if row["causal"]:
        parts.append("causal")
    if with_types and not is_f32(row):
        parts.append(dtype_label(row))
    return " ".join(parts)


# The roofline's side (harness/perf_cases.c, attn_perf_roofline_bandwidth_bound)
# ------------------------------------------------------------------------------

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
BANDWIDTH_MAX_N_Q = 16


def keys_seen(row, i):
    """Keys query row i sees (impls/visibility.c: bottom-right causal)."""
    if not row["causal"]:
        return row["n_kv"]
    return max(0, min(row["n_kv"], i + row["n_kv"] - row["n_q"] + 1))


def cell_flops(row):
    """2·(d_k + d_v) per key a query row sees, over rows, heads and batch:
    the work a row's gflops counts (attn_perf_flops)."""
    rows_keys = (row["n_q"] * row["n_kv"] if not row["causal"]
                 else sum(keys_seen(row, i) for i in range(row["n_q"])))
    return 2.0 * (row["d_k"] + row["d_v"]) * rows_keys * row["heads_q"] * row["batch"]


def cell_bytes(row):
    """Q, K, V and O once, at their types' sizes (attn_perf_bytes)."""
    q_t, kv_t, o_t = types_of(row)
    b, hq, hkv = row["batch"], row["heads_q"], row["heads_kv"]
    return (DTYPE_BYTES[q_t] * b * hq * row["n_q"] * row["d_k"]
            + DTYPE_BYTES[kv_t] * b * hkv * row["n_kv"] * (row["d_k"] + row["d_v"])
            + DTYPE_BYTES[o_t] * b * hq * row["n_q"] * row["d_v"])


def is_decode(row):
    """n_q <= 16: a row the roofline may judge against the read roof."""
    return row["n_q"] <= BANDWIDTH_MAX_N_Q


def roofline_times(row):
    """(seconds of the row's bytes at peak_gbytes_per_s, seconds of its
    flops at peak_gflops), or None when a roof was not measured."""
    gflops, gbs = row.get("peak_gflops"), row.get("peak_gbytes_per_s")
    if not (is_finite(gflops) and is_finite(gbs) and gflops > 0 and gbs > 0):
        return None
    return cell_bytes(row) / (gbs * 1e9), cell_flops(row) / (gflops * 1e9)


def roofline_limit(row, times=None):
    """The roof a row is judged against, by the rule the matrix applies
    (docs/results-format.md, `limit`), from the row's own roof columns:
    prefill `fma`; decode (n_q <= 16) `bandwidth` when its bytes at
    peak_gbytes_per_s take at least as long as its flops at peak_gflops,
    else `fma`; a roof not measured leaves the shape's rule (`bandwidth`).
    `times`: the row's roofline_times, when the caller has them already."""
    if not is_decode(row):
        return "fma"
    times = times if times is not None else roofline_times(row)
    return "bandwidth" if times is None or times[0] >= times[1] else "fma"


def family_of(row):
    """A shape without its sequence length: the panel a row is drawn in when
    n is on the x axis. n_q stays in when it is not n_kv (decode)."""
    n_q = None if row["n_q"] == row["n_kv"] else row["n_q"]
    return (row["d_k"], row["d_v"], row["heads_q"], row["heads_kv"], row["batch"], row["causal"],
            n_q)


def family_label(family):
    d_k, d_v, heads_q, heads_kv, batch, causal, n_q = family
    parts = [f"d_k={d_k}" if d_v == d_k else f"d_k={d_k} d_v={d_v}"]
    parts.append(f"heads={heads_q}" + (f"/{heads_kv} kv" if heads_kv != heads_q else ""))
    if n_q is not None:
        parts.append(f"n_q={n_q}")
    if batch != 1:
        parts.append(f"batch={batch}")
    if causal:
        parts.append("causal")
    return ", ".join(parts)


def variant_sort_key(name):
    """Known variants in VARIANT_ORDER, others after them by name."""
    if name in VARIANT_ORDER:
        return (0, VARIANT_ORDER.index(name), name)
    return (1, 0, name)


def variants_in(rows):
    return sorted({row["variant"] for row in rows}, key=variant_sort_key)


def shape_sort_key(row):
    """Prefill before decode, then by head size, heads, ..., and n."""
    return (is_decode(row), row["d_k"], row["heads_q"], row["heads_kv"], row["d_v"],
            row["batch"], row["causal"], row["n_q"], row["n_kv"])


def family_sort_key(family):
    return tuple(-1 if value is None else value for value in family)


def machine_title(meta):
    """'Intel(R) Xeon(R) Processor, 2 cores, 2026-11-30' from the metadata."""
    model = meta.get("cpu_model") or "unknown machine"
    parts = [model]
    if meta.get("cores"):
        parts.append(f"{meta['cores']} cores")
    if meta.get("date"):
        parts.append(str(meta["date"])[:10])
    return ", ".join(parts)


# Command-line plumbing shared by the scripts --------------------------------

def note(message):
    print(f"note: {message}", file=sys.stderr)


def run_cli(main, argv=None):
    """Runs main(argv); a DataError or an OS error on output becomes one
    line on stderr and exit code 2, never a traceback."""
    try:
        return main(argv)
    except DataError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        print(f"error: {where}{err.strerror or err}", file=sys.stderr)
        return 2


# Number and table formatting shared by report.py and compare.py ------------

def above_roof(r):
    """A row measured above its roof: the roof under-measured, so its
    pct_peak is no fraction of anything."""
    return bool(r.get("roof_exceeded")) or (is_finite(r.get("pct_peak"))
                                            and r["pct_peak"] > 100.0)


def fmt_pct(r):
    """pct_peak for a table cell, marked where the roof was exceeded."""
    return fmt_num(r["pct_peak"]) + (" (above the roof)" if above_roof(r) else "")


def fmt_num(value, digits=3):
    """Significant digits without exponent noise: 74.1, 0.812, 1230."""
    if value is None:
        return "–"
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{decimals}f}"


def fmt_time_ns(ns):
    if ns is None or not math.isfinite(ns):
        return "–"
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if ns >= scale:
            return f"{fmt_num(ns / scale)} {unit}"
    return f"{fmt_num(ns)} ns"


def format_table(header, rows, markdown):
    """An aligned plain-text table, or a GitHub markdown table."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    if markdown:
        esc = [[c.replace("|", "\\|") for c in row] for row in cells]
        lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in esc[1:]])
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def plural_threads(threads):
    return f"{threads} thread{'s' * (threads != 1)}"
