"""torch.library.opcheck with all four default utilities on one sample per
(op, layout, dtype), with and without requires_grad, and on the backward
ops."""

import pytest
import torch

from conftest import device_param
from samples import samples

UTILS = ("test_schema", "test_autograd_registration", "test_faketensor",
         "test_aot_dispatch_dynamic")
QUICK = samples("cpu", quick=True)


def _with_grad(args, which):
    """Fresh leaves with the sample's strides; those in `which` require
    grad."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.dim() > 1 and a.stride(0) == 0:
            # expanded: a fresh leaf row, expanded again
            a = a[:1].clone().requires_grad_(i in which).expand(a.shape)
        elif isinstance(a, torch.Tensor):
            a = torch.empty_strided(a.size(), a.stride(),
                                    dtype=a.dtype).copy_(a)
            a.requires_grad_(i in which)
        out.append(a)
    return tuple(out)


@pytest.mark.parametrize("requires_grad", [False, True],
                         ids=["no_grad", "requires_grad"])
@pytest.mark.parametrize("sample", QUICK, ids=lambda s: s.name)
def test_opcheck_functional(sample, requires_grad):
    op = getattr(torch.ops.rowops, sample.op).default
    which = {0, 1, 2} if requires_grad else set()
    torch.library.opcheck(op, _with_grad(sample.args, which),
                          test_utils=UTILS)


@pytest.mark.parametrize("requires_grad", [False, True],
                         ids=["no_grad", "weight_requires_grad"])
@pytest.mark.parametrize("sample", [s for s in QUICK
                                    if s.op == "fused_add_rms_norm"
                                    and "expanded" not in s.tags],
                         ids=lambda s: s.name)
def test_opcheck_inplace(sample, requires_grad):
    # x and residual are written in place: as leaves they cannot require
    # grad (autograd forbids in-place writes to such leaves), the weight can.
    args = _with_grad(sample.args, {2} if requires_grad else set())
    torch.library.opcheck(torch.ops.rowops.fused_add_rms_norm_.default, args,
                          test_utils=UTILS)


def _backward_args(sample):
    ops = torch.ops.rowops
    if sample.op == "rms_norm_rows":
        y, rstd = ops.rms_norm_rows(*sample.args)
        return ops.rms_norm_rows_backward.default, (
            torch.randn(y.shape).to(y.dtype), torch.randn(rstd.shape).to(
                rstd.dtype), sample.x, rstd)
    out, h, rstd = ops.fused_add_rms_norm(*sample.args)
    return ops.fused_add_rms_norm_backward.default, (
        torch.randn(out.shape).to(out.dtype), torch.randn(h.shape).to(h.dtype),
        torch.randn(rstd.shape).to(rstd.dtype), h, sample.weight, rstd)


@pytest.mark.parametrize("sample", QUICK, ids=lambda s: s.name)
def test_opcheck_backward(sample):
    op, args = _backward_args(sample)
    torch.library.opcheck(op, args, test_utils=UTILS)


@pytest.mark.parametrize("device", [device_param("cuda")])
def test_opcheck_cuda(device):
    for sample in samples(device, quick=True):
        op = getattr(torch.ops.rowops, sample.op).default
        for which in (set(), {0, 1, 2}):
            args = tuple(a.detach().clone().requires_grad_(i in which)
                         if isinstance(a, torch.Tensor) else a
                         for i, a in enumerate(sample.args))
            torch.library.opcheck(op, args, test_utils=UTILS)
