"""opcost_model: the bench's model paths (bench/paths/model_*.c), the op
inside a real enclosing model: a stack of transformers' LlamaDecoderLayer
with the dimensions of the shape set's model
(shapes/models/decoders.csv), random weights, no download. One point's B
is the tokens of one forward (a sequence of B tokens, causal attention,
no cache).

Norms (the `model-<norm>-<mode>` paths):
  shipped     the layers as transformers ships them (LlamaRMSNorm and the
              layer's own residual adds);
  rowops      every residual add + norm pair through
              rowops.fused_add_rms_norm, the (hidden, residual) pattern of
              vLLM: one layer's MLP add meets the next layer's input norm;
              the first input norm through rowops.rms_norm_rows (times the
              norm's weight);
  torch       torch.nn.functional.rms_norm with the adds;
  decomposed  the rowops stack compiled with the rowops ops decomposed
              (rowops.boundary): Inductor fuses their aten references.
Each eager and under torch.compile (fullgraph, dynamic shapes, one graph
per norm and dtype for every B); shipped, rowops and torch also as an
AOTInductor package (mode aoti: torch.export with the tokens dynamic,
aoti_compile_and_package without the weights, which the package takes
from the stack at load; the rowops ops called through AOTInductor's proxy
executor, as a deployment runs them). Every path is verified against the
layers as shipped in float64 (the same weights, upcast) before timing."""

import contextlib
import csv
import math
import os
import re
import time

import torch
import torch.nn.functional as F

from rowops import _ops as _api

LAYERS = 2  # one layer's MLP residual add meets the next one's input norm
NORMS = ("shipped", "rowops", "torch", "decomposed", "vllm")
MODES = ("eager", "compiled", "aoti")
# Verification: the relative RMS error of the stack's output against the
# float64 stack of the same weights. bfloat16 keeps 8 bits: two layers of
# matmuls over 4096-14336 terms, each rounded, reach about 1e-2 as
# shipped; the bound leaves 3x. float16 and float32 scale with their
# epsilon (2^-11, 2^-24).
TOLERANCE = {torch.bfloat16: 3e-2, torch.float16: 4e-3,
             torch.float32: 2e-5, torch.float64: 1e-12}
_DTYPES = {"float32": torch.float32, "float16": torch.float16,
           "bfloat16": torch.bfloat16, "float64": torch.float64}
_MODELS_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           os.pardir, os.pardir, "shapes", "models",
                           "decoders.csv")


def load_models(path=_MODELS_CSV):
    """{model: its row of shapes/models/decoders.csv, numbers parsed}."""
    with open(path, newline="") as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        models = {}
        for r in rows:
            models[r["model"]] = dict(
                r, **{k: int(r[k]) for k in (
                    "hidden_size", "intermediate_size", "num_attention_heads",
                    "num_key_value_heads")},
                rms_norm_eps=float(r["rms_norm_eps"]),
                rope_theta=float(r["rope_theta"]))
    return models


def model_of(distribution, models=None):
    """The model a shape set belongs to (the longest name that starts the
    set's, then '-'), or None."""
    models = load_models() if models is None else models
    best = None
    for name in models:
        if distribution.startswith(name + "-") and \
                (best is None or len(name) > len(best)):
            best = name
    return best


def llama_config(model):
    """A transformers LlamaConfig of a shapes/models/decoders.csv row."""
    from transformers import LlamaConfig
    cfg = LlamaConfig(
        hidden_size=model["hidden_size"],
        intermediate_size=model["intermediate_size"],
        num_attention_heads=model["num_attention_heads"],
        num_key_value_heads=model["num_key_value_heads"],
        rms_norm_eps=model["rms_norm_eps"], rope_theta=model["rope_theta"],
        num_hidden_layers=LAYERS, max_position_embeddings=1 << 17)
    cfg._attn_implementation = "sdpa"
    return cfg


class Stack:
    """LAYERS decoder layers of one config in one dtype, no gradients, and
    the rotary tables. Weights: random from seed in bfloat16 (linear
    N(0, 0.02), norm weights N(1, 0.1) so that the weight multiply
    matters), or like another stack's, converted. exact: the stack whose
    weights this one's are without rounding (itself, or its source when
    the conversion is exact), so that one float64 stack verifies every
    dtype whose weights are the same numbers."""

    def __init__(self, config, dtype, seed=0, like=None, device="cpu"):
        from transformers.models.llama.modeling_llama import (
            LlamaDecoderLayer, LlamaRotaryEmbedding)
        self.config = config
        self.dtype = dtype
        self.device = torch.device(device)
        with torch.device("meta"):
            layers = torch.nn.ModuleList(
                [LlamaDecoderLayer(config, i) for i in range(LAYERS)])
        # allocated once, in dtype (not float32 first: 1.7 GB at 8B)
        self.layers = layers.to(dtype).to_empty(device=device).eval()
        self.layers.requires_grad_(False)
        if like is None:
            g = torch.Generator().manual_seed(seed)
            for name, p in self.layers.named_parameters():
                if name.endswith("layernorm.weight"):
                    p.normal_(1.0, 0.1, generator=g)
                else:
                    p.normal_(0.0, 0.02, generator=g)
        else:
            for name, p in self.layers.named_parameters():
                p.copy_(like.layers.get_parameter(name))
        # the same dtype, or bfloat16 -> float32 or float64, is exact;
        # anything else may round
        exact_from = like is not None and (like.dtype == dtype or (
            like.dtype == torch.bfloat16 and
            dtype in (torch.float32, torch.float64)))
        self.exact = like.exact if exact_from else self
        self.rope = LlamaRotaryEmbedding(config)
        self.eps = config.rms_norm_eps

    def rotary(self, tokens):
        """(cos, sin) for positions 0 .. tokens - 1, in the stack's dtype."""
        probe = torch.empty(1, tokens, self.config.hidden_size,
                            dtype=self.dtype, device=self.device)
        self.rope.to(self.device)
        return self.rope(probe, torch.arange(
            tokens, device=self.device).unsqueeze(0))


# ---- the stacks: fn(h, cos, sin) -> the last layer's output, h [1, B, N]

def _shipped(layers):
    def stack(h, cos, sin):
        for layer in layers:
            h = layer(h, position_embeddings=(cos, sin))
        return h
    return stack


def _rows(t):
    return t.reshape(-1, t.shape[-1])


def _rowops_first(h, norm):
    y, _ = _api.rms_norm_rows(_rows(h), norm.variance_epsilon)
    return norm.weight * y.view(h.shape)


def _rowops_add_norm(x, residual, norm):
    out, h, _ = _api.fused_add_rms_norm(_rows(x), _rows(residual),
                                        norm.weight, norm.variance_epsilon)
    return out.view(x.shape), h.view(x.shape)


def _vllm_first(h, norm):
    out = torch.empty_like(h)
    torch.ops._C.rms_norm(out, h, norm.weight, norm.variance_epsilon)
    return out


def _vllm_add_norm(x, residual, norm):
    # in place, as vLLM's layers call it: x becomes the norm's output and
    # residual the new residual stream
    torch.ops._C.fused_add_rms_norm(x, residual, norm.weight,
                                    norm.variance_epsilon)
    return x, residual


def _vllm_stack(layers, mark):
    """vLLM's ops in the (hidden, residual) stack; the residual stream
    starts as a copy of h, which vLLM's first add + norm would overwrite
    (the caller's h stays the set's input)."""
    inner = _paired(layers, _vllm_first, _vllm_add_norm, mark)

    def stack(h, cos, sin):
        return inner(h.clone(), cos, sin)
    return stack


def _torch_first(h, norm):
    return F.rms_norm(h, (h.shape[-1],), norm.weight, norm.variance_epsilon)


def _torch_add_norm(x, residual, norm):
    h = residual + x
    return _torch_first(h, norm), h


def _paired(layers, first, add_norm, mark):
    """The (hidden, residual) stack: each residual add + norm one call of
    add_norm; mark(what) scopes a norm for the norm-share pass (a no-op
    while timing)."""
    def stack(h, cos, sin):
        pe = (cos, sin)
        residual = h
        with mark():
            x = first(h, layers[0].input_layernorm)
        for i, layer in enumerate(layers):
            a, _ = layer.self_attn(x, position_embeddings=pe,
                                   attention_mask=None)
            with mark():
                x, residual = add_norm(a, residual,
                                       layer.post_attention_layernorm)
            m = layer.mlp(x)
            if i + 1 == len(layers):
                return residual + m
            with mark():
                x, residual = add_norm(m, residual,
                                       layers[i + 1].input_layernorm)
    return stack


_NORM_SCOPE = "opcost.model.norm"
# the ops' own scopes (their kernels' scopes nest inside)
_ROWOPS_SCOPES = ("rowops::fused_add_rms_norm", "rowops::rms_norm_rows")
_CALL_SCOPE = "opcost.model.call"


@contextlib.contextmanager
def _quiet_stderr():
    """Kineto writes a line to the process's stderr at every profiler start
    and stop (and one about GPUs on a machine without): those are dropped,
    anything else it wrote is passed on."""
    import sys
    import tempfile
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            log.seek(0)
            for line in log.read().decode(errors="replace").splitlines():
                if not re.match(r"(USDT|ERROR):.*(profiler_st|"
                                r"gpuGetDeviceCount)", line):
                    print(line, file=sys.stderr)


class _Marker:
    """mark(): a RecordFunction scope around a norm while the norm-share
    pass runs, nothing otherwise (eager stacks only: compiled ones get
    the no-op at trace time)."""

    def __init__(self):
        self.on = False

    def __call__(self):
        if self.on:
            return torch.profiler.record_function(_NORM_SCOPE)
        return contextlib.nullcontext()


def _no_mark():
    return contextlib.nullcontext()


def stack_fn(stack, norm, mark=_no_mark):
    """The stack's forward with norm's implementation (decomposed: the
    rowops stack; the compile backend decomposes it)."""
    if norm == "shipped":
        return _shipped(stack.layers)
    if norm in ("rowops", "decomposed"):
        return _paired(stack.layers, _rowops_first, _rowops_add_norm, mark)
    if norm == "torch":
        return _paired(stack.layers, _torch_first, _torch_add_norm, mark)
    if norm == "vllm":
        return _vllm_stack(stack.layers, mark)
    raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")


# ---- what the compiler did: read from Inductor's output code

_OP_CALL = re.compile(r"^\s*(\w+) = torch\.ops\.rowops\.(\w+)\.default\("
                      r"(.*)\)\s*$")
# a generated kernel's call, an extern kernel's (out= its output), an aten
# op's (its result assigned)
_KERNEL_CALL = re.compile(
    r"^\s*(?:(\w+) = )?(cpp_fused_\w+|triton_\w+|extern_kernels\.\w+|"
    r"torch\.ops\.aten\.\w+)(?:\.default|\.run)?\((.*)\)\s*(?:#.*)?$")
# a tuple item or a view of an earlier buffer
_ALIAS = re.compile(r"^\s*(\w+) = (?:(\w+)\[\d+\]|reinterpret_tensor\("
                    r"(\w+),.*)\s*$")
_NAME = re.compile(r"\b(?:buf\d+|arg\d+_\d+|primals_\d+)\b")
# generated kernels and aten ops that only move or convert data
_COPY = re.compile(r"clone|copy|convert_element_type|contiguous")
# Inductor's own norm kernels are named after what they fused: an rsqrt
# (transformers' and F.rms_norm's decomposition) or the rowops op they
# decomposed
_NORM_KERNEL = re.compile(r"rsqrt|rms_norm")


def _strip(kernel):
    return re.sub(r"^graph_\d+_|_\d+$", "", kernel)


def code_evidence(codes):
    """From Inductor's output code (the wrapper of each graph): the rowops
    calls in it; of the kernels next to them (reading a rowops call's
    inputs or its outputs), those that only copy or cast; and the fusion
    boundary: those kernels by name (generated, extern such as mm, aten
    ops), or without rowops calls the generated kernels that compute a
    norm, named after what Inductor fused into them."""
    op_calls, copies, boundary = 0, 0, []
    for code in codes:
        lines = code.splitlines()
        inputs, outputs = set(), set()
        for line in lines:
            m = _OP_CALL.match(line)
            if m:
                op_calls += 1
                inputs |= set(_NAME.findall(m.group(3)))
                outputs.add(m.group(1))
                continue
            a = _ALIAS.match(line)
            if a and (a.group(2) or a.group(3)) in outputs:
                outputs.add(a.group(1))  # views of an output, after it
        kernels = []
        for line in lines:
            k = _KERNEL_CALL.match(line)
            if k:
                kernels.append((k.group(2).split(".")[-1], set(
                    _NAME.findall(k.group(3))) | {k.group(1)}))
        copies += _next_to(kernels, inputs | outputs, boundary)
    return op_calls, copies, _names_once(boundary)


def _next_to(kernels, touched, boundary):
    """Of kernels ((name, the buffers it names) in code order), those that
    read or write a rowops call's tensors (touched) join boundary, or
    without rowops calls those that compute a norm; returns how many of
    the first kind only copy or cast."""
    copies = 0
    for name, names in kernels:
        if touched and names & touched:
            boundary.append(name)
            copies += bool(_COPY.search(name))
        elif not touched and _NORM_KERNEL.search(name):
            boundary.append(name)
    return copies


def _names_once(boundary):
    seen, names = set(), []
    for k in map(_strip, boundary):
        if k not in seen:
            seen.add(k)
            names.append(k)
    return " ".join(names)


# AOTInductor's C++ wrapper (mode aoti): a rowops call goes through the
# proxy executor (its extern node's index; the node's outputs in the
# package's wrapper.json), generated kernels are called by name, aten
# fallbacks as aoti_torch_<device>_<op>, and a view of a buffer is a new
# name over reinterpret_tensor_wrapper.
_CPP_OP_CALL = re.compile(
    r"aoti_torch_proxy_executor_call_function\(proxy_executor, (\d+), "
    r".*\{(.*)\}\.data\(\)\)\);")
_CPP_KERNEL_CALL = re.compile(
    r"^\s*(?:AOTI_TORCH_ERROR_CODE_CHECK\()?(cpp_fused_\w+|triton_\w+|"
    r"aoti_torch_(?:cpu|cuda)_\w+)\((.*)\);\s*$")
_CPP_ALIAS = re.compile(
    r"^\s*auto (buf\d+) = .*reinterpret_tensor_wrapper\((buf\d+),")


def cpp_wrapper_evidence(code, nodes):
    """code_evidence for an AOTInductor package: from its C++ wrapper and
    its extern nodes (wrapper.json's "nodes": target and outputs), the
    rowops calls, the copies or casts next to them and the fusion
    boundary, as code_evidence counts them."""
    op_calls, boundary = 0, []
    lines = code.splitlines()
    inputs, outputs = set(), set()
    for line in lines:
        m = _CPP_OP_CALL.search(line)
        if m:
            node = nodes[int(m.group(1))]
            if not node["node"]["target"].startswith("rowops::"):
                continue
            op_calls += 1
            outs = {o["as_tensor"]["name"] for o in node["node"]["outputs"]}
            outputs |= outs
            inputs |= set(_NAME.findall(m.group(2))) - outs
            continue
        a = _CPP_ALIAS.match(line)
        if a and a.group(2) in outputs:
            outputs.add(a.group(1))
    kernels = []
    for line in lines:
        k = _CPP_KERNEL_CALL.match(line)
        if k:
            kernels.append((re.sub(r"^aoti_torch_(?:cpu|cuda)_", "",
                                   k.group(1)), set(_NAME.findall(k.group(2)))))
    copies = _next_to(kernels, inputs | outputs, boundary)
    return op_calls, copies, _names_once(boundary)


def package_evidence(path):
    """cpp_wrapper_evidence of the AOTInductor package at path."""
    import json
    import zipfile
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        cpp = [n for n in names if n.endswith(".wrapper.cpp")]
        js = [n for n in names if n.endswith(".wrapper.json")]
        code = z.read(cpp[0]).decode() if cpp else ""
        nodes = json.loads(z.read(js[0]))["nodes"] if js else []
    return cpp_wrapper_evidence(code, nodes)


class _Captured:
    """A compile backend that keeps Inductor's output code of each graph
    it compiles (also when it comes from the compile cache)."""

    def __init__(self, inner):
        self.inner = inner
        self.codes = []

    @property
    def compiles(self):
        return self.inner.compiles

    def __call__(self, gm, example_inputs):
        from unittest import mock
        from torch._inductor.graph import GraphLowering
        with mock.patch.object(GraphLowering, "save_output_code",
                               self.codes.append):
            return self.inner(gm, example_inputs)


def graph_breaks_counted():
    """Dynamo's count of graph breaks so far in this process (its
    counters; a fullgraph compile raises at a break instead of splitting
    the graph, after counting it)."""
    from torch._dynamo.utils import counters
    return sum(counters["graph_break"].values())


# ---- one (model, dtype)'s stacks, callables and float64 reference,
# shared by the points and paths of a run

_STACKS = {}
_CALLABLES = {}
_REFERENCE = {}  # the float64 stack of the dtype last verified
# what a pilot of the time budget compiled (model_runner(pilot=True)), by
# (callable key, one token): (ms, graph breaks), reported by the first
# point of that class as its own compile
_PILOT_COMPILES = {}


def stack_for(model_name, model, dtype, config=None, device="cpu"):
    """The stack of (model, dtype, device): its weights are those of the
    model's bfloat16 stack on the CPU (made first, from the seed),
    converted, in every dtype and on every device."""
    key = (model_name, dtype, str(device))
    if key not in _STACKS:
        master = (model_name, torch.bfloat16, "cpu")
        if master not in _STACKS:
            _STACKS[master] = Stack(config or llama_config(model),
                                    torch.bfloat16)
        if key != master:
            _STACKS[key] = Stack(_STACKS[master].config, dtype,
                                 like=_STACKS[master], device=device)
    return _STACKS[key]


def _own_code(fn):
    """fn with a code object of its own: Dynamo keeps its graphs (and
    counts recompilations against its limit) per code object, which every
    closure of one def shares."""
    import types
    return types.FunctionType(fn.__code__.replace(), fn.__globals__,
                              fn.__name__, fn.__defaults__, fn.__closure__)


class _Aoti:
    """An AOTInductor runner as the stack's fn; its build time is reported
    by the first point that uses it."""

    def __init__(self, runner, build_ms, path):
        self.runner, self.build_ms, self.path = runner, build_ms, path
        self.reported = False

    def __call__(self, h, cos, sin):
        return self.runner(h, cos, sin)


def _callable(key, stack, norm, mode):
    """(fn, backend or None, marker or None), one per (stack, norm, mode):
    compiled ones compile once for every B (dynamic shapes), aoti ones
    build one package for every B."""
    if key in _CALLABLES:
        return _CALLABLES[key]
    if mode == "eager":
        marker = _Marker()
        entry = (stack_fn(stack, norm, marker), None, marker)
    elif mode == "aoti":
        entry = (_Aoti(*aoti_stack(stack, norm)), None, None)
    else:
        from opcost_bench import _Inductor
        backend = _Captured(_Inductor(decompose=norm == "decomposed"))
        fn = torch.compile(_own_code(stack_fn(stack, norm)), backend=backend,
                           dynamic=True, fullgraph=True)
        entry = (fn, backend, None)
    _CALLABLES[key] = entry
    return entry


class _StackModule(torch.nn.Module):
    """A stack's forward with one norm as a module whose parameters are
    the stack's layers' (their names are the package's constants)."""

    def __init__(self, stack, norm):
        super().__init__()
        self.layers = stack.layers
        self._forward = stack_fn(stack, norm)

    def forward(self, h, cos, sin):
        return self._forward(h, cos, sin)


def _aoti_path(stack, norm):
    """The stack's package in opcost_bench.cache_dir("aoti"),
    named after what its code depends on: this file and rowops' Python
    package (traced into the graph), the config, dtype, device, torch and
    transformers (not the weights: the package has none)."""
    import glob
    import hashlib
    import json

    import rowops
    import transformers
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(rowops.__file__))
    for f in [__file__] + sorted(glob.glob(os.path.join(here, "*.py"))):
        with open(f, "rb") as src:
            h.update(src.read())
    h.update(json.dumps(stack.config.to_dict(), sort_keys=True,
                        default=str).encode())
    h.update(f"{torch.__version__} {transformers.__version__}".encode())
    from opcost_bench import cache_dir
    dtype = str(stack.dtype).replace("torch.", "")
    return cache_dir("aoti", f"model-{norm}-{dtype}-"
                     f"{stack.device.type}-{h.hexdigest()[:16]}.pt2")


def aoti_configs(device_type):
    """Inductor's options for a stack's package on device_type: as the
    compiled paths' Inductor (opcost_bench._Inductor), rounding as eager
    does, and on the CPU a profiler scope in each C++ kernel (the
    attribution pass's compute). Not on a GPU: CUPTI times its kernels
    there. With the scopes, this stack's package failed to compile on an
    H200 with torch 2.11 (2026-12-04), where a package of a small model
    without them compiled: the scopes' CUDA wrapper code is the suspect,
    not yet confirmed there."""
    configs = {"aot_inductor.package_constants_in_so": False,
               "emulate_precision_casts": True}
    if device_type == "cpu":
        configs["cpp.enable_kernel_profile"] = True
    return configs


def _build_stack_package(stack, module, path):
    """aoti_stack's build: the stack exported with the tokens dynamic and
    compiled into path (without its weights); its milliseconds."""
    tokens = torch.export.Dim("tokens", min=1, max=1 << 17)
    h = torch.zeros(1, 8, stack.config.hidden_size, dtype=stack.dtype,
                    device=stack.device)
    cos, sin = stack.rotary(8)
    start = time.perf_counter()
    ep = torch.export.export(module, (h, cos, sin),
                             dynamic_shapes=({1: tokens},) * 3)
    tmp = f"{path[:-4]}.tmp{os.getpid()}.pt2"
    with _quiet_stderr():
        torch._inductor.aoti_compile_and_package(
            ep, package_path=tmp,
            inductor_configs=aoti_configs(stack.device.type))
    os.replace(tmp, path)  # atomic: a concurrent run never sees half
    return (time.perf_counter() - start) * 1e3


def aoti_stack(stack, norm):
    """(runner, build_ms, path): the stack with norm as an AOTInductor
    package, dynamic in the tokens, built once (build_ms NaN when it came
    from the cache) without its weights; the runner takes the stack's own
    tensors as its constants (no copy)."""
    path = _aoti_path(stack, norm)
    module = _StackModule(stack, norm)
    build_ms = float("nan")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        from opcost_bench import build_lock
        with build_lock(path):
            if not os.path.exists(path):  # built while this one waited
                build_ms = _build_stack_package(stack, module, path)
    runner = torch._inductor.aoti_load_package(path)
    named = dict(module.named_parameters())
    named.update(module.named_buffers())
    wanted = runner.get_constant_fqns()
    missing = [f for f in wanted if f not in named]
    if missing:
        raise RuntimeError(f"the package {path} wants constants the stack "
                           f"does not have: {missing[:3]}")
    runner.load_constants({f: named[f] for f in wanted},
                          check_full_update=True, user_managed=True)
    return runner, build_ms, path


def _reference64(stack, h):
    """The float64 stack as shipped on h (one float64 stack kept: that of
    stack's exact weights, shared by the dtypes that hold them; its
    outputs kept per input)."""
    if _REFERENCE.get("of") is not stack.exact or \
            _REFERENCE.get("device") != h.device:
        _REFERENCE.clear()
        _REFERENCE.update(of=stack.exact, device=h.device, outputs={},
                          stack=Stack(stack.config, torch.float64,
                                      like=stack.exact, device=h.device))
    ref, outputs = _REFERENCE["stack"], _REFERENCE["outputs"]
    key = (h.data_ptr(), h.dtype, tuple(h.shape))
    kept = outputs.get(key)
    if kept is None or not torch.equal(kept[0], h):  # memory reused
        cos, sin = ref.rotary(h.shape[1])
        kept = outputs[key] = (h.clone(), _shipped(ref.layers)(
            h.to(torch.float64), cos, sin))
    return kept[1]


def relative_error(got, want):
    """||got - want|| / ||want|| in float64, and the worst element's index,
    got and want."""
    got64 = got.detach().to(torch.float64)
    diff = (got64 - want).abs()
    rel = (diff.square().sum() / want.square().sum().clamp_min(1e-300)
           ).sqrt().item()
    worst = int(diff.flatten().argmax())
    return rel, tuple(int(i) for i in _unravel(worst, want.shape)), \
        got64.flatten()[worst].item(), want.flatten()[worst].item()


def _unravel(i, shape):
    out = []
    for s in reversed(shape):
        out.append(i % s)
        i //= s
    return tuple(reversed(out))


class ModelRunner:
    """One model path at one point: fn and one argument tuple per input
    set (h: the set's x as [1, B, N], the rotary tables), as
    opcost_bench.Runner; verify(set, result) against the float64 stack;
    evidence() after timing."""

    def __init__(self, path, dtype, sets, model_name, model, config=None,
                 pilot=False):
        _, norm, mode = path.split("-")
        if norm not in NORMS or mode not in MODES:
            raise ValueError(f"unknown model path {path!r}")
        if norm == "decomposed" and mode != "compiled":
            raise ValueError(f"model-decomposed-{mode}: the decomposed "
                             "boundary exists only under torch.compile")
        if norm == "vllm" and mode != "eager":
            raise ValueError(f"model-vllm-{mode}: vLLM's ops are timed "
                             "eager only")
        from opcost_bench import wrap
        self.path, self.norm, self.mode = path, norm, mode
        self.dt = _DTYPES[dtype]
        self.args = []
        tokens = None
        hidden = (config.hidden_size if config is not None
                  else model["hidden_size"])
        for s in sets:
            x = wrap(*s[0])  # x [B, N], contiguous, on the run's device
            tokens = x.shape[0]
            if x.shape[1] != hidden:  # a narrower model than the point's
                x = x[:, :hidden].contiguous()
            self.args.append([x.view(1, *x.shape)])
        self.narrowed_from = None
        self.device = self.args[0][0].device
        self.stack = stack_for(model_name, model, self.dt, config,
                               self.device)
        self.model_name = model_name
        cos, sin = self.stack.rotary(tokens)
        for a in self.args:
            a.extend((cos, sin))
        self.args = [tuple(a) for a in self.args]
        self.tokens = tokens
        key = (model_name, self.dt, str(self.device), norm, mode)
        self.fn, self._backend, self._marker = _callable(
            key, self.stack, norm, mode)
        self.compile_ms = float("nan")
        self.compiled_first = False
        self.compiled_by_pilot = False
        self.breaks = None
        if mode == "compiled":
            before = self._backend.compiles
            breaks = graph_breaks_counted()
            start = time.perf_counter()
            self.fn(*self.args[0])
            elapsed = (time.perf_counter() - start) * 1e3
            self.breaks = graph_breaks_counted() - breaks
            self.compiled_first = self._backend.compiles > before
            if self.compiled_first:
                self.compile_ms = elapsed
            cls = (key, tokens == 1)
            if self.compiled_first and pilot:
                _PILOT_COMPILES[cls] = (elapsed, self.breaks)
            elif not self.compiled_first and cls in _PILOT_COMPILES:
                # the pilot's compile was this point's graph
                self.compile_ms, self.breaks = _PILOT_COMPILES.pop(cls)
                self.compiled_first = self.compiled_by_pilot = True
        elif mode == "aoti":
            self.breaks = 0  # torch.export makes one graph or fails
            if not self.fn.reported:  # the package's first point
                self.fn.reported = True
                self.compiled_first = True
                self.compile_ms = self.fn.build_ms  # NaN: from the cache
        self._baseline = self._graphs()
        self.verified = None

    def _graphs(self):
        return self._backend.compiles if self._backend is not None else 0

    def recompiles(self):
        return self._graphs() - self._baseline

    def timing_begins(self):
        self._baseline = self._graphs()

    def verify(self, set_index, result):
        """None when the output is within TOLERANCE of the float64 stack's
        on the same input; else why."""
        want = _reference64(self.stack, self.args[set_index][0])
        rel, where, got, expected = relative_error(result, want)
        tol = TOLERANCE[self.dt]
        self.verified = (rel, tol)
        if math.isfinite(rel) and rel <= tol:
            return None
        return (f"output off the float64 stack as shipped by {rel:.3g} "
                f"relative (tolerance {tol:g}); worst element {list(where)}:"
                f" {got:.6g}, expected {expected:.6g}")

    def norm_share(self, calls=3):
        """The norm's share of a call, from a profiled pass (not timed):
        eager, the time inside RecordFunction scopes around each norm
        (the shipped LlamaRMSNorm modules by forward hooks; the others'
        norm calls, residual adds included); compiled and aoti, the time of the
        rowops calls and of the generated kernels that compute an rsqrt
        (which hold whatever Inductor fused with the norm). NaN on a GPU,
        where these CPU-side scopes do not time the kernels."""
        from torch.profiler import ProfilerActivity, profile, record_function
        if self.device.type != "cpu":
            return float("nan")  # CPU scopes do not time GPU kernels
        hooks = []
        if self.mode == "eager":
            if self.norm == "shipped":
                hooks = self._hook_norms()
            else:
                self._marker.on = True
        try:
            with _quiet_stderr(), \
                    profile(activities=[ProfilerActivity.CPU]) as prof:
                for i in range(calls):
                    with record_function(_CALL_SCOPE):
                        self.fn(*self.args[i % len(self.args)])
        finally:
            for h in hooks:
                h.remove()
            if self._marker is not None:
                self._marker.on = False
        total = norm = 0.0
        for e in prof.events():
            us = e.cpu_time_total
            if e.name == _CALL_SCOPE:
                total += us
            elif e.name == _NORM_SCOPE or (self.mode != "eager" and (
                    e.name in _ROWOPS_SCOPES or (
                        "cpp_fused" in e.name and
                        _NORM_KERNEL.search(e.name)))):
                norm += us
        return norm / total if total > 0 else float("nan")

    def _hook_norms(self):
        from torch.profiler import record_function
        handles = []
        for layer in self.stack.layers:
            for norm in (layer.input_layernorm,
                         layer.post_attention_layernorm):
                scope = {}

                def pre(mod, args, scope=scope):
                    scope["rf"] = record_function(_NORM_SCOPE)
                    scope["rf"].__enter__()

                def post(mod, args, out, scope=scope):
                    scope.pop("rf").__exit__(None, None, None)
                handles.append(norm.register_forward_pre_hook(pre))
                handles.append(norm.register_forward_hook(post))
        return handles

    def evidence(self):
        """{norm_share, graph_breaks, op_calls, copies_around,
        fusion_boundary} (the compiler's only for compiled paths)."""
        out = {"norm_share": self.norm_share()}
        if self.mode == "compiled":
            # this point's compile (0 when its graph was reused)
            out["graph_breaks"] = self.breaks
            codes = self._backend.codes[-1:]
            calls, copies, boundary = code_evidence(codes)
            out.update(op_calls=calls, copies_around=copies,
                       fusion_boundary=boundary)
        elif self.mode == "aoti":
            out["graph_breaks"] = self.breaks
            calls, copies, boundary = package_evidence(self.fn.path)
            out.update(op_calls=calls, copies_around=copies,
                       fusion_boundary=boundary)
        return out

    def note(self):
        if self.verified is None:
            return ""
        rel, tol = self.verified
        narrowed = ""
        if self.narrowed_from:
            narrowed = (f" (in place of {self.narrowed_from}'s stack, "
                        "which the time budget could not give a verdict: "
                        f"the first {self.stack.config.hidden_size} of the "
                        "point's columns as its hidden states)")
        return (f"{LAYERS} x transformers LlamaDecoderLayer of "
                f"{self.model_name}{narrowed}, {self.tokens} token"
                f"{'s' if self.tokens != 1 else ''} per forward; output "
                f"{rel:.2g} from float64 as shipped (tolerance {tol:g})")


def model_runner(path, dtype, sets, distribution, all_dtypes=False,
                 narrow=None, pilot=False):
    """(ModelRunner, None), or (None, why) when the shape set has no model
    here, or (unless all_dtypes) dtype is not the one the model is
    published in. narrow: a model of shapes/models/decoders.csv timed in
    place of the set's own (the run's time budget chose it), on the first
    of the point's columns. pilot: the time budget's pilot (what it
    compiles, the first point of its class reports)."""
    models = load_models()
    name = model_of(distribution, models)
    if name is None:
        return None, (f"shape set {distribution!r} has no decoder config "
                      f"in shapes/models/decoders.csv ({', '.join(models)})")
    published = models[name]["torch_dtype"]
    if not all_dtypes and dtype != published:
        return None, (f"{name} is published in {published} (its "
                      f"config.json's torch_dtype); --model-dtypes all "
                      f"times its stack in {dtype} too")
    hidden = sets[0][0][2][-1]  # x's last size
    if hidden != models[name]["hidden_size"]:
        return None, (f"N = {hidden} is not {name}'s hidden size "
                      f"({models[name]['hidden_size']})")
    if path.split("-")[1] == "vllm":
        # vLLM's ops where the peer path finds them (opcost_peers)
        import opcost_peers
        spec = sets[0][0]  # (address, dtype, sizes, strides[, device])
        device = spec[4] if len(spec) > 4 else "cpu"
        why = opcost_peers.unavailable(
            "peer-vllm", "fused_add_rms_norm", dtype, dtype, hidden, device)
        if why:
            return None, f"vLLM's ops: {why}"
    if narrow:
        if narrow not in models or models[narrow]["hidden_size"] > hidden:
            return None, (f"no model {narrow!r} narrower than N = {hidden} "
                          "in shapes/models/decoders.csv")
        runner = ModelRunner(path, dtype, sets, narrow, models[narrow],
                             pilot=pilot)
        runner.narrowed_from = name
        return runner, None
    return ModelRunner(path, dtype, sets, name, models[name],
                       pilot=pilot), None


def stack_call_seconds(distribution, dtype, tokens, narrow=None, calls=3):
    """The time one call of the stack as shipped, eager, takes at `tokens`
    tokens (the median of `calls` after one untimed), for the time budget's
    plan (bench/measure/budget.h): the set's own model, or narrow. The
    stack is the one the model paths use (built once, kept). NaN when the
    set has no model."""
    models = load_models()
    name = narrow or model_of(distribution, models)
    if name is None or name not in models:
        return float("nan")
    stack = stack_for(name, models[name], _DTYPES[dtype])
    fn = _shipped(stack.layers)
    h = torch.randn(1, tokens, stack.config.hidden_size,
                    generator=torch.Generator().manual_seed(0)).to(stack.dtype)
    cos, sin = stack.rotary(tokens)
    times = []
    for i in range(calls + 1):
        start = time.perf_counter()
        fn(h, cos, sin)
        if i:
            times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]
