"""The eager Python entry points (rowops.rms_norm_rows,
rowops.fused_add_rms_norm) take rowops._fast, one CPython call into the
dispatcher, for plain tensors; subclasses, torch-function modes and
torch.compile take torch.ops. Both routes must give the same results,
errors and gradients."""
import pytest
import torch
from torch.overrides import TorchFunctionMode

import rowops
from rowops import _ops

pytestmark = pytest.mark.skipif(
    _ops._fast is None, reason="rowops._fast not built next to the library")


def _args(dtype=torch.float32, requires_grad=False):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 64, generator=g).to(dtype)
    r = torch.randn(6, 64, generator=g).to(dtype)
    w = torch.nn.Parameter(torch.rand(64, generator=g).to(dtype) + 0.5,
                           requires_grad=requires_grad)
    return x, r, w


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fast_route_equals_torch_ops(dtype):
    x, r, w = _args(dtype)
    fast = _ops._fast.fused_add_rms_norm(x, r, w, 1e-6)
    assert fast is not NotImplemented
    slow = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    assert all(torch.equal(a, b) for a, b in zip(fast, slow))
    y = _ops._fast.rms_norm_rows(x, 1e-6)
    assert all(torch.equal(a, b)
               for a, b in zip(y, torch.ops.rowops.rms_norm_rows(x, 1e-6)))


def test_fast_route_records_the_graph():
    x, r, w = _args(requires_grad=True)
    x.requires_grad_()
    out, h, _ = rowops.fused_add_rms_norm(x, r, w, 1e-6)
    (out.sum() + h.square().sum()).backward()
    x2, r2, w2 = _args(requires_grad=True)
    x2.requires_grad_()
    out2, h2, _ = torch.ops.rowops.fused_add_rms_norm(x2, r2, w2, 1e-6)
    (out2.sum() + h2.square().sum()).backward()
    assert torch.equal(x.grad, x2.grad) and torch.equal(w.grad, w2.grad)


def test_fast_route_errors_match():
    x, r, _ = _args()
    for bad in ((x, r, torch.ones(5), 1e-6), (x, r, torch.ones(64), -1.0)):
        with pytest.raises(RuntimeError) as fast:
            rowops.fused_add_rms_norm(*bad)
        with pytest.raises(RuntimeError) as slow:
            torch.ops.rowops.fused_add_rms_norm(*bad)
        assert str(fast.value).split("\n")[0] == \
            str(slow.value).split("\n")[0]
    with pytest.raises(TypeError):
        rowops.fused_add_rms_norm(x, r, torch.ones(64), "eps")


class _Logged(torch.Tensor):
    """A subclass with __torch_function__: must not take the fast route."""
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(func)
        return super().__torch_function__(func, types, args, kwargs or {})


def test_subclass_and_mode_take_torch_ops():
    x, r, w = _args()
    assert _ops._fast.fused_add_rms_norm(x.as_subclass(_Logged), r, w,
                                         1e-6) is NotImplemented
    _Logged.seen.clear()
    rowops.fused_add_rms_norm(x.as_subclass(_Logged), r, w, 1e-6)
    assert torch.ops.rowops.fused_add_rms_norm.default in _Logged.seen or \
        torch.ops.rowops.fused_add_rms_norm in _Logged.seen

    calls = []

    class Mode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            calls.append(func)
            return func(*args, **(kwargs or {}))

    with Mode():
        assert _ops._fast.fused_add_rms_norm(x, r, w, 1e-6) is \
            NotImplemented
        rowops.fused_add_rms_norm(x, r, w, 1e-6)
    assert calls, "the mode saw the call"


def test_compiled_api_call_has_no_graph_break():
    x, r, w = _args()
    torch._dynamo.reset()

    def f(x, r, w):
        return rowops.fused_add_rms_norm(x, r, w, 1e-6)[0] * 2

    explain = torch._dynamo.explain(f)(x, r, w)
    assert explain.graph_break_count == 0
    assert explain.graph_count == 1
    torch.testing.assert_close(torch.compile(f, fullgraph=True)(x, r, w),
                               f(x, r, w))


def test_without_fast_module_falls_back(monkeypatch):
    x, r, w = _args()
    want = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    monkeypatch.setattr(_ops, "_fast", None)
    got = rowops.fused_add_rms_norm(x, r, w, 1e-6)
    assert all(torch.equal(a, b) for a, b in zip(got, want))


def test_fast_route_does_not_leak_outputs():
    """The outputs are owned by the returned tuple alone: dropping it frees
    them (a leaked reference kept every output alive, so each call
    page-faulted fresh memory and ran 10x slower)."""
    import weakref
    x, r, w = _args()
    for call in (lambda: _ops._fast.rms_norm_rows(x, 1e-6),
                 lambda: _ops._fast.fused_add_rms_norm(x, r, w, 1e-6)):
        result = call()
        refs = [weakref.ref(t) for t in result]
        del result
        assert all(ref() is None for ref in refs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_fast_route_in_place_equals_torch_ops(dtype, layout):
    """fused_add_rms_norm_ through rowops._fast writes what torch.ops'
    writes, in place on the caller's tensors, and errors alike."""
    x, r, w = _args(dtype)
    if layout == "transposed":
        x, r = x.t().contiguous().t(), r.t().contiguous().t()
    x2, r2 = x.clone(), r.clone()
    assert _ops._fast.fused_add_rms_norm_(x, r, w, 1e-6) is None
    torch.ops.rowops.fused_add_rms_norm_(x2, r2, w, 1e-6)
    assert torch.equal(x, x2) and torch.equal(r, r2)
    rowops.fused_add_rms_norm_(x, r, w, 1e-6)
    torch.ops.rowops.fused_add_rms_norm_(x2, r2, w, 1e-6)
    assert torch.equal(x, x2) and torch.equal(r, r2)
    with pytest.raises(RuntimeError) as fast:
        rowops.fused_add_rms_norm_(x, r, torch.ones(5, dtype=dtype), 1e-6)
    with pytest.raises(RuntimeError) as slow:
        torch.ops.rowops.fused_add_rms_norm_(x, r, torch.ones(5, dtype=dtype),
                                             1e-6)
    assert str(fast.value).split("\n")[0] == str(slow.value).split("\n")[0]


def test_fast_route_in_place_leaves_modes_to_torch_ops():
    """Under a torch-function mode the in-place entry answers
    NotImplemented and the call goes through torch.ops (the mode sees
    it)."""
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x, r, w = _args()
    with Spy():
        assert _ops._fast.fused_add_rms_norm_(x, r, w, 1e-6) is \
            NotImplemented
        rowops.fused_add_rms_norm_(x, r, w, 1e-6)
    assert any("fused_add_rms_norm_" in s for s in seen), seen
