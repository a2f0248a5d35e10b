"""Shared by the script tests: paths, running a script as the user would,
and writing variants of the fixture CSV."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, "scripts")
FIXTURES = os.path.join(HERE, "fixtures")
MATRIX = os.path.join(FIXTURES, "matrix.csv")  # the format before the element-type columns
MATRIX_DTYPES = os.path.join(FIXTURES, "matrix_dtypes.csv")  # f32 beside f16/bf16 rows
PAIR_A = os.path.join(FIXTURES, "pair_a.csv")
PAIR_B = os.path.join(FIXTURES, "pair_b.csv")

VARIANTS = ("naive", "blocked", "stream", "avx2", "avx512", "xsmm", "blas")

sys.path.insert(0, SCRIPTS)


def run_script(name, *args, cwd=None):
    """Runs scripts/<name> with this interpreter (the venv's under ctest)."""
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def meta_of(csv_path):
    return csv_path[:-len(".csv")] + ".meta.json"


def copy_fixture(src_csv, dst_dir, name="matrix.csv"):
    """Copies a fixture CSV and its meta JSON; returns the new CSV path."""
    dst = os.path.join(dst_dir, name)
    shutil.copyfile(src_csv, dst)
    shutil.copyfile(meta_of(src_csv), meta_of(dst))
    return dst


def read_rows(csv_path):
    with open(csv_path, newline="") as f:
        return list(csv.DictReader(f))


def write_rows(dst_csv, rows, header, meta_from=MATRIX):
    """Writes rows (dicts) under header, with the meta JSON of meta_from."""
    with open(dst_csv, "w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=header, lineterminator="\n", extrasaction="ignore")
        out.writeheader()
        out.writerows(rows)
    shutil.copyfile(meta_of(meta_from), meta_of(dst_csv))
    return dst_csv


def header_of(csv_path):
    with open(csv_path, newline="") as f:
        return next(csv.reader(f))


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def parse_csv_text(text):
    return list(csv.DictReader(io.StringIO(text)))


def series_by_name(panel):
    """A plot panel's series by name (plots.json)."""
    return {s["name"]: s for s in panel["series"]}


def find_row(rows, **fields):
    """The one CSV row whose fields equal these (as strings)."""
    matches = [r for r in rows if all(r[k] == str(v) for k, v in fields.items())]
    assert len(matches) == 1, (fields, len(matches))
    return matches[0]
