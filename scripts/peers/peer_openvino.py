"""OpenVINO: one opset13 ScaledDotProductAttention node, compiled for CPU.

GQA/MQA by broadcasting over a group axis: Q [B, Hkv, G, L, E] against
K/V [B, Hkv, 1, S, E] (G = heads_q / heads_kv) — a reshape of attnbench's
own layout, so no input or output is transposed or copied per head (plain
4-D when G == 1). Causal: the op's `causal` attribute is top-left aligned,
attnbench's bottom-right only when n_q == n_kv; otherwise a constant
[n_q, n_kv] bool mask (True = attend). A row that sees no key (n_q > n_kv)
comes out NaN: skipped. Both checked by tests/peers/test_peer_openvino.py.

Compiled with INFERENCE_NUM_THREADS = threads, one stream, the LATENCY
hint, and INFERENCE_PRECISION_HINT = the inputs' type (the CPU plugin would
otherwise pick bf16 on CPUs with native bf16). CPU pinning is off, as
attnbench's own OpenMP threads are unpinned. Spin-waiting: the CPU plugin
runs on oneTBB, which has no switch for its workers' brief spin before
sleeping; none is set (docs/peers.md).
"""

import contextlib
import sys

import numpy as np

from protocol import Skip, require_one_type

ov = None
ops = None


def load():
    global ov, ops
    # No telemetry from a benchmark worker. `import openvino` imports its
    # model converter, which starts a Google Analytics session unless the
    # user opted out (or CI=true is set); its sender forks a process from a
    # thread, and that child was seen deadlocked on a lock the fork copied,
    # holding the worker's stdout and stderr open (ctest then waited out
    # its timeout) and delaying the worker's quit past the client's limit.
    # A None in sys.modules makes `import openvino_telemetry` fail, and the
    # converter then takes its own stub (openvino/tools/ovc/telemetry_utils).
    sys.modules["openvino_telemetry"] = None
    import openvino as _ov
    import openvino.opset13 as _ops

    ov, ops = _ov, _ops
    return ov.__version__.split("-")[0]


def _ov_type(type_name):
    return {"f32": ov.Type.f32, "f16": ov.Type.f16, "bf16": ov.Type.bf16}[type_name]


def tensor(array, type_name, shape):
    """An ov.Tensor owning a copy of `array` (bf16 as uint16 bits), reshaped."""
    t = ov.Tensor(_ov_type(type_name), ov.Shape(list(shape)))
    t.data.view(array.dtype).reshape(shape)[...] = array.reshape(shape)
    return t


class Adapter:
    def __init__(self, shape, types, threads):
        self.shape = shape
        self.types = types
        self.threads = threads

    def build(self, buf):
        require_one_type(self.types, "OpenVINO's ScaledDotProductAttention")
        s = self.shape
        if s.has_empty_rows():
            raise Skip(f"causal with n_q > n_kv: OpenVINO gives NaN for the {s.n_q - s.n_kv} rows that see "
                       "no key (attnbench: +0)")
        t = self.types["q"]
        g = s.group
        lead = [s.batch, s.heads_kv, g] if g > 1 else [s.batch, s.heads_q]
        kv_lead = [s.batch, s.heads_kv, 1] if g > 1 else [s.batch, s.heads_kv]
        self.shapes = [lead + [s.n_q, s.d_k], kv_lead + [s.n_kv, s.d_k], kv_lead + [s.n_kv, s.d_v]]
        params = [ops.parameter(shp, _ov_type(t), name=n) for n, shp in zip("qkv", self.shapes)]
        scale = ops.constant(np.array(s.scale, np.float32)).output(0)
        if t != "f32":
            scale = ops.convert(scale, _ov_type(t)).output(0)
        if s.causal and s.n_q != s.n_kv:
            mask = ops.constant(s.causal_mask())
            node = ops.scaled_dot_product_attention(*params, mask, scale, causal=False)
            mask_text = f"attention_mask=bottom-right bool [{s.n_q},{s.n_kv}]"
        else:
            zero = ops.constant(np.array(0, np.float32)).output(0)
            if t != "f32":
                zero = ops.convert(zero, _ov_type(t)).output(0)
            node = ops.scaled_dot_product_attention(*params, zero, scale, causal=bool(s.causal))
            mask_text = f"causal={bool(s.causal)}"
        model = ov.Model([node], params, "attnbench_sdpa")
        config = {
            "INFERENCE_NUM_THREADS": self.threads,
            "NUM_STREAMS": 1,
            "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": {"f32": "f32", "f16": "f16", "bf16": "bf16"}[t],
            "ENABLE_CPU_PINNING": False,
        }
        compiled = ov.Core().compile_model(model, "CPU", config)
        precision = compiled.get_property("INFERENCE_PRECISION_HINT")
        precision = precision.to_string() if hasattr(precision, "to_string") else str(precision)
        if t == "f32" and precision != "f32":
            raise Skip(f"asked f32 inference precision, the CPU plugin compiled {precision}")
        self.request = compiled.create_infer_request()
        for i, (region, shp) in enumerate(zip("qkv", self.shapes)):
            self.request.set_input_tensor(i, tensor(buf.read(region), t, shp))
        group = f"group axis G={g}: Q [B,Hkv,G,L,E], K/V [B,Hkv,1,S,E]" if g > 1 else "[B,H,L,E]"
        return (f"openvino.opset13.scaled_dot_product_attention({mask_text}, scale={s.scale:g}) {t}, {group}; "
                f"CPU INFERENCE_NUM_THREADS={self.threads}, NUM_STREAMS=1, LATENCY, "
                f"INFERENCE_PRECISION_HINT={precision}")

    def call(self):
        self.request.infer()

    def timing_context(self):
        return contextlib.nullcontext()

    def output(self):
        o = self.request.get_output_tensor(0).data
        if self.types["o"] == "bf16":
            o = o.view(np.uint16)
        return np.array(o).reshape(self.shape.dims("o"))
