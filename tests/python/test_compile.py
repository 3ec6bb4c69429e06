"""Compiler integration with evidence: no graph breaks, the fused op kept
in the captured graph and called from Inductor's output code, no
conversions around it, the in-place form re-inplaced, torch.export with a
dynamic batch, AOTInductor, and the opaque/decomposed boundary."""

import os
import re

import pytest
import torch
from torch._inductor.custom_graph_pass import CustomGraphPass
from torch._inductor.utils import run_and_get_code

import rowops
from samples import make_tensor

OP_CALL = re.compile(r"^\s*(?!#).*?torch\.ops\.rowops\.(\w+)\.default\(",
                     re.M)
# Nodes that copy, convert or re-layout a tensor.
CONVERSIONS = {
    torch.ops.aten.clone.default, torch.ops.aten.copy_.default,
    torch.ops.aten.copy.default, torch.ops.aten._to_copy.default,
    torch.ops.prims.convert_element_type.default,
    torch.ops.aten.contiguous.default if hasattr(torch.ops.aten, "contiguous")
    else torch.ops.aten.clone.default,
    torch.ops.aten.as_strided_copy.default if hasattr(
        torch.ops.aten, "as_strided_copy") else torch.ops.aten.clone.default,
}


def rowops_calls(code):
    """The rowops ops the generated code calls (comments excluded)."""
    return OP_CALL.findall(code)


def generated_kernels(code):
    """Kernels Inductor generated (each an extra pass over memory)."""
    return re.findall(r"^(cpp_fused_\w+) = ", code, re.M)


class CapturePostGrad(CustomGraphPass):
    """Keeps the post-grad graph Inductor lowers (the last one)."""

    def __init__(self):
        self.graphs = []

    def __call__(self, graph):
        self.graphs.append(graph)

    def uuid(self):
        return None  # never cached: every compile runs the pass


def compile_and_capture(fn, *args, **compile_kwargs):
    torch._dynamo.reset()
    capture = CapturePostGrad()
    with torch._inductor.config.patch(post_grad_custom_post_pass=capture,
                                      fx_graph_cache=False):
        out, codes = run_and_get_code(
            torch.compile(fn, fullgraph=True, **compile_kwargs), *args)
    assert capture.graphs, "the post-grad pass did not run"
    return out, "\n".join(codes), capture.graphs


def conversions(graphs):
    return [str(n.target) for g in graphs for n in g.nodes
            if n.op == "call_function" and n.target in CONVERSIONS]


def _site(dtype=torch.float32, hidden=256, boundary="opaque"):
    torch.manual_seed(0)
    return rowops.nn.NormSite(hidden, boundary=boundary, dtype=dtype)


def _site_inputs(B, hidden=256, dtype=torch.float32, requires_grad=False):
    g = torch.Generator().manual_seed(B)
    h = torch.randn(B, hidden, generator=g).to(dtype)
    r = torch.randn(B, hidden, generator=g).to(dtype)
    return h.requires_grad_(requires_grad), r.requires_grad_(requires_grad)


# ---- graph breaks and equality, forward and backward

@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_norm_site_compiles_without_graph_breaks(dynamic):
    site = _site()
    h, r = _site_inputs(8)
    torch._dynamo.reset()
    explain = torch._dynamo.explain(site)(h, r)
    assert explain.graph_break_count == 0 and explain.graph_count == 1, \
        explain.break_reasons
    torch._dynamo.reset()
    compiled = torch.compile(site, fullgraph=True, dynamic=dynamic)
    eager_site = _site()
    for B in (8, 13):  # 13: a new batch (recompiles when static)
        h, r = _site_inputs(B, requires_grad=True)
        he, re_ = (t.detach().clone().requires_grad_() for t in (h, r))
        y, res = compiled(h, r)
        ye, rese = eager_site(he, re_)
        torch.testing.assert_close(y, ye, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(res, rese, rtol=0, atol=0)
        (y.square().sum() + res.sum()).backward()
        (ye.square().sum() + rese.sum()).backward()
        for a, b in [(h.grad, he.grad), (r.grad, re_.grad)] + [
                (p.grad, q.grad) for p, q in zip(compiled.parameters(),
                                                 eager_site.parameters())]:
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
        for p in list(compiled.parameters()) + list(eager_site.parameters()):
            p.grad = None


def test_backward_ops_in_compiled_backward():
    site = _site()
    h, r = _site_inputs(8, requires_grad=True)
    torch._dynamo.reset()
    _, codes = run_and_get_code(
        lambda: torch.compile(site, fullgraph=True)(h, r)[0].sum().backward())
    calls = rowops_calls("\n".join(codes))
    assert "fused_add_rms_norm" in calls
    assert "fused_add_rms_norm_backward" in calls


# ---- the kernel stays, nothing converts around it

@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_op_called_from_output_code_without_conversions(layout, dtype):
    g = torch.Generator().manual_seed(3)
    x = make_tensor(layout, 16, 256, dtype, "cpu", g)
    r = make_tensor(layout, 16, 256, dtype, "cpu", g)
    w = make_tensor("contiguous", 1, 256, dtype, "cpu", g)[0]

    def norm(x, r, w):
        return torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)

    out, code, graphs = compile_and_capture(norm, x, r, w)
    assert rowops_calls(code) == ["fused_add_rms_norm"]
    # the contract takes any strides, so the strided kernel needs no copy:
    # no conversion node in the graph Inductor lowers, no generated kernel
    assert conversions(graphs) == []
    assert generated_kernels(code) == []
    for a, b in zip(out, norm(x, r, w)):
        assert torch.equal(a, b)


def test_norm_site_has_no_conversions():
    site = _site(torch.bfloat16)
    h, r = _site_inputs(8, dtype=torch.bfloat16)
    out, code, graphs = compile_and_capture(site, h, r)
    assert rowops_calls(code) == ["fused_add_rms_norm"]
    assert conversions(graphs) == []
    assert generated_kernels(code) == []  # two mm externs and the op


def test_inplace_compiles_reinplaced():
    g = torch.Generator().manual_seed(4)
    x = make_tensor("contiguous", 8, 256, torch.float32, "cpu", g)
    r = make_tensor("contiguous", 8, 256, torch.float32, "cpu", g)
    w = make_tensor("contiguous", 1, 256, torch.float32, "cpu", g)[0]

    def fn(x, r, w):
        torch.ops.rowops.fused_add_rms_norm_(x, r, w, 1e-6)

    xe, re_ = x.clone(), r.clone()
    fn(xe, re_, w)
    xc, rc = x.clone(), r.clone()
    _, code, graphs = compile_and_capture(fn, xc, rc, w)
    # mutations visible to the caller
    assert torch.equal(xc, xe) and torch.equal(rc, re_)
    # functionalized, then re-inplaced: the mutating op itself, no copies
    assert rowops_calls(code) == ["fused_add_rms_norm_"]
    assert generated_kernels(code) == []
    assert "clone" not in code and ".copy_(" not in code


# ---- torch.export and AOTInductor

def _export(site, B=8):
    batch = torch.export.Dim("batch", min=1, max=8192)
    h, r = _site_inputs(B)
    return torch.export.export(site, (h, r), dynamic_shapes={
        "hidden": {0: batch}, "residual": {0: batch}})


def test_export_dynamic_batch():
    site = _site().eval()
    ep = _export(site)
    nodes = [n for n in ep.graph.nodes if n.op == "call_function"
             and n.target == torch.ops.rowops.fused_add_rms_norm.default]
    assert len(nodes) == 1
    out, h, rstd = nodes[0].meta["val"]
    for t in (out, h, rstd):
        assert isinstance(t.shape[0], torch.SymInt)
        assert not t.shape[0].node.is_constant()
    assert out.shape[1] == 256 and rstd.dtype == torch.float32
    hx, rx = _site_inputs(21)
    for a, b in zip(ep.module()(hx, rx), site(hx, rx)):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_aoti_package_runs_at_another_batch(tmp_path):
    site = _site().eval()
    ep = _export(site)
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=os.fspath(tmp_path / "norm_site.pt2"))
    runner = torch._inductor.aoti_load_package(path)
    for B in (1, 37):  # exported at 8
        h, r = _site_inputs(B)
        with torch.no_grad():
            expected = site(h, r)
        got = runner(h, r)
        for a, b in zip(got, expected):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


# ---- the two boundaries

def test_decomposed_boundary_module():
    site = _site(boundary="decomposed")
    h, r = _site_inputs(8)
    out, code, _ = compile_and_capture(site, h, r)
    assert rowops_calls(code) == []  # traced through, fused by Inductor
    assert generated_kernels(code)
    ref = _site(boundary="opaque")(h, r)
    for a, b in zip(out, ref):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_decompose_under_compile_is_scoped():
    site = _site()
    h, r = _site_inputs(8, requires_grad=True)
    with rowops.boundary.decompose_under_compile():
        out, code, _ = compile_and_capture(site, h, r)
        _, bwd = run_and_get_code(lambda: out[0].sum().backward())
    assert rowops_calls(code) == [] and rowops_calls("\n".join(bwd)) == []
    _, code, _ = compile_and_capture(site, h.detach(), r.detach())
    assert rowops_calls(code) == ["fused_add_rms_norm"]  # restored
    with pytest.raises(ValueError, match="boundary must be one of"):
        rowops.nn.NormSite(8, boundary="fused")


def test_decomposed_compile_loads_from_the_fx_graph_cache(tmp_path,
                                                           monkeypatch):
    """A decomposed graph compiled a second time is loaded from Inductor's
    FX graph cache (a decomposition table handed to compile_fx made every
    such compile bypass it), and the cache never answers the opaque
    boundary with decomposed code, or the reverse."""
    from torch._dynamo.utils import counters
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))

    def norm(x, residual, weight):
        return rowops.fused_add_rms_norm(x, residual, weight, 1e-6)

    x, r = torch.randn(4, 96), torch.randn(4, 96)
    w = torch.randn(96)
    seen = []
    for boundary in ("decomposed", "opaque", "decomposed", "opaque"):
        torch._dynamo.reset()
        counters.clear()
        backend = rowops.boundary.inductor_decomposed() \
            if boundary == "decomposed" else "inductor"
        with torch._inductor.config.patch(fx_graph_cache=True):
            _, codes = run_and_get_code(
                torch.compile(norm, backend=backend, fullgraph=True),
                x, r, w)
        seen.append((boundary, rowops_calls("\n".join(codes)),
                     counters["inductor"]["fxgraph_cache_hit"],
                     counters["inductor"]["fxgraph_cache_bypass"]))
    assert seen == [("decomposed", [], 0, 0),
                    ("opaque", ["fused_add_rms_norm"], 0, 0),
                    ("decomposed", [], 1, 0),
                    ("opaque", ["fused_add_rms_norm"], 1, 0)]
