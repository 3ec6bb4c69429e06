"""The bench's model paths (bench/python/opcost_model.py) on a tiny Llama
config, no timing: each norm's stack is verified against the float64
stack as shipped and a wrong one is caught; the compiled stacks have no
graph break under fullgraph, the rowops stack's output code (Inductor's
Python wrapper, or the AOTInductor package's C++ one) holds its four
rowops calls and no copy or cast around them; the evidence readers count
a copy they are shown; the shape sets map to their models."""

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "python"))
pytest.importorskip("transformers")
import opcost_model as om  # noqa: E402

TINY = dict(hidden_size=64, intermediate_size=160, num_attention_heads=4,
            num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0)
PATHS = ["model-shipped-eager", "model-rowops-eager", "model-torch-eager",
         "model-shipped-compiled", "model-rowops-compiled",
         "model-torch-compiled", "model-decomposed-compiled"]


def runner(path, dtype, tokens, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, 64, generator=g).to(om._DTYPES[dtype])
    spec = [[(x.data_ptr(), dtype, tuple(x.shape), tuple(x.stride()))]]
    r = om.ModelRunner(path, dtype, spec, "test-tiny", TINY)
    r._keep = x  # the views' memory
    return r


# Every eager and compiled stack in float32 (within 1e-5 of the float64
# stack: what Inductor made of it changed nothing but roundings), the eager
# ones in bfloat16 too. The bench's own test (tests/sh/model_paths.sh)
# verifies the compiled stacks and the AOTInductor packages in bfloat16,
# and reads their evidence, from the rows of a run
VERIFIED = [(p, "float32") for p in PATHS] + [
    (p, "bfloat16") for p in PATHS if p.endswith("-eager")]


@pytest.mark.parametrize("path,dtype", VERIFIED)
def test_verified_against_float64(path, dtype):
    r = runner(path, dtype, 5)
    out = r.fn(*r.args[0])
    assert out.shape == (1, 5, 64) and out.dtype == om._DTYPES[dtype]
    assert r.verify(0, out) is None
    rel, tol = r.verified
    assert 0 < rel <= tol
    if dtype == "float32":  # the stacks differ from shipped by roundings
        assert rel < 1e-5


def test_wrong_output_is_caught():
    r = runner("model-rowops-eager", "bfloat16", 5)
    out = r.fn(*r.args[0]).clone()
    out[0, 3, 7] += 4.0
    why = r.verify(0, out)
    assert why and "off the float64 stack as shipped" in why
    assert "worst element [0, 3, 7]" in why


def test_a_norm_that_skips_the_weight_is_caught():
    """A stack whose norms forget the weight multiply is off by the
    weights' spread (N(1, 0.1)): far beyond the tolerance."""
    r = runner("model-torch-eager", "float32", 5)
    layers = r.stack.layers
    saved = [(n, n.weight.clone()) for l in layers
             for n in (l.input_layernorm, l.post_attention_layernorm)]
    try:
        for n, _ in saved:
            n.weight.fill_(1.0)
        out = r.fn(*r.args[0])
    finally:
        for n, w in saved:
            n.weight.copy_(w)
    assert r.verify(0, out) is not None


def evidence_of(paths, dtype):
    """{path: its evidence}, each with what every compiled stack has: a
    norm share, no graph break, no copy or cast around a rowops call, a
    fusion boundary. In the dtype whose graphs or packages
    test_verified_against_float64 made already."""
    ev = {}
    for path in paths:
        ev[path] = runner(path, dtype, 5).evidence()
        assert 0 < ev[path]["norm_share"] < 1
        assert ev[path]["graph_breaks"] == 0
        assert ev[path]["copies_around"] == 0
        assert ev[path]["fusion_boundary"]
    return ev


def test_compiled_evidence():
    ev = evidence_of(PATHS[3:], "float32")
    # one rms_norm_rows and three fused_add_rms_norm calls, opaque
    assert ev["model-rowops-compiled"]["op_calls"] == 4
    assert "mm" in ev["model-rowops-compiled"]["fusion_boundary"].split()
    # decomposed: none left, Inductor's kernels named after the ops
    assert ev["model-decomposed-compiled"]["op_calls"] == 0
    assert "rms_norm" in ev["model-decomposed-compiled"]["fusion_boundary"]
    assert "rsqrt" in ev["model-shipped-compiled"]["fusion_boundary"]


def test_aoti_evidence():
    """The rowops stack's package's own code: it calls its four ops
    through the proxy executor with nothing copied or cast around them
    (the stacks as shipped and with F.rms_norm, no rowops call: the rows
    of tests/sh/model_paths.sh, whose packages are these in the cache)."""
    ev = evidence_of(["model-rowops-aoti"], "bfloat16")
    assert ev["model-rowops-aoti"]["op_calls"] == 4
    assert "mm_out" in ev["model-rowops-aoti"]["fusion_boundary"].split()
    # the package takes the stack's own weights: a changed weight changes
    # the package's output (nothing was copied into it)
    r = runner("model-rowops-aoti", "bfloat16", 5)
    before = r.fn(*r.args[0]).clone()
    w = r.stack.layers[1].mlp.down_proj.weight
    saved = w.clone()
    try:
        w.mul_(2)
        assert not torch.equal(r.fn(*r.args[0]), before)
    finally:
        w.copy_(saved)


def test_aoti_kernel_scopes_on_the_cpu_only():
    """The packages' Inductor options: eager's rounding on every device;
    a profiler scope in each kernel on the CPU (the attribution pass's
    compute), none on a GPU (CUPTI's there; with them the stack's CUDA
    package failed to compile on an H200, torch 2.11)."""
    cpu, cuda = om.aoti_configs("cpu"), om.aoti_configs("cuda")
    assert cpu["cpp.enable_kernel_profile"] is True
    assert "cpp.enable_kernel_profile" not in cuda
    for c in (cpu, cuda):
        assert c["emulate_precision_casts"] is True
        assert c["aot_inductor.package_constants_in_so"] is False


def test_no_decomposed_aoti():
    with pytest.raises(ValueError, match="only under torch.compile"):
        runner("model-decomposed-aoti", "bfloat16", 5)


def test_no_graph_break():
    """Dynamo's own account of the compiled stacks (explain: traced
    without fullgraph, so a break would split the graph, not raise)."""
    for norm in ("shipped", "rowops", "torch"):
        r = runner(f"model-{norm}-eager", "bfloat16", 5)
        fn = om.stack_fn(r.stack, norm)
        assert torch._dynamo.explain(fn)(*r.args[0]).graph_break_count == 0


def test_graph_breaks_are_counted():
    """The counter the compiled paths read sees a break where there is
    one (a print-free Python side effect Dynamo cannot trace)."""
    def broken(x):
        y = x * 2
        torch._dynamo.graph_break()
        return y + 1
    before = om.graph_breaks_counted()
    torch.compile(broken, backend="eager")(torch.ones(3))
    assert om.graph_breaks_counted() > before


def test_eager_norm_share_is_measured():
    r = runner("model-shipped-eager", "float32", 5)
    share = r.norm_share()
    assert 0 < share < 1
    assert r.evidence().keys() == {"norm_share"}


CODE = """
        buf3 = empty_strided_cpu((s12, 64), (64, 1), torch.float32)
        extern_kernels.mm(buf1, arg2_1, out=buf3)
        cpp_fused_clone_4(buf3, buf4, s12)
        buf5 = torch.ops.rowops.fused_add_rms_norm.default(buf4, arg1_1, arg9_1, 1e-05)
        buf6 = buf5[0]
        buf7 = reinterpret_tensor(buf6, (1, s12, 64), (64*s12, 64, 1), 0)
        cpp_fused__to_copy_5(buf7, buf8, s12)
        extern_kernels.mm(buf8, arg3_1, out=buf9)
        cpp_fused_silu_6(buf9, buf10, s12)
"""


def test_code_evidence_counts_copies_around_the_op():
    calls, copies, boundary = om.code_evidence([CODE])
    assert calls == 1
    # the clone feeding it and the cast of its output (through a view)
    assert copies == 2
    assert boundary.split() == ["cpp_fused_clone", "cpp_fused__to_copy"]
    # the mm reading the cast is not next to the op; silu is not either
    calls, copies, boundary = om.code_evidence([CODE.replace(
        "cpp_fused__to_copy_5(buf7, buf8, s12)", "")])
    assert copies == 1


CPP = """
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cpu_mm_out(buf3, buf1, arg2_1));
    cpp_fused_clone_4((const float*)(buf3.data_ptr()), (float*)(buf4.data_ptr()), s12);
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_proxy_executor_call_function(proxy_executor, 0, 0, std::array<int64_t, 0>{}.data(), 6, std::array<AtenTensorHandle, 6>{buf4, arg1_1, arg9_1, buf5, buf6, buf7}.data()));
    auto buf8 = wrap_with_raii_handle_if_needed(reinterpret_tensor_wrapper(buf6, 3, int_array_2, int_array_3, 0L)); buf6.reset();  // reuse
    cpp_fused__to_copy_5((const float*)(buf8.data_ptr()), (at::BFloat16*)(buf9.data_ptr()), s12);
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cpu_mm_out(buf10, buf9, arg3_1));
    cpp_fused_silu_6((float*)(buf10.data_ptr()), s12);
"""
NODES = [{"node": {"target": "rowops::fused_add_rms_norm", "outputs": [
    {"as_tensor": {"name": "buf5"}}, {"as_tensor": {"name": "buf6"}},
    {"as_tensor": {"name": "buf7"}}]}}]


def test_cpp_wrapper_evidence_counts_copies_around_the_op():
    calls, copies, boundary = om.cpp_wrapper_evidence(CPP, NODES)
    assert calls == 1
    # the clone feeding it and the cast of its output (through a view)
    assert copies == 2
    assert boundary.split() == ["cpp_fused_clone", "cpp_fused__to_copy"]
    calls, copies, _ = om.cpp_wrapper_evidence(CPP.replace(
        "cpp_fused__to_copy_5", "cpp_fused_mul_5"), NODES)
    assert copies == 1
    # another extern node (not a rowops op) is not a rowops call
    other = [{"node": dict(NODES[0]["node"], target="aten::foo")}]
    assert om.cpp_wrapper_evidence(CPP, other) == (0, 0, "")


def test_models_of_shape_sets():
    models = om.load_models()
    assert models["llama-3.1-8b"]["hidden_size"] == 4096
    assert models["llama-3.1-8b"]["intermediate_size"] == 14336
    assert om.model_of("llama-3.1-8b-conv", models) == "llama-3.1-8b"
    assert om.model_of("llama-3.1-70b-code", models) == "llama-3.1-70b"
    assert om.model_of("gemma-2-2b-conv", models) is None
    assert om.model_of("edges", models) is None
    _, why = om.model_runner("model-rowops-eager", "float32",
                             [[(0, "float32", (1, 64), (64, 1))]], "edges")
    assert "no decoder config" in why
    _, why = om.model_runner("model-rowops-eager", "bfloat16",
                             [[(0, "bfloat16", (1, 64), (64, 1))]],
                             "llama-3.1-8b-conv")
    assert "N = 64 is not llama-3.1-8b's hidden size (4096)" in why
    _, why = om.model_runner("model-rowops-eager", "float32",
                             [[(0, "float32", (1, 4096), (4096, 1))]],
                             "llama-3.1-8b-conv")
    assert "llama-3.1-8b is published in bfloat16" in why
