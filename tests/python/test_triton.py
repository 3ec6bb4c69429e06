"""The Triton variant (rowops.triton): the kernel compiles offline to an
sm_90 cubin with no stack frame for every launch configuration the op
uses, its values match the float64 formula in Triton's CPU interpreter,
the triton_op passes opcheck's schema and fake checks (CPU samples: no
device needed), AOT tracing over fake CUDA tensors sees the Triton kernel
itself (what torch.compile gets), and on a GPU its values match the
float64 formula (skipped here)."""

import glob
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

triton = pytest.importorskip("triton")
import rowops.triton as rt  # noqa: E402
from samples import assert_matches_formula, make_sample, samples  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                          reason="no CUDA device on this machine")

# every block the op can pick (powers of two up to the one-pass maximum)
# and the two-pass form, in 16-bit and float32, with a float32 weight
OFFLINE = [(torch.bfloat16, n, None) for n in
           (1, 128, 512, 1024, 2048, 4096, 8192, 16384, 65536)] + [
    (torch.float32, 16384, None), (torch.float32, 32768, None),
    (torch.float16, 4096, torch.float32)]


def _cuobjdump():
    """The cuobjdump Triton's CUDA backend carries, or one on PATH."""
    found = glob.glob(os.path.join(os.path.dirname(triton.__file__),
                                   "backends", "nvidia", "bin", "cuobjdump"))
    if found:
        return found[0]
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if os.access(os.path.join(d, "cuobjdump"), os.X_OK):
            return os.path.join(d, "cuobjdump")
    return None


@pytest.mark.parametrize("dtype,n,wdtype", OFFLINE,
                         ids=[f"{str(d)[6:]}-N{n}" for d, n, _ in OFFLINE])
def test_compiles_offline_for_sm90(dtype, n, wdtype, tmp_path):
    kernel = rt.compile_offline(dtype, n, wdtype, arch=90)
    cubin = kernel.asm["cubin"]
    assert cubin[:4] == b"\x7fELF"
    assert ".target sm_90" in kernel.asm["ptx"]
    tool = _cuobjdump()
    if tool is None:
        pytest.skip("no cuobjdump to read the cubin's resources")
    path = tmp_path / "k.cubin"
    path.write_bytes(cubin)
    report = subprocess.run([tool, "--dump-resource-usage", str(path)],
                            capture_output=True, text=True, check=True).stdout
    m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", report)
    assert m, report
    regs, stack, shared, local = map(int, m.groups())
    threads = 32 * rt.config(n).num_warps
    assert (stack, local) == (0, 0), report
    assert regs * threads <= 65536 and shared <= 48 * 1024, report


QUICK = [s for s in samples("cpu", quick=True)
         if s.op == "fused_add_rms_norm"]


@pytest.mark.parametrize("sample", QUICK, ids=lambda s: s.name)
def test_opcheck_schema_and_fake(sample):
    torch.library.opcheck(
        torch.ops.rowops_triton.fused_add_rms_norm.default, sample.args,
        test_utils=("test_schema", "test_faketensor",
                    "test_aot_dispatch_dynamic"))


def test_cpu_values_are_the_contract():
    for sample in QUICK:
        assert_matches_formula(sample, rt.fused_add_rms_norm(*sample.args))


def test_errors_name_the_op():
    x = torch.randn(4, 8)
    with pytest.raises(ValueError, match="rowops.triton.fused_add_rms_norm: "
                       "weight must have shape"):
        rt.fused_add_rms_norm(x, x, torch.ones(7))
    with pytest.raises(TypeError, match="residual must have x's dtype"):
        rt.fused_add_rms_norm(x, x.half(), torch.ones(8))


def test_compile_traces_into_the_kernel():
    """AOTDispatcher (the part of torch.compile that hands Inductor its
    graph) over fake CUDA tensors: the graph holds the Triton kernel,
    not an opaque call of the op. No device is used."""
    from torch._functorch.aot_autograd import aot_function
    from torch._subclasses.fake_tensor import FakeTensorMode

    graphs = []

    def keep(gm, _):
        graphs.append(gm)
        return gm

    with FakeTensorMode():
        x = torch.empty(8, 4096, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(4096, dtype=torch.bfloat16, device="cuda")
        out = aot_function(lambda a, b, c: rt.fused_add_rms_norm(a, b, c)[0],
                           fw_compiler=keep)(x, x, w)
        assert out.shape == x.shape and out.device.type == "cuda"
    code = graphs[0].code
    assert "triton_kernel_wrapper" in code, code
    assert "rowops_triton" not in code, code


@pytest.mark.parametrize("passes", ["one", "two"])
def test_kernel_values_in_the_triton_interpreter(passes):
    """The kernel itself on the CPU (TRITON_INTERPRET=1), every layout,
    the one-pass or the two-pass form: tests/python/
    triton_interpreter_check.py. Exit 77 (skipped, with the reason): the
    interpreter cannot run a probe loop over a runtime bound, which is
    Triton's defect, not the kernel's."""
    script = Path(__file__).with_name("triton_interpreter_check.py")
    env = dict(os.environ, TRITON_INTERPRET="1")
    run = subprocess.run([sys.executable, str(script), passes], env=env,
                         capture_output=True, text=True, timeout=600)
    if run.returncode == 77:
        pytest.skip(run.stdout.strip().splitlines()[-1])
    assert run.returncode == 0, run.stdout + run.stderr
    assert "samples match the formula" in run.stdout


@cuda
@pytest.mark.parametrize("index", range(len(samples("cpu"))),
                         ids=[s.name for s in samples("cpu")])
def test_values_cuda(index):
    sample = samples("cuda")[index]
    if sample.op != "fused_add_rms_norm":
        pytest.skip("the Triton variant is the fused op")
    assert_matches_formula(sample, rt.fused_add_rms_norm(*sample.args))


@cuda
@pytest.mark.parametrize("n", [4096, 20000, 1 << 20])
def test_rstd_bound_cuda(n):
    x = torch.randn(4, n, device="cuda", dtype=torch.bfloat16)
    r = torch.randn_like(x)
    w = torch.ones(n, device="cuda", dtype=torch.bfloat16)
    _, h, rstd = rt.fused_add_rms_norm(x, r, w, 1e-6)
    exact = 1 / (h.double().square().mean(-1) + 1e-6).sqrt()
    assert ((rstd.double() / exact - 1).abs() <= 9 * 2.0**-24).all()
