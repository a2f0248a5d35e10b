"""scripts/run_matrix.sh in a scratch copy of the tree with a stand-in
setup.sh and build/attnbench: the steps run in order with the documented
arguments, the results folder is complete, and a re-run resumes."""

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

import helpers as h

SLUG = "test-cpu-2c"

# Logs its arguments; `matrix` writes the pair_a fixture to --out unless the
# file is already there (as --resume would keep it).
FAKE_ATTNBENCH = textwrap.dedent(f"""\
    #!/usr/bin/env bash
    echo "attnbench $*" >> "$ROOT/calls.log"
    case "$1" in
    list) if [[ "${{2:-}}" == --slug ]]; then echo {SLUG}; else echo "naive  runs"; fi ;;
    peak) echo "fma peak: 1 GFLOP/s"; [[ "${{2:-}}" == --out ]] && echo '{{}}' > "$3" ;;
    verify) echo "all PASS"; exit "${{FAKE_VERIFY_STATUS:-0}}" ;;
    matrix)
        while [[ $# -gt 0 ]]; do [[ "$1" == --out ]] && out=$2; shift; done
        if [[ ! -f "$out" ]]; then
            cp "{h.PAIR_A}" "$out"; cp "{h.meta_of(h.PAIR_A)}" "${{out%.csv}}.meta.json"
        fi
        exit "${{FAKE_MATRIX_STATUS:-0}}" ;;
    esac
""")

# What the real set-up leaves behind: a build and a venv.
FAKE_SETUP = textwrap.dedent("""\
    #!/usr/bin/env bash
    echo "setup.sh" >> "$ROOT/calls.log"
    mkdir -p build .venv/bin
    cp "$ROOT/attnbench.stub" build/attnbench
    cp "$ROOT/python.stub" .venv/bin/python3
""")
MATRIX_QUICK = (f"attnbench matrix --preset quick --peak results/{SLUG}/peak.json "
                f"--out results/{SLUG}/matrix.csv --resume")
MATRIX_RESUME = f"attnbench matrix --preset quick --out results/{SLUG}/matrix.csv --resume"


def write_executable(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class RunMatrix(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        scripts = os.path.join(self.root, "scripts")
        os.makedirs(scripts)
        for name in os.listdir(h.SCRIPTS):
            if name.endswith((".py", ".sh")) and name != "setup.sh":
                shutil.copy2(os.path.join(h.SCRIPTS, name), scripts)
        write_executable(os.path.join(scripts, "setup.sh"), FAKE_SETUP)
        # The column spec the scripts read (docs/results-format.md).
        os.makedirs(os.path.join(self.root, "docs"))
        shutil.copy2(os.path.join(h.SCRIPTS, os.pardir, "docs", "results-format.md"),
                     os.path.join(self.root, "docs"))
        write_executable(os.path.join(self.root, "attnbench.stub"), FAKE_ATTNBENCH)
        # A venv python that is this interpreter (it has matplotlib).
        write_executable(os.path.join(self.root, "python.stub"),
                         f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        self.out = os.path.join(self.root, "results", SLUG)

    def tearDown(self):
        self.tmp.cleanup()

    def run_matrix(self, *args, verify_status=0, matrix_status=0):
        env = dict(os.environ, ROOT=self.root, FAKE_VERIFY_STATUS=str(verify_status),
                   FAKE_MATRIX_STATUS=str(matrix_status))
        return subprocess.run(["bash", os.path.join(self.root, "scripts", "run_matrix.sh"), *args],
                              capture_output=True, text=True, env=env, timeout=120)

    def calls(self):
        with open(os.path.join(self.root, "calls.log")) as f:
            return f.read().splitlines()

    def test_first_run_then_resume_then_full(self):
        """One user's sequence (each run plots, so they share one tree)."""
        self.check_first_run()
        os.remove(os.path.join(self.root, "calls.log"))
        self.check_rerun_resumes_with_the_same_peak()
        self.check_other_preset_sets_the_matrix_aside()

    def check_first_run(self):
        proc = self.run_matrix()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.calls(), [
            "setup.sh",
            "attnbench list --slug",
            "attnbench list",
            f"attnbench peak --out results/{SLUG}/peak.json",
            "attnbench verify",
            MATRIX_QUICK,
        ])
        for name in ("matrix.csv", "matrix.meta.json", "list.txt", "peak.txt", "peak.json",
                     "verify.txt", "README.md", "plots.json", "gflops_vs_n_t1.png"):
            self.assertTrue(os.path.exists(os.path.join(self.out, name)), name)
        with open(os.path.join(self.out, "README.md")) as f:
            readme = f.read()
        self.assertIn("![Prefill throughput vs n, 1 thread](gflops_vs_n_t1.png)", readme)
        self.assertIn("[verify.txt](verify.txt)", readme)

    def check_rerun_resumes_with_the_same_peak(self):
        proc = self.run_matrix()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.calls(), ["setup.sh", "attnbench list --slug", "attnbench list",
                                        "attnbench verify", MATRIX_RESUME])
        self.assertIn("keeping the peaks of its first run", proc.stdout)

    def check_other_preset_sets_the_matrix_aside(self):
        proc = self.run_matrix("--full")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"attnbench peak --out results/{SLUG}/peak.json", self.calls()[-4:])
        # --full fits 30 minutes: the matrix gets what the script has left of them.
        full = self.calls()[-1]
        self.assertRegex(full, r" --budget (\d+)s ")
        self.assertEqual(re.sub(r" --budget \d+s", "", full), MATRIX_QUICK.replace("quick", "full"))
        self.assertGreater(int(re.search(r"--budget (\d+)s", full).group(1)), 1700)
        self.assertTrue(os.path.exists(os.path.join(self.out, "matrix-quick.csv")))
        self.assertTrue(os.path.exists(os.path.join(self.out, "matrix-quick.meta.json")))

    def test_failed_verify_or_row_still_writes_results_and_exits_1(self):
        proc = self.run_matrix(verify_status=3, matrix_status=1)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("verify failed (exit 3)", proc.stderr)
        self.assertIn("a row failed rule A", proc.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.out, "README.md")))

    def test_interrupted_matrix_stops_before_plotting(self):
        proc = self.run_matrix(matrix_status=130)
        self.assertEqual(proc.returncode, 130)
        self.assertIn("run scripts/run_matrix.sh again to resume", proc.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "README.md")))

    def test_unknown_argument(self):
        proc = self.run_matrix("--fast")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("error: unknown argument: --fast", proc.stderr)


if __name__ == "__main__":
    unittest.main()
