"""The OpenVINO adapter against the double-precision reference
(peer_case.py), and the library behaviours its choices rest on."""

import os
import subprocess
import sys
import unittest

import numpy as np
from peer_case import CASES, PYTHON, ROOT, PeerCases, reference, shape_dict, within

ADAPTERS = os.path.join(ROOT, "scripts", "peers")


def adapter():
    """The adapter module, its library loaded the adapter's way (without
    OpenVINO's telemetry: peer_openvino.load says why)."""
    if ADAPTERS not in sys.path:
        sys.path.insert(0, ADAPTERS)
    import peer_openvino

    peer_openvino.load()
    return peer_openvino


class TestOpenVino(PeerCases, unittest.TestCase):
    PEER = "openvino"
    EXPECT = dict({name: "ok" for name in CASES}, causal_empty_rows="NaN")
    TYPES = {"f16": "ok", "bf16": "ok"}

    def test_op_says_how(self):
        for name, want in (("gqa", "group axis G=2"), ("mqa", "group axis G=4"), ("mha", "[B,H,L,E]"),
                           ("causal_nq_lt_nkv_gqa", "bottom-right bool"), ("causal_square", "causal=True"),
                           ("mha", "INFERENCE_PRECISION_HINT=f32")):
            with self.subTest(case=name):
                reply, _ = self.check_case(name)
                self.assertIn(want, reply["op"])


class TestNoTelemetry(unittest.TestCase):
    """The adapter imports OpenVINO without its telemetry, as a user's run
    would (no CI variable, which OpenVINO's telemetry reads as an opt-out):
    its model converter on its stub, which counts and sends nothing."""

    def test_load_starts_no_telemetry(self):
        probe = (
            "import sys\n"
            f"sys.path.insert(0, {ADAPTERS!r})\n"
            "import peer_openvino\n"
            "peer_openvino.load()\n"
            "import openvino.tools.ovc.telemetry_utils as t\n"
            "print(t.tm.__name__)\n"
        )
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "JENKINS_URL")}
        out = subprocess.run([PYTHON, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "openvino.tools.ovc.telemetry_stub", out.stderr)


def run_sdpa(q, k, v, scale, causal, mask=None):
    """ScaledDotProductAttention called directly (no group axis: equal heads)."""
    loaded = adapter()
    ov, ops = loaded.ov, loaded.ops

    params = [ops.parameter(list(x.shape), ov.Type.f32) for x in (q, k, v)]
    m = ops.constant(mask) if mask is not None else ops.constant(np.float32(0))
    node = ops.scaled_dot_product_attention(*params, m, ops.constant(np.float32(scale)), causal=causal)
    compiled = ov.Core().compile_model(ov.Model([node], params), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return compiled([q, k, v])[0]


class TestOpenVinoBehaviour(unittest.TestCase):
    """If one of these fails, OpenVINO changed and the adapter must be revisited."""

    def inputs(self, case):
        shape = shape_dict(CASES[case])
        rng = np.random.default_rng(5)
        b, hq, hkv, nq, nkv, dk, dv = (shape[f] for f in ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "d_k", "d_v"))
        return (shape, rng.standard_normal((b, hq, nq, dk), dtype=np.float32),
                rng.standard_normal((b, hkv, nkv, dk), dtype=np.float32),
                rng.standard_normal((b, hkv, nkv, dv), dtype=np.float32))

    def test_causal_attribute_is_top_left(self):
        shape, q, k, v = self.inputs("causal_nq_lt_nkv_mha")
        o = run_sdpa(q, k, v, shape["scale"], causal=True)
        self.assertFalse(within(o, reference(q, k, v, shape), v, "f32")[0])
        self.assertTrue(within(o, reference(q, k, v, shape, align="top-left"), v, "f32")[0])

    def test_rows_without_keys_are_nan(self):
        shape, q, k, v = self.inputs("causal_empty_rows")
        visible = np.arange(shape["n_kv"])[None, :] <= np.arange(shape["n_q"])[:, None] + shape["n_kv"] - shape["n_q"]
        o = run_sdpa(q, k, v, shape["scale"], causal=False, mask=visible)
        self.assertTrue(np.isnan(o[:, :, : shape["n_q"] - shape["n_kv"]]).all(),
                        "OpenVINO no longer gives NaN for rows that see no key: the skip can go")


if __name__ == "__main__":
    unittest.main()
