"""Forward correctness of every implementation against the float64 formula
and against torch.nn.functional.rms_norm, over the shared samples."""

import pytest
import torch
import torch.nn.functional as F

import rowops
from conftest import device_param
from samples import TOL, assert_matches_formula, formula, samples

CPU_SAMPLES = samples("cpu")


def _ids(s):
    return s.name


def _op(sample):
    return getattr(torch.ops.rowops, sample.op)


def _reference(sample):
    return getattr(torch.ops.rowops, sample.op + "_reference")


def test_outputs_are_poisoned(poisoned_outputs):
    t = torch.empty(64)
    assert torch.isnan(t).all(), "poisoning must be active for these tests"


@pytest.mark.parametrize("sample", CPU_SAMPLES, ids=_ids)
def test_op_matches_formula_cpu(sample, poisoned_outputs):
    assert_matches_formula(sample, _op(sample)(*sample.args))


@pytest.mark.parametrize("sample", CPU_SAMPLES, ids=_ids)
def test_reference_matches_formula_cpu(sample, poisoned_outputs):
    assert_matches_formula(sample, _reference(sample)(*sample.args))


# In-place into an expanded tensor is an error (test_errors), not a sample.
@pytest.mark.parametrize("sample", [s for s in CPU_SAMPLES
                                    if s.op == "fused_add_rms_norm"
                                    and "expanded" not in s.tags], ids=_ids)
def test_inplace_matches_formula_cpu(sample):
    x, residual, weight, eps = sample.clone_args()
    x_ptr, r_ptr = x.data_ptr(), residual.data_ptr()
    x_strides = x.stride()
    assert rowops.fused_add_rms_norm_(x, residual, weight, eps) is None
    assert x.data_ptr() == x_ptr and residual.data_ptr() == r_ptr
    assert x.stride() == x_strides
    out, h, _ = formula(sample)
    rtol, atol = TOL[sample.x.dtype]
    torch.testing.assert_close(x.double(), out, rtol=rtol, atol=atol,
                               equal_nan=True)
    torch.testing.assert_close(residual, h, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("sample", [s for s in CPU_SAMPLES
                                    if s.x.shape[-1] > 0], ids=_ids)
def test_op_matches_torch_rms_norm(sample):
    """Against PyTorch's own rms_norm (two roundings: twice the tolerance)."""
    result = _op(sample)(*sample.args)
    if sample.op == "rms_norm_rows":
        h, weight = sample.x, None
    else:
        h, weight = sample.x + sample.residual, sample.weight.to(sample.x.dtype)
    acc = torch.float64 if sample.x.dtype == torch.float64 else torch.float32
    w = None if weight is None else sample.weight.to(acc)
    expected = F.rms_norm(h.to(acc), (h.shape[-1],), w, sample.eps)
    rtol, atol = TOL[sample.x.dtype]
    torch.testing.assert_close(result[0].to(acc), expected, rtol=2 * rtol,
                               atol=2 * atol, equal_nan=True)


def test_nonfinite_rows_follow_ieee():
    """NaN row: all NaN; Inf row: rstd 0, Inf * 0 = NaN, finite -> 0."""
    x = torch.ones(3, 8)
    x[0, 1] = float("nan")
    x[1, 2] = float("inf")
    y, rstd = rowops.rms_norm_rows(x)
    assert torch.isnan(y[0]).all() and torch.isnan(rstd[0])
    assert rstd[1] == 0 and torch.isnan(y[1, 2]) and (y[1, :2] == 0).all()
    assert torch.isfinite(y[2]).all() and rstd[2] == pytest.approx(1.0, rel=1e-5)


def test_empty_rows_give_rsqrt_eps():
    y, rstd = rowops.rms_norm_rows(torch.empty(3, 0), 1e-4)
    assert y.shape == (3, 0)
    torch.testing.assert_close(rstd, torch.full((3,), 100.0))


def test_outputs_are_fresh():
    x = torch.randn(4, 8)
    r = torch.randn(4, 8)
    out, h, rstd = rowops.fused_add_rms_norm(x, r, torch.ones(8))
    for t in (out, h, rstd):
        assert not t._is_view()
        for src in (x, r):
            assert t.untyped_storage().data_ptr() != src.untyped_storage().data_ptr()


@pytest.mark.parametrize("device", [device_param("cuda")])
@pytest.mark.parametrize("index", range(len(CPU_SAMPLES)),
                         ids=[s.name for s in CPU_SAMPLES])
def test_op_matches_formula_cuda(device, index, poisoned_outputs):
    sample = samples(device)[index]
    assert_matches_formula(sample, _op(sample)(*sample.args))
    # what ran is what the eligibility function says (cuda_fast for unit
    # last strides and N within the one-pass limit on sm_80+, else
    # cuda_strided; test_cuda.py pins the cases)
    ran = torch.ops.rowops._last_dispatch()
    assert ran in ("cuda_fast", "cuda_strided", "reference")
    assert rowops.explain_dispatch(sample.op, *sample.args).impl == ran


def test_explain_dispatch_cpu():
    x = torch.randn(4, 8)
    d = rowops.explain_dispatch("rms_norm_rows", x)
    assert d.impl.startswith("cpu_fast") and "CPU fast" in d.reason
    d = rowops.explain_dispatch(torch.ops.rowops.fused_add_rms_norm,
                                x.t(), torch.randn(8, 4), torch.ones(4))
    assert d.impl == "cpu_strided" and "last-dimension stride 8" in d.reason
    d = rowops.explain_dispatch(torch.ops.rowops.fused_add_rms_norm,
                                x.t(), x.t(), torch.ones(4))
    features = torch.ops.rowops._cpu_features()
    fast = rowops.explain_dispatch("rms_norm_rows", x).impl
    if features & 24 == 24 and features & 7 == 7:
        # AVX-512 F+BW and AVX2+FMA+F16C: columns 8 apart, the short-column
        # kernel
        assert d.impl == "cpu_colmajor_narrow" and "column-major" in d.reason
    elif fast != "cpu_fast_portable":
        assert d.impl == "cpu_colmajor_avx2" and "column-major" in d.reason
    else:
        assert d.impl == "cpu_strided"
    with pytest.raises(ValueError, match="explain_dispatch: op must be one of"):
        rowops.explain_dispatch("layer_norm", x)


def test_explain_dispatch_does_not_allocate():
    """Explaining describes the outputs the call would allocate without
    allocating them: 2^40 expanded rows (32 TiB of float32 outputs) used
    to fail in the allocator. The answer is the one a small call of the
    same layout gets."""
    x = torch.randn(1, 8).expand(2**40, 8)
    d = rowops.explain_dispatch("rms_norm_rows", x)
    assert d == rowops.explain_dispatch("rms_norm_rows",
                                        torch.randn(1, 8).expand(4, 8))
    assert d.impl == "cpu_strided" and "row stride 0" in d.reason
    w = torch.ones(8)
    d = rowops.explain_dispatch("fused_add_rms_norm", x, x, w)
    assert d.impl == "cpu_strided" and "row stride 0" in d.reason
    big = torch.empty(1, 64, dtype=torch.bfloat16).expand(2**42, 64)
    assert rowops.explain_dispatch("fused_add_rms_norm", big, big,
                                   torch.ones(64)).impl == "cpu_strided"


def test_rank_beyond_descriptor_uses_reference(poisoned_outputs):
    x = torch.randn([2] * 9 + [5], dtype=torch.float32)
    d = rowops.explain_dispatch("rms_norm_rows", x)
    assert d.impl == "reference" and "rank 10" in d.reason
    y, rstd = rowops.rms_norm_rows(x)
    torch.testing.assert_close(y.double(), formula(
        type("S", (), {"op": "rms_norm_rows", "x": x, "eps": 1e-6})())[0],
        rtol=1e-5, atol=1e-6)
