"""attnbench's problem description and its shared buffer, as numpy sees them.

The buffer (a /dev/shm file the C client made) holds Q, K, V and O in
attnbench's layout: Q [batch][heads_q][n_q][d_k], K [batch][heads_kv][n_kv][d_k],
V [batch][heads_kv][n_kv][d_v], O [batch][heads_q][n_q][d_v], row-major, at
the byte offsets the setup request gives. Element types: f32, f16 (IEEE
binary16) and bf16 (the top 16 bits of an f32). Only numpy is needed here.
"""

import mmap
import os
from dataclasses import dataclass

import numpy as np

# bf16 travels as its raw 16 bits: numpy has no bfloat16 of its own.
STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16}
TYPES = tuple(STORAGE)


class ProblemError(ValueError):
    """The setup request does not describe a valid problem."""


# Copies of the inputs a cell's calls may rotate through (the client's
# ATTN_PEER_MAX_COPIES).
MAX_COPIES = 64


def _hugepage_switch():
    """NumPy's switch for madvise(MADV_HUGEPAGE) on its big arrays (>= 4 MiB),
    under numpy._core (2.x) or numpy.core (1.x); None when it has none."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            module = __import__(name, fromlist=["_set_madvise_hugepage"])
        except ImportError:
            continue
        switch = getattr(module, "_set_madvise_hugepage", None)
        if switch is not None:
            return switch
    return None


def use_pages(pages):
    """The pages under the arrays made from now on: "huge" (NumPy asks for
    transparent huge pages, its default on Linux), "base" (it does not), or
    None (NumPy's default, unchanged). The attnbench side's inputs are on
    the same (harness/big_alloc.h), so a peer and a variant read their K/V
    through the same TLB reach. Arrays a library allocates inside itself
    follow that library's allocator."""
    if pages is None:
        return
    if pages not in ("huge", "base"):
        raise ProblemError(f"pages = {pages!r} must be huge or base")
    switch = _hugepage_switch()
    if switch is None:
        if pages == "base":
            return  # a NumPy that never advises: base pages already
        raise ProblemError("this NumPy cannot ask for huge pages (no _set_madvise_hugepage)")
    switch(pages == "huge")


@dataclass(frozen=True)
class Shape:
    batch: int
    heads_q: int
    heads_kv: int
    n_q: int
    n_kv: int
    d_k: int
    d_v: int
    causal: int
    scale: float

    @classmethod
    def from_json(cls, d):
        try:
            s = cls(**{f: d[f] for f in cls.__dataclass_fields__})
        except (KeyError, TypeError) as e:
            raise ProblemError(f"shape needs batch, heads_q, heads_kv, n_q, n_kv, d_k, d_v, causal, scale: {e}")
        for f in ("batch", "heads_q", "heads_kv", "n_q", "n_kv", "d_k", "d_v"):
            v = getattr(s, f)
            if not isinstance(v, int) or v < 1:
                raise ProblemError(f"shape.{f} = {v!r} must be a whole number >= 1")
        if s.heads_q % s.heads_kv:
            raise ProblemError(f"heads_kv = {s.heads_kv} must divide heads_q = {s.heads_q}")
        if s.causal not in (0, 1):
            raise ProblemError(f"causal = {s.causal!r} must be 0 or 1")
        if not isinstance(s.scale, (int, float)) or s.scale == 0 or not np.isfinite(s.scale):
            raise ProblemError(f"scale = {s.scale!r} must be resolved: finite and non-zero")
        return s

    @property
    def group(self):
        """Query heads per K/V head: query head h reads K/V head h // group."""
        return self.heads_q // self.heads_kv

    @property
    def offset(self):
        """Bottom-right causal alignment: row i sees key j iff j <= i + offset."""
        return self.n_kv - self.n_q

    def dims(self, which):
        b = self.batch
        return {
            "q": (b, self.heads_q, self.n_q, self.d_k),
            "k": (b, self.heads_kv, self.n_kv, self.d_k),
            "v": (b, self.heads_kv, self.n_kv, self.d_v),
            "o": (b, self.heads_q, self.n_q, self.d_v),
        }[which]

    def causal_mask(self):
        """[n_q][n_kv] bool, True where row i sees key j (bottom-right)."""
        i = np.arange(self.n_q)[:, None]
        j = np.arange(self.n_kv)[None, :]
        return j <= i + self.offset

    def has_empty_rows(self):
        """Causal with n_q > n_kv: the first n_q - n_kv rows see no key (O = +0)."""
        return bool(self.causal) and self.n_q > self.n_kv

    def describe(self):
        return (f"B={self.batch},Hq={self.heads_q},Hkv={self.heads_kv},nq={self.n_q},"
                f"nkv={self.n_kv},dk={self.d_k},dv={self.d_v},causal={self.causal},scale={self.scale:g}")


def bf16_bits_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16_bits(x):
    """Round to nearest even, as torch and the CPUs' bf16 converts do; NaN stays NaN."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)


def to_f32(arr, type_name):
    """A region's values as float32 (exact: f16 and bf16 widen without rounding)."""
    if type_name == "bf16":
        return bf16_bits_to_f32(arr)
    return arr.astype(np.float32)


def from_f32(x, type_name):
    """float32 values in a region's storage type (rounded to nearest even)."""
    if type_name == "bf16":
        return f32_to_bf16_bits(x)
    return np.asarray(x, dtype=STORAGE[type_name])


class SharedBuffer:
    """The client's buffer file, mapped MAP_SHARED; views of its four regions."""

    def __init__(self, path, shape, types, offsets):
        self.shape = shape
        self.types = {}
        for r in ("q", "kv", "o"):
            t = types.get(r) if isinstance(types, dict) else None
            if t not in TYPES:
                raise ProblemError(f"types.{r} = {t!r} must be one of {', '.join(TYPES)}")
            self.types[r] = t
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError as e:
            raise ProblemError(f"cannot open the buffer {path}: {e.strerror}")
        try:
            size = os.fstat(fd).st_size
            self._map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) if size else None
        finally:
            os.close(fd)  # the mapping keeps the pages; the client unlinks the file
        self.views = {}
        for region in ("q", "k", "v", "o"):
            dt = np.dtype(STORAGE[self.type_of(region)])
            dims = shape.dims(region)
            off = offsets.get(region) if isinstance(offsets, dict) else None
            nbytes = int(np.prod(dims)) * dt.itemsize
            if not isinstance(off, int) or off < 0 or off % dt.itemsize or off + nbytes > size:
                raise ProblemError(f"offsets.{region} = {off!r}: {nbytes} bytes do not fit a {size}-byte buffer")
            self.views[region] = np.frombuffer(self._map, dtype=dt, count=int(np.prod(dims)), offset=off).reshape(dims)

    def type_of(self, region):
        return self.types["kv" if region in ("k", "v") else region]

    def read(self, region):
        """A private copy of a region, in its storage type (bf16 as uint16 bits)."""
        return self.views[region].copy()

    def read_f32(self, region):
        return to_f32(self.views[region], self.type_of(region))

    def write_o(self, values, already_storage=False):
        """O in attnbench's layout; `values` are float32 unless already in O's storage type."""
        out = self.views["o"]
        if already_storage and np.asarray(values).dtype != out.dtype:
            # An adapter bug, not a rounding to paper over: O would silently change type.
            raise ProblemError(f"the peer's output is {np.asarray(values).dtype}, O is {self.types['o']}")
        out[...] = values if already_storage else from_f32(values, self.types["o"])

    def close(self):
        self.views = {}
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:
                pass  # a peer still holds a view; the mapping goes with the process
            self._map = None
