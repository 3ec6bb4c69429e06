"""opcost_peers: the kernels a user would pick instead of rowops' (the
peer-* paths), loaded by path from the peers' directory that
scripts/setup-peers.sh fills from python/peers.lock, never vendored.

Each peer is in place, as its library ships it. peer-X times the
functional form, as rowops' op is: contiguous copies of x and residual
(the copies a caller needs to keep its inputs, and the layout the peers
require) and then the peer on them (the copies are aten::clone records,
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

    def __init__(self):
        self.label = ""

    def load(self):
        if hasattr(torch.ops._C, "fused_add_rms_norm"):
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

    def __init__(self):
        self.label = ""

    def load(self):
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


PEERS = {"peer-vllm": _Vllm(), "peer-zentorch": _Zentorch()}
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
    if device != "cpu":
        return f"{path} runs on the CPU only here"
    if dtype not in peer.dtypes:
        return f"{path} has no {dtype} kernel ({', '.join(peer.dtypes)})"
    if path not in _LOADED:
        _LOADED[path] = peer.load()
    return _LOADED[path] or peer.unfit(op, dtype, n, weight_dtype)


def label(path):
    """What the row's dispatch_path says ran."""
    return PEERS[_base(path)].label or path


def inplace(path):
    """The peer in place on the caller's tensors (the sets' own copies,
    opcost_bench.Runner), outputs as the functional op's. The peers write
    contiguous rows only: on another layout (a transposed x and residual)
    the call is what a caller has to write, contiguous copies, the peer on
    them and the results copied back (aten::contiguous and aten::copy_,
    attributed as conversion)."""
    peer = PEERS[_base(path)]

    def call(x, residual, weight, eps):
        if x.is_contiguous() and residual.is_contiguous():
            peer.fused(x, residual, weight, eps)
        else:
            xc, rc = x.contiguous(), residual.contiguous()
            peer.fused(xc, rc, weight, eps)
            residual.copy_(rc)
            x.copy_(xc)
        return x, residual, None
    return call


def functional(path, op):
    """The peer as the functional op: contiguous copies (x, residual) and
    the peer in place on them; outputs as rowops' (out, residual_out, rstd)
    or (y, rstd), with None for the scale no peer returns."""
    peer = PEERS[path]
    if op == "fused_add_rms_norm":
        def call(x, residual, weight, eps):
            out = x.clone(memory_format=torch.contiguous_format)
            h = residual.clone(memory_format=torch.contiguous_format)
            peer.fused(out, h, weight, eps)
            return out, h, None
    else:
        def call(x, eps):
            xc = x.contiguous()
            out = torch.empty_like(xc)
            peer.rows(out, xc, eps)
            return out, None
    return call
