"""PyTorch: torch.nn.functional.scaled_dot_product_attention on the CPU.

torch's [B, H, L, E] layout is attnbench's, so the inputs are private
copies of the buffer's regions with no transpose. GQA/MQA: enable_gqa=True
(torch maps query head h to K/V head h // (Hq/Hkv), attnbench's rule).
Causal: is_causal is top-left aligned, which is attnbench's bottom-right
alignment only when n_q == n_kv; otherwise an explicit [n_q, n_kv] bool mask
(True = attend) built once at setup. Rows that see no key come out +0 in
torch's CPU kernels (checked by tests/peers/test_peer_torch.py).
"""

from protocol import require_one_type

torch = None
F = None


def load():
    global torch, F
    import torch as _torch
    import torch.nn.functional as _F

    torch, F = _torch, _F
    return torch.__version__.split("+")[0]


def _dtype(type_name):
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[type_name]


def to_tensor(array, type_name):
    """A numpy array in attnbench storage (bf16 as uint16 bits) as a torch tensor."""
    import numpy as np

    if type_name == "bf16":
        return torch.from_numpy(np.ascontiguousarray(array).view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array))


def from_tensor(t, type_name):
    import numpy as np

    if type_name == "bf16":
        return t.contiguous().view(torch.int16).numpy().view(np.uint16)
    return t.contiguous().numpy()


class Adapter:
    def __init__(self, shape, types, threads):
        self.shape = shape
        self.types = types
        self.threads = threads
        self.out = None

    def build(self, buf):
        s = self.shape
        require_one_type(self.types, "torch's scaled_dot_product_attention")
        t = self.types["q"]
        torch.set_num_threads(self.threads)
        self.q = to_tensor(buf.read("q"), t)
        self.k = to_tensor(buf.read("k"), t)
        self.v = to_tensor(buf.read("v"), t)
        kwargs = {"scale": float(s.scale)}
        args = [f"scale={s.scale:g}"]
        if s.heads_q != s.heads_kv:
            kwargs["enable_gqa"] = True
            args.insert(0, "enable_gqa=True")
        if s.causal and s.n_q == s.n_kv:
            kwargs["is_causal"] = True
            args.append("is_causal=True")
        elif s.causal:
            kwargs["attn_mask"] = torch.from_numpy(s.causal_mask())
            args.append(f"attn_mask=bottom-right bool [{s.n_q},{s.n_kv}]")
        self.kwargs = kwargs
        return (f"torch.nn.functional.scaled_dot_product_attention({', '.join(args)}) "
                f"{t} [B,H,L,E], torch.set_num_threads({self.threads})")

    def call(self):
        self.out = F.scaled_dot_product_attention(self.q, self.k, self.v, **self.kwargs)

    def timing_context(self):
        # What inference code runs under: no autograd bookkeeping per call.
        return torch.inference_mode()

    def output(self):
        return from_tensor(self.out, self.types["o"])

