"""The Python side of the opcost benchmark's Python paths (bench/paths/
python_route.c). The C driver embeds the interpreter, builds a Runner per
(path, point) and then calls ``runner.fn(*runner.args[i])`` itself through
the Python C API: the timed region is that call, as a Python user makes it.

Tensors are views of the C driver's memory (no copy): each set's x,
residual and weight arrive as (address, dtype, sizes, strides)."""

import ctypes
import logging
import os
import time

import torch

from . import boundary, reference

# Inductor's C++ builds warn once that no CUDA runtime exists: noise here.
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)

_DTYPES = {"float32": torch.float32, "float16": torch.float16,
           "bfloat16": torch.bfloat16, "float64": torch.float64}
_OPS = {"rms_norm_rows": torch.ops.rowops.rms_norm_rows,
        "fused_add_rms_norm": torch.ops.rowops.fused_add_rms_norm}
_REFERENCE = {"rms_norm_rows": reference.rms_norm_rows,
              "fused_add_rms_norm": reference.fused_add_rms_norm}
_OP_REF = {"rms_norm_rows": torch.ops.rowops.rms_norm_rows_reference,
           "fused_add_rms_norm": torch.ops.rowops.fused_add_rms_norm_reference}


def wrap(address, dtype, sizes, strides):
    """A tensor viewing C memory: element [0, ..., 0] at address."""
    dt = _DTYPES[dtype]
    item = torch.empty((), dtype=dt).element_size()
    span = 1 + sum((s - 1) * st for s, st in zip(sizes, strides)) \
        if all(s > 0 for s in sizes) else 0
    buf = (ctypes.c_char * max(span * item, 1)).from_address(address)
    flat = torch.frombuffer(buf, dtype=torch.uint8).view(dt)
    return flat.as_strided(tuple(sizes), tuple(strides))


def describe(outputs):
    """(address, dtype, sizes, strides) of each output tensor."""
    names = {v: k for k, v in _DTYPES.items()}
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    return [(t.data_ptr(), names[t.dtype], tuple(t.shape), tuple(t.stride()))
            for t in outputs]


# Compiled callables shared by the points of one (kind, op, dtype, layout,
# N) with dynamic shapes: a deployment compiles once per model, not once
# per batch size. Each has its own code object (its own Dynamo cache) and
# its own backend (which counts its compilations).
_COMPILED = {}


class _Inductor:
    """Inductor as a torch.compile backend, optionally decomposing the
    rowops ops, counting the graphs it compiles (recompilations show).
    Inductor by default keeps h = x + residual in float32 inside a fused
    kernel, while the contract (and eager) rounds h to x's dtype before the
    reduction; emulate_precision_casts makes the generated code round as
    eager does, so every compiled path computes the same function."""

    def __init__(self, decompose):
        self.compiles = 0
        self.table = None
        if decompose:
            from torch._inductor.decomposition import select_decomp_table
            self.table = {**select_decomp_table(), **boundary.decompositions()}

    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx
        self.compiles += 1
        # The compile caches do not key on a custom decomposition table: a
        # decomposed graph must not reuse the opaque graph's artefacts.
        uncached = {"fx_graph_cache": False} if self.table else {}
        with torch._inductor.config.patch(emulate_precision_casts=True,
                                          **uncached), \
                torch._functorch.config.patch(
                    enable_autograd_cache=not self.table):
            return compile_fx(gm, example_inputs, decompositions=self.table)


def _compiled(kind, op, dtype, layout, n, eps):
    key = (kind, op, dtype, layout, n, eps)
    if key not in _COMPILED:
        decompose = kind == "compiled-python-decomposed"
        target = _OP_REF[op] if kind == "compiled-python-reference" \
            else _OPS[op]
        backend = _Inductor(decompose)

        # A fresh code object per key, so each has its own Dynamo cache;
        # the signature a user's function has (eps a constant).
        name = f"norm_{len(_COMPILED)}"
        params = "x" if op == "rms_norm_rows" else "x, residual, weight"
        namespace = {"target": target}
        exec(f"def {name}({params}):\n"
             f"    return target({params}, {eps!r})\n", namespace)
        fn = namespace[name]
        _COMPILED[key] = (torch.compile(fn, backend=backend, dynamic=True,
                                        fullgraph=True), backend)
    return _COMPILED[key]


class Runner:
    """fn and one argument tuple per input set. compile_ms: the first
    call's wall time when it compiled (else NaN); recompiles(): graphs
    compiled since."""

    def __init__(self, path, op, dtype, layout, eps, sets):
        self.path = path
        self.compile_ms = float("nan")
        self.compiled_first = False
        self.args = []
        for s in sets:
            tensors = [wrap(*t) for t in s]
            if path.startswith("compiled-python"):
                self.args.append(tuple(tensors))
            else:
                self.args.append(tuple(tensors) + (eps,))
        if path == "eager-python":
            self.fn = _OPS[op]
        elif path == "reference-python":
            self.fn = _REFERENCE[op]
        elif path.startswith("compiled-python"):
            n = sets[0][0][2][-1]  # x's last size
            self.fn, self._backend = _compiled(path, op, dtype, layout, n,
                                               eps)
            before = self._graphs()
            start = time.perf_counter()
            self.fn(*self.args[0])
            elapsed = (time.perf_counter() - start) * 1e3
            self.compiled_first = self._graphs() > before
            if self.compiled_first:
                self.compile_ms = elapsed
        else:
            raise ValueError(f"unknown Python path {path!r}")
        self._baseline = self._graphs()

    def _graphs(self):
        backend = getattr(self, "_backend", None)
        return backend.compiles if backend is not None else 0

    def recompiles(self):
        """Graphs compiled for this callable since timing began."""
        return self._graphs() - self._baseline

    def timing_begins(self):
        """Called after verification, which runs with deterministic
        algorithms on (NaN-filled outputs) and so compiles a graph of its
        own: compilations from here on happen while timing."""
        self._baseline = self._graphs()


def force_recompile():
    """Test hook: drop every compiled graph (the next call recompiles)."""
    torch._dynamo.reset()


def aoti_package(op, dtype, eps, cache_dir):
    """The AOTInductor package of the op for dtype, dynamic in B and N
    (one package serves every shape), built once and cached. Returns
    (path, build_seconds or NaN when cached)."""
    tag = (f"{op}-{dtype}-eps{eps:g}-"
           f"torch{torch.__version__.replace('+', '_')}")
    path = os.path.join(cache_dir, tag + ".pt2")
    if os.path.exists(path):
        return path, float("nan")
    os.makedirs(cache_dir, exist_ok=True)
    dt = _DTYPES[dtype]
    target = _OPS[op]

    class Rows(torch.nn.Module):
        def forward(self, x):
            return target(x, eps)

    class Fused(torch.nn.Module):
        def forward(self, x, residual, weight):
            return target(x, residual, weight, eps)

    B = torch.export.Dim("B", min=1, max=1 << 20)
    N = torch.export.Dim("N", min=1, max=1 << 20)
    x = torch.randn(8, 64).to(dt)
    if op == "rms_norm_rows":
        module, args, dims = Rows(), (x,), ({0: B, 1: N},)
    else:
        module = Fused()
        args = (x, torch.randn(8, 64).to(dt), torch.randn(64).to(dt))
        dims = ({0: B, 1: N}, {0: B, 1: N}, {0: N})
    start = time.perf_counter()
    ep = torch.export.export(module, args, dynamic_shapes=dims)
    tmp = f"{path[:-4]}.tmp{os.getpid()}.pt2"
    torch._inductor.aoti_compile_and_package(ep, package_path=tmp)
    os.replace(tmp, path)  # atomic: a concurrent run never sees half
    return path, time.perf_counter() - start
