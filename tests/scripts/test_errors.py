"""Bad inputs give one line `error: ...` on stderr and exit code 2, never a
traceback, in all three scripts."""

import os
import shutil
import tempfile
import unittest

import helpers as h


class BadInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "out")
        header = h.header_of(h.PAIR_A)
        rows = h.read_rows(h.PAIR_A)
        cls.files = {}

        def make(name, rows_, header_=header):
            cls.files[name] = h.write_rows(os.path.join(cls.tmp.name, f"{name}.csv"), rows_,
                                           header_, h.PAIR_A)

        make("missing_columns", rows, [c for c in header if c not in ("gflops", "status")])
        make("header_only", [], header)
        bad_number = [dict(r) for r in rows]
        bad_number[2]["time_ns_median"] = "fast"
        make("bad_number", bad_number)
        bad_int = [dict(r) for r in rows]
        bad_int[0]["threads"] = "1.5"
        make("bad_int", bad_int)
        bad_limit = [dict(r) for r in rows]
        bad_limit[0]["limit"] = "cache"
        make("bad_limit", bad_limit)
        empty = os.path.join(cls.tmp.name, "empty.csv")
        open(empty, "w").close()
        shutil.copyfile(h.meta_of(h.PAIR_A), h.meta_of(empty))
        cls.files["empty"] = empty
        bad_meta = h.copy_fixture(h.PAIR_A, cls.tmp.name, "bad_meta.csv")
        with open(h.meta_of(bad_meta), "w") as f:
            f.write('{"cpu_model": "x",')
        cls.files["bad_meta"] = bad_meta
        cls.files["nonexistent"] = os.path.join(cls.tmp.name, "no", "such.csv")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def invocations(self, path):
        """The same bad file given to each script."""
        return {
            "plot.py": [path, "-o", self.out],
            "report.py": [path, "-o", os.path.join(self.out, "README.md")],
            "compare.py": [h.PAIR_B, path],
        }

    def check(self, name, expected):
        path = self.files[name]
        for script, args in self.invocations(path).items():
            with self.subTest(script=script):
                proc = h.run_script(script, *args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                lines = proc.stderr.splitlines()
                self.assertEqual(len(lines), 1, proc.stderr)
                self.assertTrue(lines[0].startswith("error: "), lines[0])
                self.assertIn(expected.format(path=path), lines[0])

    def test_missing_columns_are_named(self):
        self.check("missing_columns", "{path}: missing columns: gflops, status")

    def test_empty_file(self):
        self.check("empty", "{path}: empty file (no header row)")

    def test_header_only(self):
        self.check("header_only", "{path}: no data rows (only a header)")

    def test_nonexistent_path(self):
        self.check("nonexistent", "{path}: no such file")

    def test_malformed_number(self):
        self.check("bad_number", "{path}:4: column 'time_ns_median': 'fast' is not a number")

    def test_malformed_integer(self):
        self.check("bad_int", "{path}:2: column 'threads': '1.5' is not an integer")

    def test_unknown_limit(self):
        self.check("bad_limit", "column 'limit': 'cache' is not fma or bandwidth")

    def test_malformed_meta_json(self):
        self.check("bad_meta", "bad_meta.meta.json: not valid JSON")

    def test_a_directory_is_not_a_csv(self):
        proc = h.run_script("report.py", self.tmp.name, "-o", os.path.join(self.out, "R.md"))
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(proc.stderr, f"error: {self.tmp.name}: is a directory, not a CSV file\n")


if __name__ == "__main__":
    unittest.main()
