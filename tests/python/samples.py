"""The one sample generator every Python test uses, the float64 formula the
tests compare against, and the tolerances per dtype (in one place)."""

import math
from dataclasses import dataclass, field
from typing import Optional

import torch

DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
LOW_PRECISION = (torch.float16, torch.bfloat16)
LAYOUTS = ("contiguous", "transposed", "row_sliced", "expanded", "misaligned",
           "3d")
OPS = ("rms_norm_rows", "fused_add_rms_norm")

# (rtol, atol) of an output rounded once to its dtype from float32 math,
# against the float64 formula. rstd is float32 (float64 for float64 input).
TOL = {
    torch.float32: (1e-5, 1e-6),
    torch.float16: (1.5e-3, 1e-5),
    torch.bfloat16: (1e-2, 1e-4),
    torch.float64: (1e-12, 1e-14),
}
RSTD_TOL = {torch.float32: (1e-5, 0.0), torch.float64: (1e-12, 0.0)}


@dataclass
class Sample:
    name: str
    op: str
    x: torch.Tensor
    residual: Optional[torch.Tensor] = None
    weight: Optional[torch.Tensor] = None
    eps: float = 1e-6
    tags: set = field(default_factory=set)

    @property
    def args(self):
        if self.op == "rms_norm_rows":
            return (self.x, self.eps)
        return (self.x, self.residual, self.weight, self.eps)

    def clone_args(self):
        """Arguments with fresh copies that keep each tensor's strides."""
        def keep(t):
            if t is None or isinstance(t, float):
                return t
            out = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype,
                                      device=t.device)
            return out.copy_(t)
        return tuple(keep(a) for a in self.args)

    def __repr__(self):
        return self.name


def _values(shape, dtype, device, gen):
    """Uniform magnitudes in [0.1, 2] with random sign: never zero."""
    mag = torch.rand(shape, generator=gen, dtype=torch.float64) * 1.9 + 0.1
    sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
    return (mag * sign).to(dtype=dtype, device=device)


def make_tensor(layout, B, N, dtype, device, gen):
    """A [B, N] tensor ([B, 2, N] for 3d) in the given memory layout."""
    if layout == "contiguous":
        return _values((B, N), dtype, device, gen)
    if layout == "transposed":
        return _values((N, B), dtype, device, gen).t()
    if layout == "row_sliced":  # row stride N + 8 > N
        return _values((B, N + 8), dtype, device, gen)[:, :N]
    if layout == "expanded":  # row stride 0
        return _values((1, N), dtype, device, gen).expand(B, N)
    if layout == "misaligned":  # storage offset of one element
        return _values((B * N + 1,), dtype, device, gen)[1:].view(B, N)
    if layout == "3d":  # leading dims swapped in memory
        return _values((2, B, N), dtype, device, gen).transpose(0, 1)
    raise ValueError(layout)


def make_sample(op, layout, B, N, dtype, device="cpu", weight_dtype=None,
                seed=0, eps=1e-6, name=None):
    gen = torch.Generator().manual_seed(seed * 7919 + B * 31 + N)
    x = make_tensor(layout, B, N, dtype, device, gen)
    tag = name or f"{op}-{layout}-B{B}-N{N}-{str(dtype)[6:]}"
    if op == "rms_norm_rows":
        return Sample(tag, op, x, eps=eps, tags={layout})
    residual = make_tensor(layout, B, N, dtype, device, gen)
    wdt = weight_dtype or dtype
    weight = _values((N,), wdt, device, gen)
    if wdt != dtype:
        tag += f"-w{str(wdt)[6:]}"
    return Sample(tag, op, x, residual, weight, eps, tags={layout})


def samples(device="cpu", dtypes=DTYPES, ops=OPS, quick=False):
    """Every (op, layout, dtype, weight dtype) plus the edge shapes and the
    special values. quick: one sample per (op, layout, dtype)."""
    out = []
    for op in ops:
        for dtype in dtypes:
            wdts = [dtype] if op == "rms_norm_rows" or quick else \
                [dtype, torch.float32] if dtype != torch.float32 else [dtype]
            for wdt in wdts:
                for layout in LAYOUTS:
                    out.append(make_sample(op, layout, 5, 64, dtype, device,
                                           wdt))
            if quick:
                continue
            for B, N in ((0, 16), (3, 0), (4, 1), (3, 4097), (2, 65536),
                         (7, 33)):
                out.append(make_sample(op, "contiguous", B, N, dtype, device))
            out.append(make_sample(op, "transposed", 3, 4097, dtype, device))
            out.append(special_values(op, dtype, device))
        if quick:
            continue
        # float16 values whose squares overflow float16 (60000^2 > 65504)
        big = make_sample(op, "contiguous", 4, 32, torch.float16, device,
                          name=f"{op}-f16-square-overflow")
        big.x.mul_(30000.0)
        out.append(big)
    return out


def special_values(op, dtype, device):
    """Row 0 holds a NaN, row 1 an Inf, row 2 a -Inf, row 3 is finite."""
    s = make_sample(op, "contiguous", 4, 16, dtype, device,
                    name=f"{op}-nonfinite-{str(dtype)[6:]}")
    s.x[0, 3] = math.nan
    s.x[1, 5] = math.inf
    s.x[2, 7] = -math.inf
    s.tags.add("nonfinite")
    return s


def formula(sample):
    """The contract in float64: h is what eager x + residual gives (rounded
    to x's dtype); everything after that is exact float64."""
    if sample.op == "rms_norm_rows":
        h = sample.x
    else:
        h = sample.x + sample.residual
    hd = h.double()
    N = hd.shape[-1]
    ms = hd.square().sum(-1) / max(N, 1)
    rstd = 1.0 / torch.sqrt(ms + sample.eps)
    out = hd * rstd.unsqueeze(-1)
    if sample.op != "rms_norm_rows":
        out = out * sample.weight.double()
        return out, h, rstd
    return out, rstd


def assert_matches_formula(sample, result):
    """Every element of every output against the float64 formula."""
    expected = formula(sample)
    dtype = sample.x.dtype
    rtol, atol = TOL[dtype]
    acc = torch.float64 if dtype == torch.float64 else torch.float32
    out = result[0]
    assert out.dtype == dtype and out.shape == sample.x.shape
    assert out.is_contiguous()
    torch.testing.assert_close(out.double(), expected[0], rtol=rtol, atol=atol,
                               equal_nan=True, msg=lambda m: f"{sample}: out: {m}")
    rstd = result[-1]
    assert rstd.dtype == acc and rstd.shape == sample.x.shape[:-1]
    assert rstd.is_contiguous()
    r_rtol, r_atol = RSTD_TOL[acc]
    torch.testing.assert_close(rstd.double(), expected[-1], rtol=r_rtol,
                               atol=r_atol, equal_nan=True,
                               msg=lambda m: f"{sample}: rstd: {m}")
    if sample.op != "rms_norm_rows":
        h = result[1]
        assert h.dtype == dtype and h.is_contiguous()
        torch.testing.assert_close(h, expected[1], rtol=0, atol=0,
                                   equal_nan=True,
                                   msg=lambda m: f"{sample}: residual_out: {m}")
