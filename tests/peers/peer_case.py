"""What the adapter tests share: a worker driven over the real protocol (the
C client's JSON lines, from Python), a shared buffer in /dev/shm, and an
independent double-precision reference of attnbench's semantics.

Each test file subclasses PeerCases with its PEER and EXPECT (which cases
must compute, which must skip and why). One worker per peer serves every
case of its file: importing torch costs seconds.
"""

import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORKER = os.path.join(ROOT, "scripts", "peers", "worker.py")
PYTHON = os.environ.get("ATTN_PEERS_PYTHON", os.path.join(ROOT, ".venv-peers", "bin", "python3"))

# (batch, heads_q, heads_kv, n_q, n_kv, d_k, d_v, causal, scale). Every scale
# differs from 1/sqrt(d_k): a peer falling back on its default would fail.
CASES = {
    "mha": (2, 2, 2, 5, 5, 16, 16, 0, 0.3),
    "gqa": (1, 4, 2, 6, 9, 16, 16, 0, 0.2),
    "mqa": (1, 4, 1, 4, 7, 8, 8, 0, 0.5),
    "causal_square": (2, 2, 2, 7, 7, 8, 8, 1, 0.25),
    "causal_nq_lt_nkv_mha": (1, 2, 2, 3, 11, 8, 8, 1, 0.4),
    "causal_nq_lt_nkv_gqa": (1, 4, 2, 3, 11, 16, 16, 1, 0.125),
    "causal_decode_mqa": (1, 4, 1, 1, 13, 16, 16, 1, 0.3),
    "nq_gt_nkv": (1, 2, 2, 9, 4, 8, 8, 0, 0.3),
    "dk_ne_dv_mha": (1, 2, 2, 5, 8, 16, 8, 1, 0.3),
    "dk_ne_dv_gqa": (1, 4, 2, 5, 8, 16, 8, 0, 0.3),
    "causal_batch_gqa_chunk": (2, 4, 2, 3, 7, 8, 8, 1, 0.3),
    "causal_empty_rows": (1, 2, 2, 7, 3, 8, 8, 1, 0.3),
}
FIELDS = ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "d_k", "d_v", "causal", "scale")

# Unit roundoff per type, and the tolerance in those units relative to
# max|V|. O is a convex combination of V's rows, so its error is measured
# against max|V|. f32: at these sizes (n_kv, d_k <= 16) the error of the
# dot products, the exp and the weighted sum is a few tens of u at most; a
# few hundred u is plenty, and a wrong mask, scale or head mapping moves O by
# a sizeable fraction of max|V|, ~10^6 u. f16/bf16: the inputs are exactly
# representable (the reference reads the same rounded values), the peer may
# round P and O to the type: 16 units of the type's u.
UNIT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
TOLERANCE_UNITS = {"f32": 300, "f16": 16, "bf16": 16}


def shape_dict(case):
    return dict(zip(FIELDS, case))


def reference(q, k, v, shape, align="bottom-right"):
    """O in double: softmax(Q Kt scale) V, query head h reading K/V head
    h // (Hq/Hkv); causal row i sees key j iff j <= i + (n_kv - n_q)
    (bottom-right; "top-left" is j <= i, the wrong alignment the tests must
    catch); a row that sees no key is +0."""
    b, hq, nq, _ = q.shape
    hkv, nkv = k.shape[1], k.shape[2]
    group = hq // hkv
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    o = np.zeros((b, hq, nq, v.shape[3]))
    offset = nkv - nq if align == "bottom-right" else 0
    visible = np.arange(nkv)[None, :] <= np.arange(nq)[:, None] + offset
    for bi in range(b):
        for h in range(hq):
            s = q[bi, h] @ k[bi, h // group].T * shape["scale"]
            if shape["causal"]:
                s = np.where(visible, s, -np.inf)
            for i in range(nq):
                if not np.isfinite(s[i]).any():
                    continue  # sees no key: stays +0
                p = np.exp(s[i] - s[i].max())
                o[bi, h, i] = (p / p.sum()) @ v[bi, h // group]
    return o


def within(got, want, v, type_name):
    """(ok, worst error in units): |got - want| <= tol * u * max|V| everywhere, no NaN."""
    scale = UNIT[type_name] * max(float(np.abs(v).max()), 1e-30)
    err = np.abs(got.astype(np.float64) - want)
    worst = float(np.nanmax(err)) / scale if err.size else 0.0
    ok = not np.isnan(got).any() and worst <= TOLERANCE_UNITS[type_name]
    return ok, worst


def bf16_round(x):
    """float32 -> nearest-even bf16, returned as float32 values and raw bits."""
    u = x.astype(np.float32).view(np.uint32)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return (bits.astype(np.uint32) << 16).view(np.float32), bits


class Worker:
    """One worker process, spoken to exactly as harness/peer_client.c does."""

    def __init__(self, peer, python=PYTHON, env=None):
        self.proc = subprocess.Popen([python, WORKER, peer], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1, env=env)
        self.hello = self.read()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited ({self.proc.wait()}) without a reply")
        return json.loads(line)

    def ask(self, obj):
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"cmd": "quit"}\n')
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self.proc.stdout.close()


def make_inputs(shape, type_name, seed):
    """Q, K, V as float32 values exactly representable in `type_name`, and
    their storage bytes (bf16 as raw bits)."""
    rng = np.random.default_rng(seed)
    dims = {"q": (shape["batch"], shape["heads_q"], shape["n_q"], shape["d_k"]),
            "k": (shape["batch"], shape["heads_kv"], shape["n_kv"], shape["d_k"]),
            "v": (shape["batch"], shape["heads_kv"], shape["n_kv"], shape["d_v"])}
    values, storage = {}, {}
    for name, d in dims.items():
        x = rng.standard_normal(d).astype(np.float32)
        if type_name == "bf16":
            values[name], storage[name] = bf16_round(x)
        elif type_name == "f16":
            storage[name] = x.astype(np.float16)
            values[name] = storage[name].astype(np.float32)
        else:
            values[name] = storage[name] = x
    return values, storage


def run_case(worker, shape, type_name="f32", threads=1, seed=0, **extra):
    """setup through a fresh /dev/shm buffer: (reply, O as float32 or None, inputs);
    `extra` goes into the request as it is (copies, pages)."""
    values, storage = make_inputs(shape, type_name, seed)
    item = 4 if type_name == "f32" else 2
    o_elems = shape["batch"] * shape["heads_q"] * shape["n_q"] * shape["d_v"]
    offsets, blob = {}, b""
    for name in ("q", "k", "v"):
        offsets[name] = len(blob)
        blob += storage[name].tobytes()
        blob += bytes(-len(blob) % 64)
    offsets["o"] = len(blob)
    # NaN in O before setup: a peer that writes nothing cannot pass.
    nan = {"f32": np.float32(np.nan), "f16": np.float16(np.nan), "bf16": np.uint16(0x7FC0)}[type_name]
    blob += np.full(o_elems, nan).tobytes()
    with tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="attnbench-peer-test-") as f:
        f.write(blob)
        f.flush()
        reply = worker.ask({"cmd": "setup", "shape": shape, "threads": threads,
                            "types": {"q": type_name, "kv": type_name, "o": type_name},
                            "buffer": f.name, "offsets": offsets, **extra})
        f.seek(offsets["o"])
        raw = f.read(o_elems * item)
    dims = (shape["batch"], shape["heads_q"], shape["n_q"], shape["d_v"])
    if type_name == "bf16":
        o = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
    else:
        o = np.frombuffer(raw, {"f32": np.float32, "f16": np.float16}[type_name]).astype(np.float32)
    return reply, (o.reshape(dims) if reply.get("ok") else None), values


class PeerCases:
    """Mixed into a unittest.TestCase with PEER, EXPECT = {case: "ok" or a
    skip-reason substring}, and TYPES = {type: case or None}."""

    PEER = None
    EXPECT = {}
    TYPES = {}

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(PYTHON):
            raise RuntimeError(f"{PYTHON} missing: run scripts/setup_peers.sh")
        cls.worker = Worker(cls.PEER)
        if not cls.worker.hello.get("ok"):
            raise RuntimeError(f"{cls.PEER} does not start: {cls.worker.hello}")

    @classmethod
    def tearDownClass(cls):
        cls.assert_exit = cls.worker.close()

    def check_case(self, name, type_name="f32", expect=None):
        shape = shape_dict(CASES[name])
        expect = expect or self.EXPECT[name]
        reply, o, x = run_case(self.worker, shape, type_name)
        if expect != "ok":
            self.assertEqual(reply.get("ok"), False, f"{name}: {reply}")
            self.assertIn(expect, reply.get("skip", ""), f"{name}: must skip saying why: {reply}")
            return reply, None
        self.assertTrue(reply.get("ok"), f"{name} ({type_name}): {reply}")
        want = reference(x["q"], x["k"], x["v"], shape)
        ok, worst = within(o, want, x["v"], type_name)
        self.assertTrue(ok, f"{name} ({type_name}): worst {worst:.1f} u of max|V|, op {reply['op']}")
        if shape["causal"] and shape["n_q"] > shape["n_kv"]:
            empty = o[:, :, : shape["n_q"] - shape["n_kv"]]
            self.assertTrue(np.all(empty == 0) and not np.signbit(empty).any(),
                            f"{name}: rows that see no key must be exactly +0")
        return reply, o

    def test_hello(self):
        h = self.worker.hello
        self.assertEqual(h["hello"], self.PEER)
        self.assertIsInstance(h["pid"], int)
        self.assertRegex(h["version"], r"^\d+\.\d+")

    def test_cases(self):
        for name in CASES:
            with self.subTest(case=name):
                self.check_case(name)

    def test_types(self):
        for type_name, expect in self.TYPES.items():
            with self.subTest(type=type_name):
                self.check_case("causal_nq_lt_nkv_gqa", type_name, expect)

    def test_wrong_alignment_is_caught(self):
        """The check can fail: at n_q < n_kv the peer's output must match the
        bottom-right reference and be far from the top-left one."""
        shape = shape_dict(CASES["causal_nq_lt_nkv_gqa"])
        reply, o, x = run_case(self.worker, shape, seed=7)
        self.assertTrue(reply.get("ok"), reply)
        right = reference(x["q"], x["k"], x["v"], shape)
        wrong = reference(x["q"], x["k"], x["v"], shape, align="top-left")
        self.assertTrue(within(o, right, x["v"], "f32")[0])
        self.assertFalse(within(o, wrong, x["v"], "f32")[0], "top-left alignment must not pass")
        self.assertFalse(within(wrong.astype(np.float32), right, x["v"], "f32")[0],
                         "the checker itself rejects a top-left result")

    def test_threads_and_timing(self):
        shape = shape_dict(CASES["gqa"])
        reply, o, x = run_case(self.worker, shape, threads=2)
        self.assertTrue(reply.get("ok"), reply)
        self.assertRegex(reply["op"], r"set_num_threads\(2\)|intra_op_num_threads=2|INFERENCE_NUM_THREADS=2",
                         "the thread count, set through the library's API, is in the op string")
        for cmd in ("time", "empty"):
            r = self.worker.ask({"cmd": cmd, "reps": 5})
            self.assertTrue(r["ok"], r)
            self.assertEqual(len(r["ns"]), 5)
            self.assertTrue(all(isinstance(n, int) and n > 0 for n in r["ns"]), r)

    def test_copies_and_pages(self):
        """A decode cell's calls rotate through copies of the inputs, each
        on the pages asked for; the first copy's O is what is checked."""
        shape = shape_dict(CASES["gqa"])
        for pages in ("base", "huge"):
            with self.subTest(pages=pages):
                reply, o, x = run_case(self.worker, shape, copies=3, pages=pages)
                self.assertTrue(reply.get("ok"), reply)
                self.assertTrue(reply["op"].endswith("; 3 copies of the inputs, called in turn"),
                                reply["op"])
                want = reference(x["q"], x["k"], x["v"], shape)
                self.assertTrue(within(o, want, x["v"], "f32")[0])
                r = self.worker.ask({"cmd": "time", "reps": 7})
                self.assertTrue(r["ok"] and len(r["ns"]) == 7, r)
        for bad, word in ((dict(copies=0), "copies"), (dict(copies=65), "copies"),
                          (dict(copies="2"), "copies"), (dict(pages="giant"), "pages")):
            with self.subTest(bad=bad):
                reply, _, _ = run_case(self.worker, shape, **bad)
                self.assertEqual(reply.get("ok"), False, reply)
                self.assertIn(word, reply.get("error", ""), reply)
        self.assertTrue(self.worker.ask({"cmd": "empty", "reps": 1})["ok"], "still serving")

    def test_errors_keep_the_worker(self):
        r = self.worker.ask({"cmd": "setup", "shape": dict(shape_dict(CASES["mha"]), scale=0), "threads": 1,
                             "types": {"q": "f32", "kv": "f32", "o": "f32"}, "buffer": "/dev/shm/none",
                             "offsets": {}})
        self.assertEqual(r["ok"], False)
        self.assertIn("scale", r["error"])
        self.assertIn("error", self.worker.ask({"cmd": "frobnicate"}))
        self.assertTrue(self.worker.ask({"cmd": "empty", "reps": 1})["ok"], "still serving")

    def test_mixed_types_skip(self):
        shape = shape_dict(CASES["mha"])
        values, storage = make_inputs(shape, "f32", 0)
        with tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="attnbench-peer-test-") as f:
            f.write(bytes(1 << 16))
            f.flush()
            r = self.worker.ask({"cmd": "setup", "shape": shape, "threads": 1,
                                 "types": {"q": "f32", "kv": "f32", "o": "bf16"}, "buffer": f.name,
                                 "offsets": {"q": 0, "k": 4096, "v": 8192, "o": 12288}})
        self.assertEqual(r["ok"], False)
        self.assertIn("one element type", r.get("skip", ""), r)


def load_tests_for(case_class):
    def load_tests(loader, tests, pattern):
        return loader.loadTestsFromTestCase(case_class)

    return load_tests


__all__ = ["PeerCases", "Worker", "CASES", "reference", "within", "run_case", "shape_dict", "unittest"]
