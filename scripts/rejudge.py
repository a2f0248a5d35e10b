#!/usr/bin/env python3
"""Re-judges the decode rows of matrix CSVs written before the roofline's
side rule, in place: every row with n_q <= 16 was then judged against the
read roof, also those whose flops take longer at the FMA roof than their
bytes at the read roof (many query heads a K/V head: an MQA decode's
"20 % of the read roof" was 40 % of the FMA roof).

    scripts/rejudge.py results/<slug>/matrix.csv ...          # rewrite
    scripts/rejudge.py --check results/*/*.csv                # exit 1 if any row would change

The rule (docs/results-format.md, `limit`; attnbench_csv.roofline_limit)
is applied with the row's own roof columns (a row within 1e-5 of its
ridge keeps its side: the columns are printed to 6 digits). A row whose
side changes gets the new `limit`, its `pct_peak` against that roof
(100·gflops/peak_gflops for `fma`) and `roof_exceeded` from it; with a
`roof_source` column it becomes `run`: in a file written before the rule
only the roof of the row's limit was measured beside it, so the roof it
moves to is the run's. Every other byte of
the file stays as it was, so a re-judged file reads as the matrix would
write it now. The measurements themselves are not touched: this changes
which roof a row is a fraction of, nothing else.

Exit 0 when done (or, with --check, when no row would change), 1 when
--check finds rows to re-judge, 2 on an unreadable file.
"""

import argparse
import csv
import io
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbench_csv as ab  # noqa: E402


# The columns are printed to 6 digits, the matrix decided from the full
# figures: a row this near its ridge keeps the side it was given.
TIE = 1e-5


def judged(row):
    """(limit, pct_peak, roof_exceeded) for a row by the rule: pct_peak
    None where the row has no timing."""
    times = ab.roofline_times(row) if ab.is_decode(row) else None
    if times and abs(times[0] - times[1]) <= TIE * max(times):
        limit = row["limit"]
    else:
        limit = ab.roofline_limit(row, times)
    rate, roof = ((row["gflops"], row["peak_gflops"]) if limit == "fma"
                  else (row["gbytes_per_s"], row["peak_gbytes_per_s"]))
    pct = (100.0 * rate / roof if ab.is_finite(rate) and ab.is_finite(roof) and roof > 0
           else None)
    return limit, pct, pct is not None and math.isfinite(pct) and pct > 100.0


def changes(path):
    """[(record index, row, new limit, new pct, new roof_exceeded)] for the
    rows of one file the rule judges against the other roof."""
    out = []
    for index, row in enumerate(ab.read_csv(path)):
        if not row["limit"]:
            continue
        limit, pct, exceeded = judged(row)
        if limit != row["limit"]:
            out.append((index, row, limit, pct, exceeded))
    return out


def rewrite(path, found):
    """Rewrites the changed records of `path`, every other line as it was."""
    with open(path, newline="", encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines(keepends=True)
    header = next(csv.reader([lines[0]]))
    col = {name: i for i, name in enumerate(header)}
    # Data records are the non-blank lines after the header (csv skips
    # blank ones; a record over several lines is refused below).
    records = [i for i in range(1, len(lines)) if lines[i].strip("\r\n")]
    for index, _, limit, pct, exceeded in found:
        line = records[index] + 1
        raw = lines[line - 1]
        ending = raw[len(raw.rstrip("\r\n")):]
        fields = next(csv.reader([raw]))
        if len(fields) != len(header):
            raise ab.DataError(f"{path}:{line}: a record over several lines; not rewritten")
        fields[col["limit"]] = limit
        fields[col["pct_peak"]] = "" if pct is None else f"{pct:.4g}"
        fields[col["roof_exceeded"]] = "1" if exceeded else "0"
        if "roof_source" in col:
            fields[col["roof_source"]] = "run"
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(fields)
        lines[line - 1] = buf.getvalue() + ending
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.write("".join(lines))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv", nargs="+", help="matrix CSV files")
    p.add_argument("--check", action="store_true",
                   help="only report the rows the rule would change; exit 1 if any")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    pending = 0
    for path in args.csv:
        found = changes(path)
        pending += len(found)
        for index, row, limit, pct, exceeded in found:
            was = f"{row['pct_peak']:.4g}%" if ab.is_finite(row["pct_peak"]) else "-"
            now = "-" if pct is None else f"{pct:.4g}%"
            print(f"{path}: {row['case']} threads={row['threads']}: "
                  f"{row['limit']} {was} -> {limit} {now}")
            if exceeded != bool(row.get("roof_exceeded")):
                ab.note(f"{row['case']} threads={row['threads']}: now "
                        f"{'above' if exceeded else 'within'} its roof; the sidecar's "
                        "roof_exceeded list is not rewritten")
        if found and not args.check:
            rewrite(path, found)
        what = "would change" if args.check else "re-judged"
        print(f"{path}: {len(found)} row{'s' * (len(found) != 1)} {what}")
    return 1 if args.check and pending else 0


if __name__ == "__main__":
    sys.exit(ab.run_cli(main))
