"""Modules: the norm as a layer, and a transformer block's norm site
(projection -> residual add + RMSNorm -> linear) for tests and the bench.

``boundary`` chooses what the compiler sees:
  "opaque":     the registered ``rowops::fused_add_rms_norm`` op, called from
                the compiled code as one kernel (the fused C/CUDA kernel);
  "decomposed": ``rowops::fused_add_rms_norm_reference``, an aten composite
                (CompositeImplicitAutograd) that the compiler traces through
                and may fuse with its neighbours.
Eager execution gives the contract's results either way."""

import torch
from torch import nn

BOUNDARIES = ("opaque", "decomposed")


def _fused(boundary):
    if boundary == "opaque":
        return torch.ops.rowops.fused_add_rms_norm
    if boundary == "decomposed":
        return torch.ops.rowops.fused_add_rms_norm_reference
    raise ValueError(f"boundary must be one of {BOUNDARIES}, got {boundary!r}")


class FusedAddRMSNorm(nn.Module):
    """h = x + residual; returns (rmsnorm(h) * weight, h)."""

    def __init__(self, hidden, eps=1e-6, boundary="opaque", device=None,
                 dtype=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden, device=device,
                                              dtype=dtype))
        self.eps = eps
        self.boundary = boundary
        self._op = _fused(boundary)

    def forward(self, x, residual):
        out, h, _ = self._op(x, residual, self.weight, self.eps)
        return out, h


class NormSite(nn.Module):
    """The norm site of a transformer block: the attention (or MLP) output
    projection produces x, the residual add and RMSNorm, the next block's
    input projection consumes the normalized rows. Returns (y, residual)."""

    def __init__(self, hidden, inner=None, eps=1e-6, boundary="opaque",
                 device=None, dtype=None):
        super().__init__()
        inner = inner or hidden
        kw = dict(device=device, dtype=dtype, bias=False)
        self.proj = nn.Linear(inner, hidden, **kw)
        self.norm = FusedAddRMSNorm(hidden, eps, boundary, device, dtype)
        self.next = nn.Linear(hidden, inner, **kw)

    def forward(self, hidden, residual):
        x = self.proj(hidden)
        out, residual = self.norm(x, residual)
        return self.next(out), residual
