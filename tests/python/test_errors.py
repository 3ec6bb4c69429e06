"""Every contract error, asserted by message, on real CPU tensors, in fake
mode (FakeTensorMode with a ShapeEnv), on the meta device and, where a GPU
exists, on CUDA: the same validation runs in every kernel."""

import math
import warnings

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from conftest import device_param

ops = torch.ops.rowops


def _t(*shape, dtype=torch.float32):
    return torch.randn(shape).to(dtype)


# (name, op, args builder, message regex)
CASES = [
    ("rank0", ops.rms_norm_rows, lambda: (_t(), 1e-6),
     r"rms_norm_rows: x must have rank >= 1"),
    ("int-dtype", ops.rms_norm_rows, lambda: (torch.ones(2, 3, dtype=torch.int32), 1e-6),
     r"x must be float32, float16, bfloat16 or float64 \(got Int\)"),
    ("complex-dtype", ops.rms_norm_rows,
     lambda: (torch.ones(2, 3, dtype=torch.complex64), 1e-6),
     r"x must be float32, float16, bfloat16 or float64 \(got ComplexFloat\)"),
    ("eps-negative", ops.rms_norm_rows, lambda: (_t(2, 3), -1e-6),
     r"eps must be finite and >= 0 \(got -1e-06\)"),
    ("eps-nan", ops.rms_norm_rows, lambda: (_t(2, 3), math.nan),
     r"eps must be finite and >= 0 \(got nan\)"),
    ("eps-inf", ops.fused_add_rms_norm,
     lambda: (_t(2, 3), _t(2, 3), _t(3), math.inf),
     r"eps must be finite and >= 0 \(got inf\)"),
    ("residual-shape", ops.fused_add_rms_norm,
     lambda: (_t(2, 3), _t(2, 4), _t(3), 1e-6),
     r"residual must have the same shape as x"),
    ("residual-rank", ops.fused_add_rms_norm,
     lambda: (_t(2, 3), _t(1, 2, 3), _t(3), 1e-6),
     r"residual must have the same shape as x"),
    ("residual-dtype", ops.fused_add_rms_norm,
     lambda: (_t(2, 3), _t(2, 3, dtype=torch.float16), _t(3), 1e-6),
     r"residual must have x's dtype Float \(got Half\)"),
    ("weight-shape", ops.fused_add_rms_norm,
     lambda: (_t(2, 3), _t(2, 3), _t(4), 1e-6),
     r"weight must have shape \[N\] where N is x's last dimension"),
    ("weight-rank", ops.fused_add_rms_norm,
     lambda: (_t(2, 3), _t(2, 3), _t(1, 3), 1e-6),
     r"weight must have shape \[N\]"),
    ("weight-dtype", ops.fused_add_rms_norm,
     lambda: (_t(2, 3, dtype=torch.float16), _t(2, 3, dtype=torch.float16),
              _t(3, dtype=torch.float64), 1e-6),
     r"weight must have x's dtype Half or float32 \(got Double\)"),
    ("x-int-fused", ops.fused_add_rms_norm,
     lambda: (torch.ones(2, 3, dtype=torch.int64),
              torch.ones(2, 3, dtype=torch.int64), _t(3), 1e-6),
     r"fused_add_rms_norm: x must be float32"),
    ("inplace-overlap", ops.fused_add_rms_norm_,
     lambda: (lambda b: (b[:, :3], b[:, 2:5], _t(3), 1e-6))(_t(4, 5)),
     r"x and residual are both written in place and must not overlap"),
    ("inplace-same", ops.fused_add_rms_norm_,
     lambda: (lambda b: (b, b, _t(3), 1e-6))(_t(4, 3)),
     r"x and residual are both written in place and must not overlap"),
    ("inplace-expanded", ops.fused_add_rms_norm_,
     lambda: (_t(1, 3).expand(4, 3), _t(4, 3), _t(3), 1e-6),
     r"x is written in place and must not have internal overlap"),
    # weight read while x and residual are written (the probe: rows
    # 1-3 came out off by up to 19.5; with weight = residual[0] on the fast
    # path every row was wrong)
    ("inplace-weight-is-x-row", ops.fused_add_rms_norm_,
     lambda: (lambda x: (x, _t(4, 64), x[0], 1e-6))(_t(4, 64)),
     r"x is written in place and weight, which is read, must not overlap it"),
    ("inplace-weight-is-residual-row", ops.fused_add_rms_norm_,
     lambda: (lambda r: (_t(64, 64), r, r[0], 1e-6))(_t(64, 64)),
     r"residual is written in place and weight, which is read, must not "
     r"overlap it"),
    # internal overlap that is no plain expand: rows 8 elements apart
    ("inplace-as-strided-x", ops.fused_add_rms_norm_,
     lambda: (_t(100).as_strided((4, 64), (8, 1)), _t(4, 64), _t(64), 1e-6),
     r"x is written in place and must not have internal overlap"),
    ("inplace-as-strided-residual", ops.fused_add_rms_norm_,
     lambda: (_t(4, 64), _t(100).as_strided((4, 64), (8, 1)), _t(64), 1e-6),
     r"residual is written in place and must not have internal overlap"),
    ("reference-rank0", ops.rms_norm_rows_reference, lambda: (_t(), 1e-6),
     r"rms_norm_rows_reference: x must have rank >= 1"),
    ("reference-weight", ops.fused_add_rms_norm_reference,
     lambda: (_t(2, 3), _t(2, 3), _t(4), 1e-6),
     r"weight must have shape \[N\]"),
]


@pytest.mark.parametrize("name,op,build,msg", CASES, ids=[c[0] for c in CASES])
def test_error_real(name, op, build, msg):
    with pytest.raises(RuntimeError, match=msg):
        op(*build())


@pytest.mark.parametrize("name,op,build,msg", CASES, ids=[c[0] for c in CASES])
def test_error_fake(name, op, build, msg):
    args = build()
    with FakeTensorMode(shape_env=ShapeEnv()) as mode:
        fake = tuple(mode.from_tensor(a) if isinstance(a, torch.Tensor) else a
                     for a in args)
        with pytest.raises(RuntimeError, match=msg):
            op(*fake)


def _on_device(name, args, device):
    """The case's arguments on another device, with aliasing rebuilt there
    (moving tensors one by one would give each its own storage)."""
    eps = args[-1]
    w = args[2].to(device) if len(args) == 4 else None
    if name == "inplace-overlap":
        b = torch.empty(4, 5, device=device)
        return (b[:, :3], b[:, 2:5], w, eps)
    if name == "inplace-same":
        b = torch.empty(4, 3, device=device)
        return (b, b, w, eps)
    if name == "inplace-expanded":
        return (torch.empty(1, 3, device=device).expand(4, 3),
                torch.empty(4, 3, device=device), w, eps)
    if name == "inplace-weight-is-x-row":
        x = torch.empty(4, 64, device=device)
        return (x, torch.empty(4, 64, device=device), x[0], eps)
    if name == "inplace-weight-is-residual-row":
        r = torch.empty(64, 64, device=device)
        return (torch.empty(64, 64, device=device), r, r[0], eps)
    if name.startswith("inplace-as-strided"):
        bad = torch.empty(100, device=device).as_strided((4, 64), (8, 1))
        good = torch.empty(4, 64, device=device)
        return ((bad, good) if name.endswith("-x") else (good, bad)) + (w, eps)
    return tuple(_move(a, device) for a in args)


def _move(a, device):
    """Same strides on `device`; meta tensors carry no values."""
    if not isinstance(a, torch.Tensor):
        return a
    t = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=device)
    return t if device == "meta" else t.copy_(a)


@pytest.mark.parametrize("name,op,build,msg", CASES, ids=[c[0] for c in CASES])
def test_error_meta(name, op, build, msg):
    with pytest.raises(RuntimeError, match=msg):
        op(*_on_device(name, build(), "meta"))


# Arguments that are no dense tensor: None (an undefined tensor in C++)
# and sparse, CSR or mkldnn tensors, which have no strides or storage.
# Before, None read "got UNKNOWN_SCALAR" or a shape error, and the others
# "Cannot access data pointer of Tensor that doesn't have storage".
def _dense_cases():
    x, r, w = _t(4, 8), _t(4, 8), _t(8)
    with warnings.catch_warnings():  # "Sparse CSR tensor support is in beta"
        warnings.simplefilter("ignore")
        csr = x.to_sparse_csr()
    fused, rows, inplace = (ops.fused_add_rms_norm, ops.rms_norm_rows,
                            ops.fused_add_rms_norm_)
    none = r"must be a tensor \(got None or an undefined tensor\)"
    layout = r"must be a dense \(strided\) tensor \(got layout Sparse"
    return [
        ("x-none", fused, (None, r, w, 1e-6), r"fused_add_rms_norm: x " + none),
        ("residual-none", fused, (x, None, w, 1e-6), r"residual " + none),
        ("weight-none", fused, (x, r, None, 1e-6), r"weight " + none),
        ("rows-none", rows, (None, 1e-6), r"rms_norm_rows: x " + none),
        ("x-sparse", fused, (x.to_sparse(), r, w, 1e-6), r"x " + layout),
        ("x-csr", fused, (csr, r, w, 1e-6),
         r"x must be a dense \(strided\) tensor \(got layout SparseCsr"),
        ("x-mkldnn", fused, (x.to_mkldnn(), r, w, 1e-6),
         r"x must be a dense \(strided\) tensor \(got layout Mkldnn"),
        ("residual-sparse", fused, (x, r.to_sparse(), w, 1e-6),
         r"residual " + layout),
        ("weight-sparse", fused, (x, r, w.to_sparse(), 1e-6),
         r"weight " + layout),
        ("rows-sparse", rows, (x.to_sparse(), 1e-6), r"x " + layout),
        ("inplace-sparse", inplace, (x, r.to_sparse(), w, 1e-6),
         r"residual " + layout),
        ("reference-sparse", ops.fused_add_rms_norm_reference,
         (x.to_sparse(), r, w, 1e-6), r"x " + layout),
        ("backward-grad-sparse", ops.rms_norm_rows_backward,
         (x.to_sparse(), None, x, torch.ones(4)), r"grad_y " + layout),
    ]


@pytest.mark.parametrize("case", _dense_cases(), ids=lambda c: c[0])
def test_error_not_dense(case):
    _, op, args, msg = case
    with pytest.raises(RuntimeError, match=msg):
        op(*args)


def test_error_device_mismatch():
    x = torch.randn(2, 3)
    with pytest.raises(RuntimeError,
                       match=r"residual must be on x's device cpu \(got meta\)"):
        ops.fused_add_rms_norm(x, torch.empty(2, 3, device="meta"),
                               torch.ones(3), 1e-6)
    with pytest.raises(RuntimeError,
                       match=r"weight must be on x's device cpu \(got meta\)"):
        ops.fused_add_rms_norm(x, x, torch.empty(3, device="meta"), 1e-6)


@pytest.mark.parametrize("device", [device_param("cuda")])
@pytest.mark.parametrize("name,op,build,msg", CASES, ids=[c[0] for c in CASES])
def test_error_cuda(device, name, op, build, msg):
    with pytest.raises(RuntimeError, match=msg):
        op(*_on_device(name, build(), device))


def test_noninplace_overlap_is_fine():
    """The functional op may read overlapping inputs (no writes)."""
    b = torch.randn(4, 5)
    out, h, _ = ops.fused_add_rms_norm(b[:, :3], b[:, 2:5], torch.ones(3), 1e-6)
    torch.testing.assert_close(h, b[:, :3] + b[:, 2:5])


def test_inplace_disjoint_layouts_are_accepted():
    """What the overlap rules must not refuse: row-sliced x and residual
    (row stride 256 > N = 64: not dense, so ATen's own check says "too
    hard"), in one storage with byte ranges apart, and a weight after them
    in that storage."""
    buf = torch.randn(9, 256)
    x, r, w = buf[0:4, :64], buf[4:8, :64], buf[8, :64]
    hx, hr, hw = x.clone(), r.clone(), w.clone()
    ops.fused_add_rms_norm_(x, r, w, 1e-6)
    out, h, _ = ops.fused_add_rms_norm_reference(hx, hr, hw, 1e-6)
    torch.testing.assert_close(x, out)
    torch.testing.assert_close(r, h)
