"""The CUDA kernels on a GPU: which kernel each layout reaches, in-place
values, the current (non-default) stream, CUDA-graph capture and replay,
bitwise repeatability, more rows than the grid, N past the one-pass limit,
the accuracy bound up to N = 2^27, the backward kernels against the float64
formula, and error attribution. Every test skips visibly without a GPU
("no CUDA device on this machine"); the forward values of every sample are
test_forward.py's test_op_matches_formula_cuda."""

import functools

import pytest
import torch

import rowops
from samples import (TOL, assert_matches_formula, formula, make_sample,
                     samples)

ops = torch.ops.rowops
cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                          reason="no CUDA device on this machine")
# the kernels' bound on rstd (docs/operators.md, Contract): float32 inside a
# thread's run of at most 16 squares, float64 after it, one rounding
RSTD_BOUND = 9 * 2.0**-24


@functools.lru_cache(maxsize=1)
def _cuda_samples():
    return samples("cuda")


def _op(sample):
    return getattr(ops, sample.op)


CPU_NAMES = [s.name for s in samples("cpu")]


@cuda
@pytest.mark.parametrize("index", [i for i, s in enumerate(samples("cpu"))
                                   if s.op == "fused_add_rms_norm"
                                   and "expanded" not in s.tags],
                         ids=lambda i: CPU_NAMES[i])
def test_inplace_matches_formula_cuda(index):
    sample = _cuda_samples()[index]
    x, residual, weight, eps = sample.clone_args()
    ops.fused_add_rms_norm_(x, residual, weight, eps)
    out, h, _ = formula(sample)
    rtol, atol = TOL[sample.x.dtype]
    torch.testing.assert_close(x.double(), out, rtol=rtol, atol=atol,
                               equal_nan=True)
    torch.testing.assert_close(residual, h, rtol=0, atol=0, equal_nan=True)
    if x.numel():  # empty: no kernel runs
        assert ops._last_dispatch() == rowops.explain_dispatch(
            "fused_add_rms_norm_", x, residual, weight, eps).impl


# (layout, dtype, B, N, the kernel, words of its reason)
ROUTES = [
    ("contiguous", torch.bfloat16, 4, 4096, "cuda_fast", "16-byte vectors"),
    ("contiguous", torch.float32, 4, 4096, "cuda_fast", "16-byte vectors"),
    ("contiguous", torch.float32, 4, 4098, "cuda_fast", "8-byte vectors"),
    ("contiguous", torch.bfloat16, 3, 4097, "cuda_fast", "2-byte vectors"),
    ("contiguous", torch.bfloat16, 2, 65536, "cuda_fast", "N = 65536"),
    ("contiguous", torch.bfloat16, 2, 65537, "cuda_strided", "one-pass"),
    ("contiguous", torch.float32, 2, 32769, "cuda_strided", "one-pass"),
    ("contiguous", torch.float64, 4, 64, "cuda_strided", "float64"),
    ("row_sliced", torch.float16, 5, 64, "cuda_fast", "16-byte vectors"),
    ("misaligned", torch.bfloat16, 5, 64, "cuda_fast", "2-byte vectors"),
    ("3d", torch.float32, 5, 64, "cuda_fast", "vectors"),
    ("transposed", torch.bfloat16, 5, 64, "cuda_strided", "last-dimension"),
    ("expanded", torch.float32, 5, 64, "cuda_strided", "row stride 0"),
]


@cuda
@pytest.mark.parametrize("layout,dtype,B,N,impl,why", ROUTES,
                         ids=[f"{r[0]}-{str(r[1])[6:]}-N{r[3]}"
                              for r in ROUTES])
@pytest.mark.parametrize("op", ["rms_norm_rows", "fused_add_rms_norm"])
def test_kernel_per_layout_cuda(op, layout, dtype, B, N, impl, why):
    sample = make_sample(op, layout, B, N, dtype, "cuda")
    d = rowops.explain_dispatch(op, *sample.args)
    assert d.impl == impl and why in d.reason, d
    assert_matches_formula(sample, _op(sample)(*sample.args))
    assert ops._last_dispatch() == impl


@cuda
def test_compute_capability_below_80_is_the_reference():
    major, _ = torch.cuda.get_device_capability()
    x = torch.randn(4, 64, device="cuda")
    d = rowops.explain_dispatch("rms_norm_rows", x)
    assert (d.impl == "reference") == (major < 8), d


@cuda
def test_runs_on_the_current_stream():
    """Inputs written on a non-blocking side stream after a long sleep:
    a kernel launched on any other stream would read them unwritten."""
    side = torch.cuda.Stream()  # the pool's streams are non-blocking
    src = make_sample("fused_add_rms_norm", "contiguous", 64, 4096,
                      torch.bfloat16, "cuda")
    for strided in (False, True):
        x = torch.full_like(src.x, float("nan"))
        r = torch.full_like(src.residual, float("nan"))
        if strided:
            x, r = x.t().contiguous().t(), r.t().contiguous().t()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(100_000_000)
            x.copy_(src.x)
            r.copy_(src.residual)
            out, h, rstd = ops.fused_add_rms_norm(x, r, src.weight, src.eps)
            assert ops._last_dispatch() == ("cuda_strided" if strided
                                            else "cuda_fast")
        side.synchronize()
        assert_matches_formula(src, (out, h, rstd))


def _fill(sample, seed):
    g = torch.Generator().manual_seed(seed)
    for t in (sample.x, sample.residual):
        t.copy_((torch.rand(t.shape, generator=g) * 4 - 2).to(t.dtype))


@cuda
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_graph_capture_and_replay(layout):
    """Captured once, replayed on new inputs: no sync or allocation
    outside the caching allocator in the CUDA path, current stream."""
    sample = make_sample("fused_add_rms_norm", layout, 96, 2048,
                         torch.bfloat16, "cuda")
    args = sample.args
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up, as the graph docs ask
        for _ in range(2):
            ops.fused_add_rms_norm(*args)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, h, rstd = ops.fused_add_rms_norm(*args)
    for seed in range(3):
        _fill(sample, seed)
        graph.replay()
        torch.cuda.synchronize()
        assert_matches_formula(sample, (out, h, rstd))


@cuda
def test_backward_graph_capture_and_replay():
    sample = make_sample("fused_add_rms_norm", "contiguous", 64, 1024,
                         torch.bfloat16, "cuda")
    out, h, rstd = ops.fused_add_rms_norm(*sample.args)
    go = torch.randn_like(out)
    args = (go, None, None, h, sample.weight, rstd)
    for _ in range(2):
        want = ops.fused_add_rms_norm_backward(*args)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = ops.fused_add_rms_norm_backward(*args)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


@cuda
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_bitwise_repeatable(layout):
    sample = make_sample("fused_add_rms_norm", layout, 300, 4096,
                         torch.bfloat16, "cuda")
    first = ops.fused_add_rms_norm(*sample.args)
    for _ in range(3):
        again = ops.fused_add_rms_norm(*sample.args)
        assert all(torch.equal(a, b) for a, b in zip(first, again))
    go = torch.randn_like(first[0])
    g1 = ops.fused_add_rms_norm_backward(go, None, None, first[1],
                                         sample.weight, first[2])
    g2 = ops.fused_add_rms_norm_backward(go, None, None, first[1],
                                         sample.weight, first[2])
    assert torch.equal(g1[0], g2[0]) and torch.equal(g1[1], g2[1])


@cuda
@pytest.mark.parametrize("op,layout,dtype,B,N", [
    ("fused_add_rms_norm", "contiguous", torch.bfloat16, 65536, 128),
    ("rms_norm_rows", "contiguous", torch.float32, 1 << 20, 8),
    ("fused_add_rms_norm", "transposed", torch.float16, 20000, 64),
    ("fused_add_rms_norm", "contiguous", torch.bfloat16, 3, 70000),
])
def test_more_rows_than_the_grid(op, layout, dtype, B, N):
    """Far more rows than resident blocks (QK-norm, tiny rows, transposed
    tiles), and N past the one-pass limit."""
    sample = make_sample(op, layout, B, N, dtype, "cuda")
    assert_matches_formula(sample, _op(sample)(*sample.args))


@cuda
@pytest.mark.parametrize("n", [1 << 20, 1 << 23, 1 << 27])
def test_rstd_bound_at_large_n(n):
    """Issue 19's rows: a constant row (strided kernel: expand) and a
    random one (the strided kernel past the one-pass limit, the fast one
    at its limit)."""
    y, rstd = ops.rms_norm_rows(torch.ones(1, device="cuda").expand(1, n),
                                1e-6)
    exact = 1 / (1 + 1e-6) ** 0.5
    assert abs(rstd.item() / exact - 1) <= RSTD_BOUND, rstd.item()
    x = torch.randn(1, n, device="cuda")
    _, rstd = ops.rms_norm_rows(x, 1e-6)
    exact = 1 / (x.double().square().mean() + 1e-6).sqrt()
    assert abs(rstd.item() / exact.item() - 1) <= RSTD_BOUND
    for dtype, limit in ((torch.float32, 32768), (torch.bfloat16, 65536)):
        x = torch.randn(64, limit, device="cuda").to(dtype)
        _, rstd = ops.rms_norm_rows(x, 1e-6)
        assert ops._last_dispatch() == "cuda_fast"
        exact = 1 / (x.double().square().mean(-1) + 1e-6).sqrt()
        assert ((rstd.double() / exact - 1).abs() <= RSTD_BOUND).all()


def _backward_formula(h, weight, rstd, go, gro, grstd):
    """The backward formula of docs/training-and-compile.md (Training), in
    float64 on the kernels' own inputs."""
    h, go, r = h.double(), go.double(), rstd.double().unsqueeze(-1)
    n = h * r
    g = go * weight.double() if weight is not None else go
    N = h.shape[-1]
    k = (r * (g * n).sum(-1, keepdim=True)
         + (grstd.double().unsqueeze(-1) if grstd is not None else 0)
         * r * r) / N
    gh = r * g - n * k
    if gro is not None:
        gh = gh + gro.double()
    gw = (go * n).reshape(-1, N).sum(0) if weight is not None else None
    return gh, gw


# (rtol, atol) as tests/python/test_autograd.py: |err| <= rtol |expected|
# + atol max |expected|
GRAD_TOL = {torch.float32: (2e-5, 1e-6), torch.float16: (1e-3, 1e-5),
            torch.bfloat16: (8e-3, 1e-4), torch.float64: (1e-12, 1e-14)}


def _close(got, want, dtype):
    rtol, atol = GRAD_TOL[dtype]
    err = (got.double() - want).abs()
    assert (err <= rtol * want.abs() + atol * want.abs().max()).all(), \
        f"max err {err.max().item()} of max {want.abs().max().item()}"


@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16,
                                   torch.bfloat16, torch.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "row_sliced",
                                    "3d"])
@pytest.mark.parametrize("op", ["rms_norm_rows", "fused_add_rms_norm"])
def test_backward_matches_formula_cuda(op, layout, dtype):
    sample = make_sample(op, layout, 37, 1000, dtype, "cuda")
    res = _op(sample)(*sample.args)

    def like_x(t):  # the sample's layout (transposed, sliced, 3-d)
        return torch.empty_strided(sample.x.size(), sample.x.stride(),
                                   dtype=t.dtype, device=t.device).copy_(t)

    h, rstd = (sample.x, res[1]) if op == "rms_norm_rows" else (
        like_x(res[1]), res[2])
    go = like_x(torch.randn_like(res[0]))
    grstd = torch.randn_like(rstd)
    if op == "rms_norm_rows":
        got = ops.rms_norm_rows_backward(go, grstd, sample.x, rstd)
        want, _ = _backward_formula(sample.x, None, rstd, go, None, grstd)
        _close(got, want, dtype)
    else:
        gro = like_x(torch.randn_like(res[1]))
        gh, gw = ops.fused_add_rms_norm_backward(go, gro, grstd, h,
                                                 sample.weight, rstd)
        want_h, want_w = _backward_formula(h, sample.weight, rstd, go, gro,
                                           grstd)
        _close(gh, want_h, dtype)
        _close(gw, want_w, sample.weight.dtype)
    assert ops._last_backward_dispatch() == "cuda_strided"


@cuda
def test_backward_at_large_n():
    """Issue 19: float32 backward at N = 2^22."""
    x = torch.randn(2, 1 << 22, device="cuda")
    y, rstd = ops.rms_norm_rows(x)
    go = torch.randn_like(y)
    got = ops.rms_norm_rows_backward(go, None, x, rstd)
    want, _ = _backward_formula(x, None, rstd, go, None, None)
    err = (got.double() - want).abs().max() / want.abs().max()
    assert err <= 1e-5, err.item()


@cuda
def test_pending_error_is_not_blamed_on_rowops():
    x = torch.randn(4, 64, device="cuda")
    torch.cuda.synchronize()
    ops._cuda_leave_pending_error()
    with pytest.raises(RuntimeError, match="error from an earlier operation "
                       "was pending before the cuda_fast launch"):
        ops.rms_norm_rows(x)
    y, rstd = ops.rms_norm_rows(x)  # consumed: the next call runs
    torch.testing.assert_close(rstd, (x.square().mean(-1) + 1e-6).rsqrt())
