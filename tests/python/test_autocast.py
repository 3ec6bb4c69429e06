"""The autocast policy (ops/autocast.cpp, docs/training-and-compile.md, "Autocast"): for every
combination of input dtypes, the output dtypes, the values, eager against
torch.compile, and the number of casts against what the policy declares."""

import itertools

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from conftest import device_param
from samples import TOL, make_tensor

ops = torch.ops.rowops
FLOATS = (torch.float32, torch.bfloat16, torch.float16)
CASTS = {torch.ops.aten._to_copy.default,
         torch.ops.prims.convert_element_type.default}


def policy(low, x, residual=None, weight=None):
    """The declared policy: the dtypes the kernel receives."""
    def act(t):  # activations: every floating dtype but float64 -> low
        return t if t == torch.float64 else low
    if residual is None:
        return (act(x),)
    w = weight if weight in (torch.float32, torch.float64) else low
    return act(x), act(residual), w


def declared_casts(given, policed):
    return sum(a != b for a, b in zip(given, policed))


class CountCasts(TorchDispatchMode):
    """Counts the dtype casts that reach the dispatcher below autocast."""

    def __init__(self):
        super().__init__()
        self.casts = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in CASTS:
            self.casts += 1
        return func(*args, **(kwargs or {}))


def graph_casts(counter):
    """A torch.compile backend that counts cast nodes in the forward graph
    AOTAutograd produces (autocast already applied), then runs it."""
    from torch._dynamo.backends.common import aot_autograd

    def fw(gm, example_inputs):
        counter.append(sum(node.op == "call_function" and node.target in CASTS
                           for node in gm.graph.nodes))
        return gm.forward
    return aot_autograd(fw_compiler=fw)


def _inputs(dtypes, device, B=6, N=48):
    gen = torch.Generator().manual_seed(sum(map(hash, map(str, dtypes))) % 997)
    x = make_tensor("contiguous", B, N, dtypes[0], device, gen)
    if len(dtypes) == 1:
        return (x,)
    residual = make_tensor("transposed", B, N, dtypes[1], device, gen)
    weight = make_tensor("contiguous", 1, N, dtypes[2], device, gen)[0]
    return x, residual, weight


COMBOS = list(itertools.product(FLOATS, repeat=3))


def _check(device, low, dtypes):
    op = ops.rms_norm_rows if len(dtypes) == 1 else ops.fused_add_rms_norm
    ref = ops.rms_norm_rows_reference if len(dtypes) == 1 else \
        ops.fused_add_rms_norm_reference
    inputs = _inputs(dtypes, device)
    policed = policy(low, *dtypes)
    with torch.autocast(device, dtype=low):
        with CountCasts() as mode:
            outs = op(*inputs, 1e-6)
    # output dtypes: activations in the autocast dtype, rstd float32
    act = policed[0]
    assert [o.dtype for o in outs[:-1]] == [act] * (len(outs) - 1)
    assert outs[-1].dtype == (torch.float64 if act == torch.float64
                              else torch.float32)
    # the number of casts the policy declares, counted at the dispatcher
    assert mode.casts == declared_casts(dtypes, policed), mode.casts
    # values: the same kernel on the inputs cast by hand (bitwise), and the
    # reference under the same policy (within the output dtype's tolerance)
    cast = [t.to(d) for t, d in zip(inputs, policed)]
    by_hand = op(*cast, 1e-6)
    for a, b in zip(outs, by_hand):
        assert torch.equal(a, b)
    rtol, atol = TOL[act]
    for a, b in zip(outs, ref(*cast, 1e-6)):
        torch.testing.assert_close(a, b, rtol=rtol, atol=atol)
    return inputs, outs, policed


@pytest.mark.parametrize("dtypes", COMBOS,
                         ids=["-".join(str(d)[6:] for d in c) for c in COMBOS])
def test_fused_policy_cpu(dtypes):
    inputs, outs, policed = _check("cpu", torch.bfloat16, dtypes)
    # torch.compile agrees with eager, and its graph holds the same casts
    counted = []

    def fn(x, residual, weight):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return ops.fused_add_rms_norm(x, residual, weight, 1e-6)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=graph_casts(counted), fullgraph=True)
    for a, b in zip(compiled(*inputs), outs):
        assert torch.equal(a, b)
    assert counted == [declared_casts(dtypes, policed)]


@pytest.mark.parametrize("dtype", FLOATS)
def test_rms_norm_rows_policy_cpu(dtype):
    inputs, outs, policed = _check("cpu", torch.bfloat16, (dtype,))
    counted = []

    def fn(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return ops.rms_norm_rows(x, 1e-6)
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=graph_casts(counted), fullgraph=True)
    for a, b in zip(compiled(*inputs), outs):
        assert torch.equal(a, b)
    assert counted == [declared_casts((dtype,), policed)]


@pytest.mark.parametrize("dtypes", [(torch.float32,) * 3,
                                    (torch.bfloat16, torch.float32,
                                     torch.float32)])
def test_policy_under_inductor(dtypes):
    inputs = _inputs(dtypes, "cpu")

    def fn(x, residual, weight):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return ops.fused_add_rms_norm(x, residual, weight, 1e-6)
    torch._dynamo.reset()
    eager = fn(*inputs)
    compiled = torch.compile(fn, fullgraph=True)(*inputs)
    for a, b in zip(compiled, eager):
        assert a.dtype == b.dtype
        assert torch.equal(a, b)  # casts are exact: same kernel input


def test_float16_autocast_dtype():
    _check("cpu", torch.float16, (torch.float32, torch.bfloat16,
                                  torch.float32))


def test_float64_is_not_cast():
    inputs = _inputs((torch.float64,) * 3, "cpu")
    with torch.autocast("cpu", dtype=torch.bfloat16), CountCasts() as mode:
        out, h, rstd = ops.fused_add_rms_norm(*inputs, 1e-6)
    assert (out.dtype, h.dtype, rstd.dtype) == (torch.float64,) * 3
    assert mode.casts == 0


def test_inplace_form_is_not_cast():
    x, residual, weight = _inputs((torch.float32,) * 3, "cpu")
    with torch.autocast("cpu", dtype=torch.bfloat16), CountCasts() as mode:
        ops.fused_add_rms_norm_(x, residual, weight, 1e-6)
    assert x.dtype == residual.dtype == torch.float32 and mode.casts == 0


def test_gradients_flow_back_through_the_casts():
    x, residual, weight = (t.requires_grad_() for t in
                           _inputs((torch.float32,) * 3, "cpu"))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, h, rstd = ops.fused_add_rms_norm(x, residual, weight, 1e-6)
    (out.float().square().sum() + h.float().sum()).backward()
    assert (x.grad.dtype, residual.grad.dtype, weight.grad.dtype) == \
        (torch.float32,) * 3
    assert torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0


@pytest.mark.parametrize("device", [device_param("cuda")])
def test_fused_policy_cuda(device):
    for dtypes in COMBOS:
        _check(device, torch.bfloat16, dtypes)
    for dtype in FLOATS:
        _check(device, torch.float16, (dtype,))
