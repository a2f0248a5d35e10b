#!/usr/bin/env python3
"""ctest results_schema: the CSV's columns are the same in all three places.

    results_schema.py ATTNBENCH

The C table (`attnbench matrix --print-columns`: name and type per line),
docs/results-format.md's Columns table, and the Python reader
(scripts/attnbench_csv.COLUMNS, which parses that doc) must list the same
columns in the same order with the same types; and a CSV written by the C
writer must read back through the Python reader with every column typed.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "scripts"))
import attnbench_csv as ab  # noqa: E402

PY_TYPES = {str: "string", int: "int", float: "float"}


def main(attnbench):
    out = subprocess.run([attnbench, "matrix", "--print-columns"], check=True,
                         capture_output=True, text=True).stdout
    c_cols = [tuple(line.split()) for line in out.splitlines() if line.strip()]
    doc_cols = [(name, PY_TYPES[kind]) for name, kind in ab.spec_columns()]
    py_cols = [(name, PY_TYPES[kind]) for name, kind in ab.COLUMNS]
    failures = []
    if c_cols != doc_cols:
        failures.append(f"C table and docs/results-format.md differ:\n  C:   {c_cols}\n"
                        f"  doc: {doc_cols}")
    if py_cols != doc_cols:
        failures.append("scripts/attnbench_csv.COLUMNS differs from the doc")
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "m.csv")
        subprocess.run([attnbench, "matrix", "--preset", "test", "--variant", "naive",
                        "--filter", "causal=1", "--threads", "1", "--repetitions", "1",
                        "--min-time", "0", "--out", csv_path, "--peak", os.environ["ATTN_PEAK"],
                        "--bw-mib", "64"],
                       check=True, capture_output=True)
        rows = ab.read_csv(csv_path)
        with open(csv_path, encoding="utf-8") as f:
            header = f.readline().strip().split(",")
        if header != [name for name, _ in c_cols]:
            failures.append(f"the file's header is not the C table: {header}")
        for row in rows:
            for name, kind in ab.COLUMNS:
                value = row[name]
                if value is not None and not isinstance(value, kind):
                    failures.append(f"{name}: {value!r} is not {PY_TYPES[kind]}")
    for f in failures:
        print("FAIL", f)
    print(f"results_schema: {3 - min(len(failures), 3)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
