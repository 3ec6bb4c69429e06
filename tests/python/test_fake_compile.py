"""Fake execution with symbolic sizes gives the real outputs' metadata, and
torch.compile(fullgraph=True, dynamic=True) of each op matches eager."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import rowops
from samples import TOL, make_sample

CASES = [(op, layout, dtype)
         for op in ("rms_norm_rows", "fused_add_rms_norm")
         for layout in ("contiguous", "transposed", "row_sliced", "3d")
         for dtype in (torch.float32, torch.float16, torch.bfloat16)]


def _meta(t):
    return (tuple(t.shape), t.dtype, t.device, t.stride())


@pytest.mark.parametrize("op,layout,dtype", CASES)
def test_fake_metadata_matches_real(op, layout, dtype):
    sample = make_sample(op, layout, 6, 40, dtype)
    real = getattr(torch.ops.rowops, op)(*sample.args)
    mode = FakeTensorMode(shape_env=ShapeEnv())
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic, StatelessSymbolicContext)

    def fake(t, i):
        ctx = StatelessSymbolicContext(
            dynamic_sizes=[DimDynamic.DYNAMIC] * t.dim())
        return mode.from_tensor(t, source=ConstantSource(f"arg{i}"),
                                symbolic_context=ctx)

    args = tuple(fake(a, i) if isinstance(a, torch.Tensor) else a
                 for i, a in enumerate(sample.args))
    with mode:
        out = getattr(torch.ops.rowops, op)(*args)
    # sizes are symbolic, not specialized
    assert any(isinstance(s, torch.SymInt) and not s.node.is_constant()
               for s in out[0].shape)
    for f, r in zip(out, real):
        shape = tuple(int(s) for s in f.shape)
        stride = tuple(int(s) for s in f.stride())
        assert (shape, f.dtype, f.device, stride) == _meta(r)


@pytest.mark.parametrize("op,layout,dtype", CASES)
def test_compile_dynamic_matches_eager(op, layout, dtype):
    torch._dynamo.reset()
    fn_op = getattr(torch.ops.rowops, op)

    def fn(*args):
        return fn_op(*args)

    compiled = torch.compile(fn, fullgraph=True, dynamic=True)
    for B, N in ((5, 64), (9, 96)):  # second shape reuses the dynamic graph
        sample = make_sample(op, layout, B, N, dtype)
        eager = fn_op(*sample.args)
        got = compiled(*sample.args)
        for g, e in zip(got, eager):
            rtol, atol = TOL[dtype] if g.dtype == dtype else (1e-6, 1e-7)
            torch.testing.assert_close(g, e, rtol=rtol, atol=atol)


def test_compile_inplace_matches_eager():
    torch._dynamo.reset()

    def fn(x, r, w):
        rowops.fused_add_rms_norm_(x, r, w)
        return x * 2

    compiled = torch.compile(fn, fullgraph=True, dynamic=True)
    s = make_sample("fused_add_rms_norm", "transposed", 6, 48, torch.float32)
    xe, re_, w, _ = s.clone_args()
    xc, rc, _, _ = s.clone_args()
    expected = fn(xe, re_, w)
    got = compiled(xc, rc, w)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(xc, xe)
    torch.testing.assert_close(rc, re_)
