"""ONNX Runtime (CPUExecutionProvider): a one-node graph of com.microsoft
MultiHeadAttention (heads_q == heads_kv) or GroupQueryAttention (heads differ),
run with IOBinding on inputs and an output built once at setup.

What each op computes was checked against a double-precision reference
(tests/peers/test_peer_onnxruntime.py):
- MultiHeadAttention: `unidirectional=1` is attnbench's bottom-right causal
  only when n_q == n_kv; for n_q < n_kv the mask is an additive
  attention_bias [1, 1, n_q, n_kv] (0 where visible, -inf where not), so
  masked keys contribute exactly 0. A row that sees no key (n_q > n_kv)
  comes out NaN: skipped. K/V go in as the 4-D BNSH form (attnbench's own
  layout, no transpose in the op) when d_k == d_v, as 3-D BSNH otherwise
  (4-D requires equal head sizes).
- GroupQueryAttention is a KV-cache op: new key/value rows are appended to
  past_key/past_value and query row s sits at absolute position P + s,
  P = past length. With P = n_kv - n_q that is exactly bottom-right causal
  (chunked prefill). The K/V cache is bound as both past and present
  (buffer sharing), so each call writes the last n_q K/V rows over
  themselves — part of GQA's contract, and inside the timed call. Its
  limits, each a skip: d_k == d_v, head size a multiple of 8, n_q <= n_kv,
  batch 1 when 1 < n_q < n_kv.
"""

import numpy as np

from protocol import Skip, require_one_type

ort = None
onnx = None


def load():
    global ort, onnx
    import onnx as _onnx
    import onnxruntime as _ort

    ort, onnx = _ort, _onnx
    return ort.__version__


def _elem(type_name):
    from onnx import TensorProto

    return {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}[type_name]


def ortvalue(array, type_name):
    """An OrtValue owning a copy of `array` (attnbench storage; bf16 as uint16 bits)."""
    array = np.ascontiguousarray(array)
    if type_name == "bf16" and array.dtype == np.uint16:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array, _elem("bf16"))
    return ort.OrtValue.ortvalue_from_numpy(array)


def session_options(threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads  # ORT counts the calling thread in this
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Idle pool threads block instead of spinning between and inside calls.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    so.log_severity_level = 3
    return so


def bshd(x):
    """[B, H, L, E] -> [B, L, H*E], the ops' 3-D layout."""
    b, h, n, e = x.shape
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(b, n, h * e))


class Adapter:
    def __init__(self, shape, types, threads):
        self.shape = shape
        self.types = types
        self.threads = threads

    def build(self, buf):
        require_one_type(self.types, "ONNX Runtime's attention ops")
        s = self.shape
        if s.has_empty_rows():
            raise Skip(f"causal with n_q > n_kv: ONNX Runtime gives NaN for the {s.n_q - s.n_kv} rows that "
                       "see no key (attnbench: +0); GroupQueryAttention refuses n_q > n_kv")
        q, k, v = buf.read("q"), buf.read("k"), buf.read("v")
        if s.heads_q == s.heads_kv:
            graph, feeds, op = self._mha(q, k, v)
        else:
            graph, feeds, op = self._gqa(q, k, v)
        t = self.types["q"]
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 21),
                                                             onnx.helper.make_opsetid("com.microsoft", 1)])
        try:
            self.session = ort.InferenceSession(model.SerializeToString(), session_options(self.threads),
                                                providers=["CPUExecutionProvider"])
        except Exception as e:
            if "NOT_IMPLEMENTED" in str(e) or "Could not find an implementation" in str(e):
                raise Skip(f"ONNX Runtime's CPU provider has no {t} kernel for this op: {e}")
            raise
        self.io = self.session.io_binding()
        self.values = {}
        for name, (array, bind_as_output) in feeds.items():
            val = ortvalue(array, t)
            self.values[name] = val
            self.io.bind_ortvalue_input(name, val)
            if bind_as_output:
                self.io.bind_ortvalue_output(bind_as_output, val)
        b, hq, nq, dv = s.dims("o")
        self.out = ortvalue(np.zeros((b, nq, hq * dv), _storage_type(t)), t)
        self.io.bind_ortvalue_output("o", self.out)
        return f"{op} {t}, IOBinding, intra_op_num_threads={self.threads}, allow_spinning=0"

    def _mha(self, q, k, v):
        s = self.shape
        h = onnx.helper
        t = _elem(self.types["q"])
        four_d = s.d_k == s.d_v
        if four_d:
            kv_info = [h.make_tensor_value_info("k", t, list(k.shape)), h.make_tensor_value_info("v", t, list(v.shape))]
            feeds = {"q": (bshd(q), None), "k": (k, None), "v": (v, None)}
            kv_text = "K/V 4-D BNSH"
        else:
            kv_info = [h.make_tensor_value_info("k", t, [s.batch, s.n_kv, s.heads_kv * s.d_k]),
                       h.make_tensor_value_info("v", t, [s.batch, s.n_kv, s.heads_kv * s.d_v])]
            feeds = {"q": (bshd(q), None), "k": (bshd(k), None), "v": (bshd(v), None)}
            kv_text = "K/V 3-D BSNH (d_k != d_v)"
        inputs = ["q", "k", "v"]
        info = [h.make_tensor_value_info("q", t, [s.batch, s.n_q, s.heads_q * s.d_k])] + kv_info
        attrs = {"num_heads": s.heads_q, "scale": float(s.scale)}
        mask_text = ""
        if s.causal and s.n_q == s.n_kv:
            attrs["unidirectional"] = 1
        elif s.causal:
            bias = np.where(s.causal_mask(), 0.0, -np.inf).astype(np.float32)[None, None]
            inputs += ["", "", "attention_bias"]  # bias, key_padding_mask unused
            info.append(h.make_tensor_value_info("attention_bias", t, [1, 1, s.n_q, s.n_kv]))
            feeds["attention_bias"] = (_storage(bias, self.types["q"]), None)
            mask_text = f", attention_bias=bottom-right -inf [1,1,{s.n_q},{s.n_kv}]"
        node = h.make_node("MultiHeadAttention", inputs, ["o"], domain="com.microsoft", **attrs)
        graph = h.make_graph([node], "attnbench_mha", info, [h.make_tensor_value_info("o", t, None)])
        attr_text = ", ".join(f"{a}={v:g}" if isinstance(v, float) else f"{a}={v}" for a, v in attrs.items())
        return graph, feeds, f"com.microsoft.MultiHeadAttention({attr_text}{mask_text}) Q 3-D BSNH, {kv_text}"

    def _gqa(self, q, k, v):
        s = self.shape
        if s.d_k != s.d_v:
            raise Skip(f"GroupQueryAttention needs d_k == d_v (asked {s.d_k}, {s.d_v})")
        if s.d_k % 8:
            raise Skip(f"GroupQueryAttention's CPU kernel needs a head size that is a multiple of 8 (asked {s.d_k})")
        if s.n_q > s.n_kv:
            raise Skip(f"GroupQueryAttention appends the n_q new rows to the K/V cache: n_q = {s.n_q} > n_kv = {s.n_kv} "
                       "has no such form")
        past = s.n_kv - s.n_q
        if s.batch > 1 and s.n_q > 1 and past > 0:
            raise Skip("GroupQueryAttention: batch must be 1 when 1 < n_q < n_kv (past context with several new rows)")
        h = onnx.helper
        t = _elem(self.types["q"])
        from onnx import TensorProto

        d = s.d_k
        info = [h.make_tensor_value_info("q", t, [s.batch, s.n_q, s.heads_q * d]),
                h.make_tensor_value_info("k", t, [s.batch, s.n_q, s.heads_kv * d]),
                h.make_tensor_value_info("v", t, [s.batch, s.n_q, s.heads_kv * d]),
                h.make_tensor_value_info("past_key", t, list(k.shape)),
                h.make_tensor_value_info("past_value", t, list(v.shape)),
                h.make_tensor_value_info("seqlens_k", TensorProto.INT32, [s.batch]),
                h.make_tensor_value_info("total_sequence_length", TensorProto.INT32, [])]
        attrs = {"num_heads": s.heads_q, "kv_num_heads": s.heads_kv, "scale": float(s.scale), "causal": s.causal}
        node = h.make_node("GroupQueryAttention", [i.name for i in info], ["o", "present_key", "present_value"],
                           domain="com.microsoft", **attrs)
        outs = [h.make_tensor_value_info(n, t, None) for n in ("o", "present_key", "present_value")]
        graph = h.make_graph([node], "attnbench_gqa", info, outs)
        feeds = {"q": (bshd(q), None), "k": (bshd(k[:, :, past:]), None), "v": (bshd(v[:, :, past:]), None),
                 "past_key": (k, "present_key"), "past_value": (v, "present_value")}
        feeds["seqlens_k"] = (np.full(s.batch, s.n_kv - 1, np.int32), None)
        feeds["total_sequence_length"] = (np.array(s.n_kv, np.int32), None)
        attr_text = ", ".join(f"{a}={v:g}" if isinstance(v, float) else f"{a}={v}" for a, v in attrs.items())
        op = (f"com.microsoft.GroupQueryAttention({attr_text}) Q 3-D BSNH, past_key/past_value = the whole K/V "
              f"[B,Hkv,n_kv,d] shared with present_key/present_value, key/value = its last {s.n_q} rows, "
              f"seqlens_k={s.n_kv - 1}, total_sequence_length={s.n_kv}")
        return graph, feeds, op

    def call(self):
        self.session.run_with_iobinding(self.io)

    def timing_context(self):
        import contextlib

        return contextlib.nullcontext()

    def output(self):
        b, hq, nq, dv = self.shape.dims("o")
        o = self.out.numpy()
        if self.types["o"] == "bf16":
            o = o.view(np.uint16)
        return o.reshape(b, nq, hq, dv).transpose(0, 2, 1, 3)


def _storage(x, type_name):
    from layout import from_f32

    return from_f32(x, type_name)


def _storage_type(type_name):
    from layout import STORAGE

    return STORAGE[type_name]
