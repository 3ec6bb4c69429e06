"""Training support: the registered backward ops, what autograd saves, the
gradients against float64 (gradcheck) and against the float64 formula
(low precision), the non-differentiable in-place form and double backward."""

import pytest
import torch

from conftest import device_param
from samples import DTYPES, LAYOUTS, OPS, make_sample

ops = torch.ops.rowops

# Gradient tolerances, |got - expected| <= rtol * |expected| + atol * max|expected|,
# against the float64 formula evaluated at the same (rounded) inputs. Every
# gradient is computed in float32 and rounded once to its dtype, so rtol is
# about two units in the last place of the dtype (bfloat16 2^-8 = 3.9e-3,
# float16 2^-11 = 4.9e-4); atol covers elements near zero, where the
# reduction's float32 error dominates.
GRAD_TOL = {
    torch.float32: (2e-5, 1e-6),
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (8e-3, 1e-4),
}


def _leaf(t):
    return t.detach().clone().requires_grad_() if t.is_contiguous() else \
        torch.empty_strided(t.shape, t.stride(), dtype=t.dtype).copy_(
            t).requires_grad_()


def _inputs(sample):
    """The sample's tensors as leaves requiring grad (strides kept)."""
    if sample.op == "rms_norm_rows":
        return (_leaf(sample.x),)
    return (_leaf(sample.x), _leaf(sample.residual), _leaf(sample.weight))


def _call(op, eps):
    fn = getattr(ops, op)
    return lambda *ts: fn(*ts, eps)


# ---- gradcheck: float64 runs the C strided forward and backward kernels.

GRADCHECK = [(op, layout, N) for op in OPS
             for layout in ("contiguous", "transposed", "row_sliced")
             for N in (1, 7, 13, 4097)]


@pytest.mark.parametrize("op,layout,N", GRADCHECK,
                         ids=[f"{o}-{l}-N{n}" for o, l, n in GRADCHECK])
def test_gradcheck_float64(op, layout, N):
    sample = make_sample(op, layout, 3, N, torch.float64)
    inputs = _inputs(sample)
    for t in inputs[:2]:
        assert t.stride() == sample.x.stride()  # layout kept
    # Every output (y/out, residual_out, rstd) is checked; fast mode (random
    # projections of the Jacobian) where the full Jacobian is large.
    assert torch.autograd.gradcheck(_call(op, sample.eps), inputs,
                                    fast_mode=N > 64)
    assert ops._last_backward_dispatch() == "cpu_strided"


@pytest.mark.parametrize("op", OPS)
def test_gradcheck_3d_and_rank1(op):
    for layout, B in (("3d", 2), ("contiguous", 1)):
        sample = make_sample(op, layout, B, 5, torch.float64)
        inputs = _inputs(sample)
        if layout == "contiguous":  # rank 1: a single row
            inputs = (inputs[0][0].detach().requires_grad_(),) + tuple(
                t[0].detach().requires_grad_() for t in inputs[1:2]) + \
                inputs[2:]
        assert torch.autograd.gradcheck(_call(op, sample.eps), inputs)


# ---- low precision against the float64 formula.

def _formula_grads(sample, grads):
    """d(outputs)/d(h, weight) in float64 at the rounded h the kernel saw."""
    if sample.op == "rms_norm_rows":
        hd = sample.x.double().requires_grad_()
        rstd = torch.rsqrt(hd.square().mean(-1) + sample.eps)
        outs, ins = (hd * rstd.unsqueeze(-1), rstd), (hd,)
    else:
        hd = (sample.x + sample.residual).double().requires_grad_()
        wd = sample.weight.double().requires_grad_()
        rstd = torch.rsqrt(hd.square().mean(-1) + sample.eps)
        outs, ins = (hd * rstd.unsqueeze(-1) * wd, hd, rstd), (hd, wd)
    return torch.autograd.grad(outs, ins, [g.double() for g in grads])


def _assert_grad_close(name, got, expected, dtype):
    rtol, atol = GRAD_TOL[dtype]
    assert got.dtype == dtype, f"{name}: dtype {got.dtype}, expected {dtype}"
    err = (got.double() - expected).abs()
    bound = rtol * expected.abs() + atol * expected.abs().max()
    worst = (err - bound).max().item()
    assert worst <= 0, (f"{name}: max error {err.max().item():.3e} exceeds "
                        f"rtol {rtol} / atol {atol} x max|expected|")


LOW = [(op, dt, layout, N) for op in OPS
       for dt in (torch.float32, torch.float16, torch.bfloat16)
       for layout in ("contiguous", "transposed", "row_sliced")
       for N in (7, 64, 4097)]


@pytest.mark.parametrize("op,dtype,layout,N", LOW,
                         ids=[f"{o}-{str(d)[6:]}-{l}-N{n}"
                              for o, d, l, n in LOW])
def test_low_precision_gradients(op, dtype, layout, N):
    sample = make_sample(op, layout, 6, N, dtype)
    inputs = _inputs(sample)
    outs = getattr(ops, op)(*inputs, sample.eps)
    gen = torch.Generator().manual_seed(N)
    grads = [torch.randn(o.shape, generator=gen).to(o.dtype) for o in outs]
    got = torch.autograd.grad(outs, inputs, grads)
    expected = _formula_grads(sample, grads)
    _assert_grad_close("grad_x", got[0], expected[0], dtype)
    if op == "fused_add_rms_norm":
        _assert_grad_close("grad_residual", got[1], expected[0], dtype)
        _assert_grad_close("grad_weight", got[2], expected[1], dtype)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_float32_weight_gets_float32_gradient(dtype):
    sample = make_sample("fused_add_rms_norm", "contiguous", 6, 64, dtype,
                         weight_dtype=torch.float32)
    inputs = _inputs(sample)
    out, h, rstd = ops.fused_add_rms_norm(*inputs, sample.eps)
    g = torch.randn(out.shape).to(dtype)
    gx, gr, gw = torch.autograd.grad(out, inputs, g)
    assert (gx.dtype, gr.dtype, gw.dtype) == (dtype, dtype, torch.float32)
    expected = _formula_grads(sample, (g, torch.zeros_like(h),
                                       torch.zeros_like(rstd)))
    _assert_grad_close("grad_weight", gw, expected[1], torch.float32)


def test_weight_gradient_accumulates_in_float32():
    """4096 rows of bfloat16: a bfloat16 running sum would lose ~2 digits;
    the float32 two-stage sum is rounded once at the end."""
    sample = make_sample("fused_add_rms_norm", "contiguous", 4096, 32,
                         torch.bfloat16)
    inputs = _inputs(sample)
    out, _, _ = ops.fused_add_rms_norm(*inputs, sample.eps)
    g = torch.ones_like(out)
    gw = torch.autograd.grad(out, inputs[2], g)[0]
    hd = (sample.x + sample.residual).double()
    n = hd * torch.rsqrt(hd.square().mean(-1, keepdim=True) + sample.eps)
    exact = n.sum(0)
    rel = ((gw.double() - exact).abs() / exact.abs()).max().item()
    assert rel <= 2 ** -8, rel  # within one bfloat16 rounding


def test_weight_gradient_deterministic_and_thread_count_independent():
    sample = make_sample("fused_add_rms_norm", "transposed", 999, 40,
                         torch.float32)
    inputs = _inputs(sample)
    out, h, rstd = ops.fused_add_rms_norm(*inputs, sample.eps)
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(3))
    args = (g, None, None, h.detach(), inputs[2].detach(), rstd.detach())
    first = ops.fused_add_rms_norm_backward(*args)
    again = ops.fused_add_rms_norm_backward(*args)
    assert torch.equal(first[1], again[1])  # same threads: bitwise equal
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        single = ops.fused_add_rms_norm_backward(*args)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(first[0], single[0])  # grad_h does not depend on it
    # Different thread counts sum the rows in different orders: both must
    # be within float32's summation bound of the exact (float64) sum.
    hd = h.detach().double()
    terms = g.double() * hd * rstd.detach().double().unsqueeze(-1)
    exact = terms.sum(0)
    bound = terms.shape[0] * 2.0 ** -24 * terms.abs().sum(0)
    for gw in (first[1], single[1]):
        assert ((gw.double() - exact).abs() <= bound).all()


# ---- what is saved, and what is recomputed.

@pytest.mark.parametrize("op", OPS)
def test_saves_h_and_rstd_not_copies(op):
    sample = make_sample(op, "contiguous", 4, 64, torch.bfloat16)
    inputs = _inputs(sample)
    saved = []

    def pack(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        outs = getattr(ops, op)(*inputs, sample.eps)
    if op == "rms_norm_rows":
        y, rstd = outs
        expect = [inputs[0], rstd]
    else:
        out, h, rstd = outs
        expect = [h, inputs[2], rstd]  # h is residual_out itself: no copy
    assert len(saved) == len(expect)
    for s, e in zip(saved, expect):
        assert s.data_ptr() == e.data_ptr() and s.shape == e.shape


# ---- backward against autograd through the aten reference.

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_backward_matches_reference_autograd(op, layout):
    sample = make_sample(op, layout, 5, 33, torch.float64)
    inputs = _inputs(sample) if layout != "expanded" else tuple(
        t.detach().clone().requires_grad_() for t in
        ((sample.x,) if op == "rms_norm_rows" else
         (sample.x, sample.residual, sample.weight)))
    ref_inputs = tuple(t.detach().clone().requires_grad_() for t in inputs)
    outs = getattr(ops, op)(*inputs, sample.eps)
    ref_outs = getattr(ops, op + "_reference")(*ref_inputs, sample.eps)
    gen = torch.Generator().manual_seed(5)
    grads = [torch.randn(o.shape, generator=gen, dtype=o.dtype) for o in outs]
    got = torch.autograd.grad(outs, inputs, grads)
    exp = torch.autograd.grad(ref_outs, ref_inputs, grads)
    for a, b in zip(got, exp):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("given", ["none", "residual_out", "rstd", "both"])
def test_backward_op_matches_backward_reference(dtype, layout, given):
    sample = make_sample("fused_add_rms_norm", layout, 5, 40, dtype)
    out, h, rstd = ops.fused_add_rms_norm(*sample.args)
    gen = torch.Generator().manual_seed(11)
    g_out = torch.randn(out.shape, generator=gen).to(dtype)
    g_h = torch.randn(h.shape, generator=gen).to(dtype).mT.contiguous().mT \
        if given in ("residual_out", "both") else None
    g_r = torch.randn(rstd.shape, generator=gen).to(rstd.dtype) \
        if given in ("rstd", "both") else None
    args = (g_out, g_h, g_r, h, sample.weight, rstd)
    got = ops.fused_add_rms_norm_backward(*args)
    exp = ops.fused_add_rms_norm_backward_reference(*args)
    for name, a, b in zip(("grad_h", "grad_weight"), got, exp):
        assert a.dtype == b.dtype and a.shape == b.shape and a.is_contiguous()
        rtol, atol = GRAD_TOL.get(dtype, (1e-12, 1e-14))
        torch.testing.assert_close(a.double(), b.double(), rtol=rtol,
                                   atol=atol * b.abs().max().item() + 1e-30,
                                   msg=lambda m: f"{name}: {m}")
    y, r = ops.rms_norm_rows(sample.x, sample.eps)
    gy = torch.randn(y.shape, generator=gen).to(dtype)
    args = (gy, g_r, sample.x, r)
    a = ops.rms_norm_rows_backward(*args)
    b = ops.rms_norm_rows_backward_reference(*args)
    rtol, atol = GRAD_TOL.get(dtype, (1e-12, 1e-14))
    torch.testing.assert_close(a.double(), b.double(), rtol=rtol,
                               atol=atol * b.abs().max().item() + 1e-30)


def test_backward_edges():
    w = torch.randn(0)
    h = torch.randn(3, 0)
    rstd = torch.full((3,), 1e3)
    gh, gw = ops.fused_add_rms_norm_backward(h, None, None, h, w, rstd)
    assert gh.shape == (3, 0) and gw.shape == (0,)
    h = torch.randn(0, 4)
    gh, gw = ops.fused_add_rms_norm_backward(h, None, None, h,
                                             torch.randn(4), torch.empty(0))
    assert gh.shape == (0, 4) and torch.equal(gw, torch.zeros(4))


# ---- the in-place form and double backward.

def test_inplace_is_not_differentiable():
    x, residual = torch.randn(3, 8), torch.randn(3, 8)
    weight = torch.randn(8, requires_grad=True)
    ops.fused_add_rms_norm_(x, residual, weight, 1e-6)  # runs
    with pytest.raises(RuntimeError, match="in-place form is not "
                       "differentiable; use rowops.fused_add_rms_norm"):
        x.sum().backward()
    with pytest.raises(RuntimeError, match="in-place form is not "
                       "differentiable"):
        residual.sum().backward()
    with torch.no_grad():  # inference: nothing recorded, nothing raised
        ops.fused_add_rms_norm_(x, residual, weight, 1e-6)
    leaf = torch.randn(3, 8, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires "
                       "grad"):
        ops.fused_add_rms_norm_(leaf, torch.randn(3, 8), weight, 1e-6)


def test_inplace_bumps_version_counters():
    a = torch.randn(3, 8, requires_grad=True)
    x = a * 1.0
    y = x * x  # saves x
    residual = torch.randn(3, 8)
    v = (x._version, residual._version)
    with torch.no_grad():
        ops.fused_add_rms_norm_(x, residual, torch.randn(8), 1e-6)
    assert x._version > v[0] and residual._version > v[1]
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        y.sum().backward()


@pytest.mark.parametrize("op", OPS)
def test_double_backward_raises(op):
    sample = make_sample(op, "contiguous", 3, 8, torch.float64)
    inputs = _inputs(sample)
    outs = getattr(ops, op)(*inputs, sample.eps)
    grads = torch.autograd.grad(outs[0].square().sum(), inputs,
                                create_graph=True)
    with pytest.raises(RuntimeError, match=f"rowops.{op}_backward: double "
                       "backward .* is not implemented"):
        grads[0].sum().backward()


def test_gradient_of_unused_outputs():
    """Only residual_out (the residual stream) or only rstd reaches the
    loss: absent gradients are treated as zero."""
    sample = make_sample("fused_add_rms_norm", "contiguous", 3, 8,
                         torch.float64)
    inputs = _inputs(sample)
    _, h, rstd = ops.fused_add_rms_norm(*inputs, sample.eps)
    gx, gr, gw = torch.autograd.grad(h.sum(), inputs, allow_unused=True)
    assert torch.equal(gx, torch.ones_like(gx)) and torch.equal(gx, gr)
    assert torch.equal(gw, torch.zeros_like(gw))
    inputs = _inputs(sample)
    _, _, rstd = ops.fused_add_rms_norm(*inputs, sample.eps)
    assert torch.autograd.gradcheck(
        lambda a, b, c: ops.fused_add_rms_norm(a, b, c, 1e-6)[2], inputs)


# ---- errors and dispatch of the backward ops.

def test_backward_errors_name_the_argument():
    h, w, rstd = torch.randn(3, 8), torch.randn(8), torch.randn(3)
    cases = [
        ((torch.randn(3, 7), None, None, h, w, rstd),
         "grad_out must have the shape of residual_out"),
        ((h.double(), None, None, h, w, rstd),
         "grad_out must have the dtype of residual_out"),
        ((h, torch.randn(2, 8), None, h, w, rstd),
         "grad_residual_out must have the shape of residual_out"),
        ((h, None, torch.randn(3).double(), h, w, rstd),
         "grad_rstd must have the dtype of rstd"),
        ((h, None, None, h, w, torch.randn(4)),
         r"rstd must have shape residual_out.shape\[:-1\]"),
        ((h, None, None, h, w, rstd.double()), "rstd must be Float"),
        ((h, None, None, h, torch.randn(7), rstd),
         "weight must have shape \\[N\\] where N is residual_out's last"),
        ((h.int(), None, None, h.int(), w, rstd),
         "residual_out must be float32, float16, bfloat16 or float64"),
    ]
    for args, message in cases:
        for fn in (ops.fused_add_rms_norm_backward,
                   ops.fused_add_rms_norm_backward_reference):
            with pytest.raises(RuntimeError, match=message):
                fn(*args)
        with pytest.raises(RuntimeError, match=message):  # Meta kernel
            ops.fused_add_rms_norm_backward(
                *[a.to("meta") if isinstance(a, torch.Tensor) else a
                  for a in args])
    with pytest.raises(RuntimeError, match="grad_y must have the shape of x"):
        ops.rms_norm_rows_backward(torch.randn(3, 7), None, h, rstd)


def test_backward_dispatch_is_explained():
    import rowops
    d = rowops.explain_dispatch("fused_add_rms_norm_backward", None, None,
                                None, torch.randn(2, 3))
    assert d.impl == "cpu_strided"
    x9 = torch.randn([1] * 8 + [4], dtype=torch.float64)
    d = rowops.explain_dispatch("rms_norm_rows_backward", None, None, x9)
    assert d.impl == "reference" and "rank 9" in d.reason
    y, r = ops.rms_norm_rows(x9)
    ops.rms_norm_rows_backward(torch.ones_like(y), None, x9, r)
    assert ops._last_backward_dispatch() == "reference"


def test_last_backward_dispatch_is_the_process_s():
    """The autograd engine runs a CUDA tensor's backward on its own device
    thread, never the caller's: the backward record the caller reads is
    the process's last, whichever thread ran it (a thread-local record
    read "" on an H200). Here: backward on one new thread, read on
    another."""
    import threading

    import rowops
    s = make_sample("fused_add_rms_norm", "contiguous", 4, 64,
                    torch.float32, "cpu")
    out, h, rstd = ops.fused_add_rms_norm(s.x, s.residual, s.weight, s.eps)
    want = rowops.explain_dispatch("fused_add_rms_norm_backward", None,
                                   None, None, h).impl
    seen = []
    run = threading.Thread(target=ops.fused_add_rms_norm_backward, args=(
        torch.ones_like(out), None, None, h, s.weight, rstd))
    read = threading.Thread(
        target=lambda: seen.append(ops._last_backward_dispatch()))
    run.start()
    run.join()
    read.start()
    read.join()
    assert want and seen == [want]


@pytest.mark.parametrize("device", [device_param("cuda")])
def test_cuda_backward_runs_the_cuda_kernel(device):
    import rowops
    sample = make_sample("fused_add_rms_norm", "contiguous", 4, 64,
                         torch.bfloat16, device)
    d = rowops.explain_dispatch("fused_add_rms_norm_backward", None, None,
                                None, sample.x)
    assert d.impl == "cuda_strided" and "CUDA strided backward" in d.reason
    inputs = tuple(t.detach().requires_grad_() for t in
                   (sample.x, sample.residual, sample.weight))
    out, _, _ = ops.fused_add_rms_norm(*inputs, sample.eps)
    out.float().sum().backward()
    assert ops._last_backward_dispatch() == "cuda_strided"
    assert all(t.grad is not None and t.grad.device.type == "cuda"
               for t in inputs)
