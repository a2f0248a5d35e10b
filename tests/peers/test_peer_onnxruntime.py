"""The ONNX Runtime adapter against the double-precision reference
(peer_case.py), and the library behaviours its choices rest on."""

import unittest

import numpy as np
from peer_case import CASES, PeerCases, reference, shape_dict, within


class TestOnnxRuntime(PeerCases, unittest.TestCase):
    PEER = "onnxruntime"
    EXPECT = dict({name: "ok" for name in CASES},
                  dk_ne_dv_gqa="GroupQueryAttention needs d_k == d_v",
                  causal_batch_gqa_chunk="batch must be 1",
                  causal_empty_rows="NaN")
    TYPES = {"f16": "ok", "bf16": "no bf16 kernel"}

    def test_op_says_which_operator(self):
        for name, want in (("mha", "MultiHeadAttention"), ("gqa", "GroupQueryAttention"),
                           ("causal_nq_lt_nkv_mha", "attention_bias=bottom-right -inf"),
                           ("causal_square", "unidirectional=1"), ("dk_ne_dv_mha", "3-D BSNH")):
            with self.subTest(case=name):
                reply, _ = self.check_case(name)
                self.assertIn(want, reply["op"])

    def test_mha_f16(self):
        self.check_case("causal_nq_lt_nkv_mha", "f16", "ok")


def run_mha(shape, q, k, v, unidirectional, bias=None):
    """MultiHeadAttention called directly, bypassing the adapter's choices."""
    import onnx.helper as h
    import onnxruntime as ort
    from onnx import TensorProto

    b, hq, nq, d = q.shape
    nkv = k.shape[2]
    bshd = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(b, x.shape[2], -1))  # noqa: E731
    inputs, info = ["q", "k", "v"], [h.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "qkv"]
    feed = {"q": bshd(q), "k": bshd(k), "v": bshd(v)}
    if bias is not None:
        inputs += ["", "", "ab"]
        info.append(h.make_tensor_value_info("ab", TensorProto.FLOAT, None))
        feed["ab"] = bias
    node = h.make_node("MultiHeadAttention", inputs, ["o"], domain="com.microsoft", num_heads=hq,
                       scale=shape["scale"], unidirectional=unidirectional)
    graph = h.make_graph([node], "g", info, [h.make_tensor_value_info("o", TensorProto.FLOAT, None)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21), h.make_opsetid("com.microsoft", 1)])
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    o = sess.run(None, feed)[0]
    return o.reshape(b, nq, hq, -1).transpose(0, 2, 1, 3)


class TestOnnxRuntimeBehaviour(unittest.TestCase):
    """If one of these fails, ORT changed and the adapter's mapping must be revisited."""

    def inputs(self, case):
        shape = shape_dict(CASES[case])
        rng = np.random.default_rng(3)
        b, hq, hkv, nq, nkv, dk, dv = (shape[f] for f in ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "d_k", "d_v"))
        return (shape, rng.standard_normal((b, hq, nq, dk), dtype=np.float32),
                rng.standard_normal((b, hkv, nkv, dk), dtype=np.float32),
                rng.standard_normal((b, hkv, nkv, dv), dtype=np.float32))

    def test_unidirectional_is_not_bottom_right(self):
        shape, q, k, v = self.inputs("causal_nq_lt_nkv_mha")
        o = run_mha(shape, q, k, v, unidirectional=1)
        self.assertFalse(within(o, reference(q, k, v, shape), v, "f32")[0],
                         "unidirectional now matches bottom-right at n_q < n_kv: the bias is no longer needed")

    def test_rows_without_keys_are_nan(self):
        shape, q, k, v = self.inputs("causal_empty_rows")
        visible = np.arange(shape["n_kv"])[None, :] <= np.arange(shape["n_q"])[:, None] + shape["n_kv"] - shape["n_q"]
        bias = np.where(visible, 0, -np.inf).astype(np.float32)[None, None]
        o = run_mha(shape, q, k, v, unidirectional=0, bias=bias)
        self.assertTrue(np.isnan(o[:, :, : shape["n_q"] - shape["n_kv"]]).all(),
                        "ORT no longer gives NaN for rows that see no key: the skip can go")


if __name__ == "__main__":
    unittest.main()
