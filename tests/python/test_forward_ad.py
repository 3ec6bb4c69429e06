"""Forward-mode AD (docs/operators.md, Contract: gradients): a call whose inputs carry
a tangent (torch.func.jvp/jacfwd, torch.autograd.forward_ad) runs the aten
reference composite, so tangents are the contract's derivative, never
silently zero (jacfwd of rms_norm_rows used to return zeros, and a dual
input's output had no tangent at all)."""
import pytest
import torch
import torch.autograd.forward_ad as fwAD

import rowops  # noqa: F401  (loads the library)

F = torch.ops.rowops


def _inputs(dtype=torch.float64, transposed=False):
    g = torch.Generator().manual_seed(7)
    shape = (8, 5) if transposed else (5, 8)
    x, r = (torch.randn(shape, generator=g, dtype=dtype) for _ in range(2))
    w = torch.randn(8, generator=g, dtype=dtype)
    if transposed:
        x, r = x.t(), r.t()
    return x, r, w


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("out", [0, 1])
def test_jacfwd_rms_norm_rows(out, transposed):
    x, _, _ = _inputs(transposed=transposed)
    got = torch.func.jacfwd(lambda x: F.rms_norm_rows(x, 1e-6)[out])(x)
    ref = torch.func.jacfwd(
        lambda x: F.rms_norm_rows_reference(x, 1e-6)[out])(x)
    # independently: reverse mode through the op's own backward kernel
    rev = torch.autograd.functional.jacobian(
        lambda x: F.rms_norm_rows(x, 1e-6)[out], x)
    assert got.abs().max() > 0.1
    torch.testing.assert_close(got, ref)
    torch.testing.assert_close(got, rev)


@pytest.mark.parametrize("argnum", [0, 1, 2])
@pytest.mark.parametrize("out", [0, 1, 2])
def test_jacfwd_fused_add_rms_norm(out, argnum):
    args = _inputs(transposed=True)
    got = torch.func.jacfwd(
        lambda *a: F.fused_add_rms_norm(*a, 1e-6)[out], argnums=argnum)(*args)
    ref = torch.func.jacfwd(
        lambda *a: F.fused_add_rms_norm_reference(*a, 1e-6)[out],
        argnums=argnum)(*args)
    rev = torch.autograd.functional.jacobian(
        lambda *a: F.fused_add_rms_norm(*a, 1e-6)[out], args)[argnum]
    torch.testing.assert_close(got, ref)
    torch.testing.assert_close(got, rev)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dual_tensors(dtype):
    """forward_ad dual tensors: outputs carry the tangent the float64
    formula gives, and the primal is the op's."""
    x, r, w = _inputs(dtype)
    tx, tr, tw = (torch.randn_like(t) for t in (x, r, w))
    with fwAD.dual_level():
        outs = F.fused_add_rms_norm(fwAD.make_dual(x, tx),
                                    fwAD.make_dual(r, tr),
                                    fwAD.make_dual(w, tw), 1e-6)
        got = [fwAD.unpack_dual(o) for o in outs]
        y = F.rms_norm_rows(fwAD.make_dual(x, tx), 1e-6)
        got_rows = [fwAD.unpack_dual(o) for o in y]
        # the Python API (rowops._fast) reaches the same kernel
        api = fwAD.unpack_dual(rowops.rms_norm_rows(fwAD.make_dual(x, tx))[0])
        torch.testing.assert_close(api.tangent, got_rows[0].tangent)
    _, want = torch.func.jvp(
        lambda *a: F.fused_add_rms_norm_reference(*a, 1e-6),
        (x.double(), r.double(), w.double()),
        (tx.double(), tr.double(), tw.double()))
    _, want_rows = torch.func.jvp(lambda a: F.rms_norm_rows_reference(a, 1e-6),
                                  (x.double(),), (tx.double(),))
    tol = (dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else
           dict(rtol=1e-5, atol=1e-5))
    for g, wt in zip(got + got_rows, list(want) + list(want_rows)):
        assert g.tangent is not None
        torch.testing.assert_close(g.tangent.double(), wt, **tol)
    plain = F.fused_add_rms_norm(x, r, w, 1e-6)
    for g, p in zip(got, plain):
        torch.testing.assert_close(g.primal, p)


def test_inplace_form_carries_tangents():
    x, r, w = _inputs()

    def inplace(x, r, w):
        x, r = x.clone(), r.clone()
        F.fused_add_rms_norm_(x, r, w, 1e-6)
        return x, r

    got = torch.func.jacfwd(inplace, argnums=(0, 1, 2))(x, r, w)
    ref = torch.func.jacfwd(
        lambda *a: F.fused_add_rms_norm_reference(*a, 1e-6)[:2],
        argnums=(0, 1, 2))(x, r, w)
    torch.testing.assert_close(got, ref)


def test_inplace_form_refuses_both_modes_at_once():
    x, r, w = _inputs()
    wr = w.clone().requires_grad_()
    with fwAD.dual_level():
        xd = fwAD.make_dual(x.clone(), torch.randn_like(x))
        with pytest.raises(RuntimeError,
                           match=r"fused_add_rms_norm_: forward-mode AD .* "
                                 r"together with reverse mode"):
            F.fused_add_rms_norm_(xd, r.clone(), wr, 1e-6)


def test_forward_over_reverse():
    """A tangent on the backward ops' inputs (the gradient of a dual
    grad_y), and the Hessian by forward-over-reverse."""
    x, r, w = _inputs()
    xr = x.clone().requires_grad_()
    y, rstd = F.rms_norm_rows(xr, 1e-6)
    t = torch.randn_like(y)
    with fwAD.dual_level():
        (gx,) = torch.autograd.grad(
            y, xr, fwAD.make_dual(torch.randn_like(y), t))
        tangent = fwAD.unpack_dual(gx).tangent
    torch.testing.assert_close(
        tangent, F.rms_norm_rows_backward_reference(t, None, x, rstd.detach()))
    hess = torch.autograd.functional.hessian(
        lambda a: F.fused_add_rms_norm(a, r, w, 1e-6)[0].sum(), x,
        outer_jacobian_strategy="forward-mode", vectorize=True)
    want = torch.func.hessian(
        lambda a: F.fused_add_rms_norm_reference(a, r, w, 1e-6)[0].sum())(x)
    torch.testing.assert_close(hess, want)
