"""opcost_bench: the Python side of the opcost benchmark's Python paths
(bench/paths/python_route.c); the bench's, not part of the rowops package. The C driver embeds the interpreter, builds a Runner per
(path, point) and then calls ``runner.fn(*runner.args[i])`` itself through
the Python C API: the timed region is that call, as a Python user makes it.

Tensors are views of the C driver's memory (no copy): each set's x,
residual and weight arrive as (address, dtype, sizes, strides)."""

import contextlib
import ctypes
import logging
import os
import time

import torch

import opcost_slab

from rowops import _ops as _api, boundary, reference

# Inductor's C++ builds warn once that no CUDA runtime exists: noise here.
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)

_DTYPES = {"float32": torch.float32, "float16": torch.float16,
           "bfloat16": torch.bfloat16, "float64": torch.float64}
_OPS = {"rms_norm_rows": torch.ops.rowops.rms_norm_rows,
        "fused_add_rms_norm": torch.ops.rowops.fused_add_rms_norm}
# eager-python: the library's Python API (rowops.<op>), what a Python user
# calls (one CPython call into the dispatcher: rowops/_ops.py).
_EAGER = {"rms_norm_rows": _api.rms_norm_rows,
          "fused_add_rms_norm": _api.fused_add_rms_norm}
_REFERENCE = {"rms_norm_rows": reference.rms_norm_rows,
              "fused_add_rms_norm": reference.fused_add_rms_norm}
_OP_REF = {"rms_norm_rows": torch.ops.rowops.rms_norm_rows_reference,
           "fused_add_rms_norm": torch.ops.rowops.fused_add_rms_norm_reference}


class _DeviceMemory:
    """GPU memory of the C driver's, offered to torch.as_tensor through
    the CUDA array interface (no copy); bfloat16 crosses as int16."""

    _TYPES = {"float32": "<f4", "float16": "<f2", "bfloat16": "<i2",
              "float64": "<f8"}

    def __init__(self, address, dtype, sizes, strides):
        item = torch.empty((), dtype=_DTYPES[dtype]).element_size()
        self.__cuda_array_interface__ = {
            "shape": tuple(sizes), "typestr": self._TYPES[dtype],
            "data": (address, False), "version": 3,
            "strides": tuple(st * item for st in strides)}


# Bytes per element of each dtype (wrap runs up to 65536 x 6 times a path).
_ITEM = {name: torch.empty((), dtype=dt).element_size()
         for name, dt in _DTYPES.items()}
# A storage on foreign memory: torch.from_blob's, which Python lacks
# publicly; about 3 us a tensor against 12 through ctypes and frombuffer.
_STORAGE_AT = getattr(torch._C, "_construct_storage_from_data_pointer", None)
_CPU = torch.device("cpu")


def wrap(address, dtype, sizes, strides, device="cpu"):
    """A tensor viewing C memory: element [0, ..., 0] at address, on the
    CPU or the current CUDA device."""
    if device == "cuda":
        t = torch.as_tensor(_DeviceMemory(address, dtype, sizes, strides),
                            device="cuda")
        return t.view(torch.bfloat16) if dtype == "bfloat16" else t
    dt = _DTYPES[dtype]
    item = _ITEM[dtype]
    span = 1
    for n, st in zip(sizes, strides):
        if n <= 0:
            span = 0
            break
        span += (n - 1) * st
    nbytes = max(span * item, 1)
    if _STORAGE_AT is not None:
        storage = _STORAGE_AT(address, _CPU, nbytes)
        return torch.empty(0, dtype=dt).set_(storage, 0, tuple(sizes),
                                             tuple(strides))
    buf = (ctypes.c_char * nbytes).from_address(address)
    flat = torch.frombuffer(buf, dtype=torch.uint8).view(dt)
    return flat.as_strided(tuple(sizes), tuple(strides))


def describe(outputs):
    """(address, dtype, sizes, strides, device) of each output tensor."""
    names = {v: k for k, v in _DTYPES.items()}
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    # None: an output the path does not return (a peer's rstd)
    return [None if t is None else
            (t.data_ptr(), names[t.dtype], tuple(t.shape), tuple(t.stride()),
             t.device.type) for t in outputs]


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
        self.decompose = decompose

    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx
        self.compiles += 1
        # rowops.boundary's decomposition, with the compile caches that
        # stay right for it (the FX graph cache keys on the decomposed
        # graph). Kernel profiling puts a RecordFunction scope in each
        # generated C++ kernel (a thread-local check while no tracer is
        # registered), so the bench's attribution pass sees Inductor's
        # kernels as compute.
        decomposing = boundary.decompose_under_compile() if self.decompose \
            else contextlib.nullcontext()
        with decomposing, torch._inductor.config.patch(
                emulate_precision_casts=True,
                **{"cpp.enable_kernel_profile": True}):
            return compile_fx(gm, example_inputs)


def _compiled(kind, op, dtype, layout, n, eps, device="cpu"):
    key = (kind, op, dtype, layout, n, eps, device)
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
        inplace = path.endswith("-inplace")
        sets = [[wrap(*t) for t in s] for s in sets]
        slab = opcost_slab.Slab(
            opcost_slab.IN_PLACE_SETS, sets[0][0].device,
            sum(opcost_slab.carved_bytes(t.shape, t.stride(), t.dtype)
                for s in sets for t in s[:2])) if inplace else None
        for tensors in sets:
            tensors = list(tensors)
            if inplace:
                # the in-place form mutates x and residual: it runs on this
                # set's own copies (same strides), made here, so the
                # driver's inputs stay what the reference reads (the copies
                # are shared by the point's in-place paths: verified one
                # by one after their prepare, timed in alternation)
                for k in (0, 1):
                    tensors[k] = slab.copy_of(tensors[k])
            if path.startswith("compiled-python"):
                self.args.append(tuple(tensors))
            elif path == "torch-add-python":
                self.args.append(tuple(tensors[:2]))  # x, residual
            else:
                self.args.append(tuple(tensors) + (eps,))
        if path == "eager-python":
            self.fn = _EAGER[op]
        elif path == "eager-python-inplace":
            # rowops.fused_add_rms_norm_, outputs as the functional op's
            # (x, residual: what it wrote; it returns no rstd)
            def inplace_call(x, residual, weight, eps):
                _api.fused_add_rms_norm_(x, residual, weight, eps)
                return x, residual, None
            self.fn = inplace_call
        elif path.startswith("peer-") and inplace:
            import opcost_peers
            self.fn = opcost_peers.inplace(path, self.args)
        elif path == "reference-python":
            self.fn = _REFERENCE[op]
        elif path == "torch-add-python":
            # calibration: PyTorch's own smallest op from Python (h only)
            self.fn = torch.add
        elif path.startswith("peer-"):
            # a peer's kernel as the functional op (bench/python/
            # opcost_peers.py; its availability checked before)
            import opcost_peers
            self.fn = opcost_peers.functional(path, op, self.args)
        elif path == "triton":
            # the kernel path's Triton variant (rowops.triton, GPU)
            from rowops import triton as _triton
            self.fn = _triton.fused_add_rms_norm
        elif path.startswith("compiled-python"):
            n = sets[0][0].shape[-1]  # x's last size
            self.fn, self._backend = _compiled(path, op, dtype, layout, n,
                                               eps, self.args[0][0].device.type)
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

    def note(self):
        """What the row should say about this path's entry: eager-python
        enters through rowops._fast where it sits beside the library, else
        through torch.ops (a few us more a call at small B: two builds
        that differ in it read 12-23 % apart there, opcost ab A/A, Zen 4).
        """
        if self.path != "eager-python":
            return ""
        if _api._fast is not None:
            return "entered through rowops._fast"
        return ("entered through torch.ops.rowops: no rowops._fast beside "
                "the library (its target rowops_fast not built)")

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


def cache_dir(*parts):
    """opcost's cache directory joined with parts: $OPCOST_CACHE, else
    ~/.cache/opcost (scripts/setup-env.sh keeps the virtual environment
    there by the same rule), so every cached artefact of a run moves
    with that one variable."""
    root = os.environ.get("OPCOST_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "opcost")
    return os.path.join(root, *parts)


@contextlib.contextmanager
def build_lock(path):
    """Held while path is built: a process that wants the same package
    waits for the one building it and then loads it (make test's
    processes side by side built the same packages each, a C++ compile
    of seconds apiece), never a half-built file (the build's own atomic
    rename). Where the lock cannot be taken the build goes on without."""
    import fcntl
    try:
        f = open(path + ".lock", "a")
    except OSError:
        yield
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def aoti_package(op, dtype, eps, device="cpu"):
    """The AOTInductor package of the op for dtype on device, dynamic in B
    and N (one package serves every shape), built once and cached in
    cache_dir("aoti"). Returns (path, build_seconds or NaN when cached)."""
    where = "" if device == "cpu" else f"-{device}"
    tag = (f"{op}-{dtype}{where}-eps{eps:g}-"
           f"torch{torch.__version__.replace('+', '_')}")
    directory = cache_dir("aoti")
    path = os.path.join(directory, tag + ".pt2")
    if os.path.exists(path):
        return path, float("nan")
    os.makedirs(directory, exist_ok=True)
    with build_lock(path):
        if os.path.exists(path):  # built while this process waited
            return path, float("nan")
        return path, _build_aoti_package(op, dtype, eps, device, path)


def _build_aoti_package(op, dtype, eps, device, path):
    """aoti_package's build: the op exported and compiled into path;
    its seconds."""
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
    x = torch.randn(8, 64).to(device=device, dtype=dt)
    if op == "rms_norm_rows":
        module, args, dims = Rows(), (x,), ({0: B, 1: N},)
    else:
        module = Fused()
        args = (x, torch.randn(8, 64).to(device=device, dtype=dt),
                torch.randn(64).to(device=device, dtype=dt))
        dims = ({0: B, 1: N}, {0: B, 1: N}, {0: N})
    start = time.perf_counter()
    ep = torch.export.export(module, args, dynamic_shapes=dims)
    tmp = f"{path[:-4]}.tmp{os.getpid()}.pt2"
    torch._inductor.aoti_compile_and_package(ep, package_path=tmp)
    os.replace(tmp, path)  # atomic: a concurrent run never sees half
    return time.perf_counter() - start


# ---- the distributed path (bench/paths/distributed.c): the op on a DTensor
# sharded over two CPU ranks with gloo. Rank 0 is this interpreter, whose
# calls the C driver times; rank 1 is a child process started once per run
# (distributed_peer below), driven over a socket. Every wait on it is
# bounded: its answers by _DIST_ANSWER_S, collectives by the process
# group's timeout (a rank that dies is seen at once: its sockets close).

import json  # noqa: E402

_DIST_ANSWER_S = 120.0
_DIST_COLLECTIVE_S = float(os.environ.get("OPCOST_DISTRIBUTED_TIMEOUT_S",
                                          "600"))
# OPCOST_DISTRIBUTED_PLACEMENT: how x (and residual) are sharded.
#   rows       Shard(0): each rank normalizes its own rows, no communication
#   hidden     Shard(1): the hidden dimension; DTensor all-gathers it first
#   replicate  every rank holds and computes everything
_DIST_PLACEMENTS = ("rows", "hidden", "replicate")


class DistributedUnavailable(Exception):
    """The distributed path cannot run here (the reason is the message)."""


def _dist_placement(name):
    from torch.distributed.tensor import Replicate, Shard
    return {"rows": Shard(0), "hidden": Shard(1),
            "replicate": Replicate()}[name]


def _dist_comms(mode):
    return {str(k).split("'")[1] if "'" in str(k) else str(k): int(v)
            for k, v in mode.get_comm_counts().items() if v}


class _DistPoint:
    """One point's inputs on one rank, as DTensors over the two ranks: every
    input set sharded in one collective (the sets stacked), each set then a
    DTensor over its slice of the local shard. Rank 0 builds every set's
    DTensors beforehand (args: what the driver times); rank 1 builds each
    call's when it makes it (it waits for rank 0 in each collective
    anyway), which keeps a point with 65536 sets quick to prepare."""

    def __init__(self, mesh, op, placement, eps, shapes, dtypes, nsets,
                 columns=None):
        """columns: on rank 0, per tensor argument its first set's
        (address, dtype, sizes, strides) and the bytes between sets; None
        on rank 1."""
        from torch.distributed.tensor import (DTensor, Replicate, Shard,
                                              distribute_tensor)
        from torch.distributed.tensor.debug import CommDebugMode
        self.fn = _OPS[op]
        self.eps = eps
        self.nsets = nsets
        place = _dist_placement(placement)
        self.locals, self.firsts = [], []
        for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
            p = place if i < 2 else Replicate()  # weight: replicated
            shape, dt = tuple(shape), _DTYPES[dtype]
            if columns is not None:
                whole = _stacked(columns[i][0], columns[i][1], nsets)
            else:
                whole = torch.empty((nsets,) + shape, dtype=dt)
            stacked = Shard(p.dim + 1) if isinstance(p, Shard) else p
            local = distribute_tensor(whole, mesh, [stacked]).to_local()
            del whole
            stride = torch.empty(shape, device="meta").stride()
            self.locals.append(local)
            self.firsts.append(DTensor.from_local(
                local[0], mesh, [p], run_check=False, shape=shape,
                stride=stride))
        self.args = None
        if columns is not None:
            self.args = _set_args(self.locals, self.firsts, eps)
        self.next = 0
        # one call on each rank, its collectives counted: a placement
        # that communicates needs rank 1 in every call (it mirrors them)
        with CommDebugMode() as mode:
            out = self.fn(*self.set_args(0))
        self.comms = _dist_comms(mode)
        self.mirror = bool(self.comms)
        self.placements = [str(o.placements[0]) for o in out]

    def set_args(self, k):
        """The call's arguments for input set k."""
        if self.args is not None:
            return self.args[k]
        return tuple(first if k == 0 else _dtensor_like(local[k], first)
                     for local, first in zip(self.locals, self.firsts)) + \
            (self.eps,)

    def calls(self, n):
        for _ in range(n):
            self.fn(*self.set_args(self.next))
            self.next = (self.next + 1) % self.nsets

    def gathered(self, set_index):
        """The call on set_index once more, and its outputs gathered whole
        (both ranks take part)."""
        out = self.fn(*self.set_args(set_index))
        return out, [o.full_tensor() for o in out]


def _set_args(locals_, firsts, eps):
    """Every set's argument tuple: a DTensor per tensor argument over the
    set's slice of the local shards (unbind: 8x cheaper than [k]), eps.
    Without the cyclic collector, which would scan the growing heap many
    times over (acyclic objects only)."""
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        columns = [[first] + [_dtensor_like(t, first)
                              for t in local.unbind(0)[1:]]
                   for local, first in zip(locals_, firsts)]
        return [args + (eps,) for args in zip(*columns)]
    finally:
        if enabled:
            gc.enable()


def _stacked(spec, step, nsets):
    """One argument of every input set as one contiguous (nsets, *sizes)
    tensor (a copy): set i's tensor is `spec` (address, dtype, sizes,
    strides) moved by i * step bytes, a multiple of the element size."""
    addr, dtype, sizes, strides = spec[:4]  # distributed: CPU ranks
    item = torch.empty((), dtype=_DTYPES[dtype]).element_size()
    if step % item:
        raise ValueError(f"input sets {step} bytes apart: not a multiple "
                         f"of the {item}-byte element")
    return wrap(addr, dtype, (nsets,) + tuple(sizes),
                (step // item,) + tuple(strides)).contiguous()


def _dtensor_like(local, first):
    """A DTensor with first's mesh, placements and global shape over the
    local shard `local` (the same size as first's). DTensor.from_local
    costs ~60 us a call, too much for 65536 input sets; the constructor
    with first's spec ~3 us; from_local where that constructor changes."""
    from torch.distributed.tensor import DTensor
    try:
        return DTensor(local, first._spec, requires_grad=False)
    except TypeError:
        return DTensor.from_local(local, first.device_mesh, first.placements,
                                  run_check=False, shape=first.shape,
                                  stride=first.stride())


class _DistGroup:
    """This interpreter as rank 0 of a gloo process group of two, and rank 1
    as a child process (a new session: the terminal's signals are the
    driver's), driven by JSON lines over a socket pair."""

    def __init__(self):
        import socket
        import subprocess
        import sys
        import tempfile
        from datetime import timedelta
        import torch.distributed as dist
        from rowops import distributed as rules
        if not dist.is_available():
            raise DistributedUnavailable(
                "torch.distributed is not available in this torch build")
        if not dist.is_gloo_available():
            raise DistributedUnavailable(
                "torch.distributed has no gloo backend in this torch build")
        if rules is None:
            raise DistributedUnavailable(
                "rowops.distributed (the DTensor sharding rules) did not "
                "import")
        if dist.is_initialized():
            raise DistributedUnavailable(
                "a process group already exists in this interpreter")
        if "GLOO_SOCKET_IFNAME" not in os.environ and \
                os.path.exists("/sys/class/net/lo"):
            os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # both ranks are here
        self.dead = None
        self.store = dist.TCPStore("127.0.0.1", 0, 2, True,
                                   timeout=timedelta(seconds=_DIST_ANSWER_S),
                                   wait_for_workers=False)
        self.sock, theirs = socket.socketpair()
        self.log = tempfile.TemporaryFile()
        env = dict(os.environ, ROWOPS_LIBRARY=str(_library()))
        # the peer imports rowops and this module from where this process did
        import rowops
        dirs = [os.path.dirname(os.path.abspath(__file__)),
                os.path.dirname(os.path.dirname(os.path.abspath(
                    rowops.__file__)))]
        code = (f"import sys; sys.path[:0] = {dirs!r}; "
                "from opcost_bench import distributed_peer; "
                "distributed_peer()")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", code, str(self.store.port)],
                stdin=theirs, stdout=theirs, stderr=self.log, env=env,
                close_fds=True, start_new_session=True)
        finally:
            theirs.close()
        self.pending = b""
        try:
            self.answer("hello")
            dist.init_process_group(
                "gloo", store=self.store, rank=0, world_size=2,
                timeout=timedelta(seconds=_DIST_COLLECTIVE_S))
            from torch.distributed.tensor import init_device_mesh
            self.mesh = init_device_mesh("cpu", (2,))
            self.answer("ready")
        except Exception as e:
            self.close(f"{type(e).__name__}: {e}")
            raise DistributedUnavailable(
                f"the second rank did not start: {e}") from None

    def send(self, **msg):
        import socket
        if self.dead:
            raise RuntimeError(f"the second rank stopped: {self.dead}")
        try:
            self.sock.sendall((json.dumps(msg) + "\n").encode(),
                              socket.MSG_NOSIGNAL)
        except OSError as e:
            self.close(f"cannot reach it: {e}")
            raise RuntimeError(f"the second rank stopped: {self.dead}")

    def _line(self):
        """rank 1's next line, or why there is none, within _DIST_ANSWER_S."""
        import select
        deadline = time.monotonic() + _DIST_ANSWER_S
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            ready = left > 0 and select.select([self.sock], [], [], left)[0]
            if not ready:
                return None, f"no answer within {_DIST_ANSWER_S:g} s"
            try:
                got = self.sock.recv(1 << 16)
            except OSError as e:
                got = b""
                self.proc.poll()
                return None, f"its socket failed: {e}"
            if not got:
                try:
                    code = self.proc.wait(timeout=5)
                except Exception:  # noqa: BLE001
                    code = None
                return None, f"it exited (status {code})"
            self.pending += got
        line, self.pending = self.pending.split(b"\n", 1)
        return line, None

    def answer(self, expect):
        """rank 1's next answer (a dict with "say" == expect)."""
        line, why = self._line()
        if line is None:
            self.close(why)
            raise RuntimeError(f"the second rank stopped: {why}; its log: "
                               f"{self.log_tail()}")
        msg = json.loads(line)
        if msg.get("say") != expect:
            self.close(f"answered {msg} to {expect!r}")
            raise RuntimeError(f"the second rank failed: {msg.get('error')}"
                               f"; its log: {self.log_tail()}")
        return msg

    def log_tail(self, n=600):
        try:
            self.log.seek(0, os.SEEK_END)
            size = self.log.tell()
            self.log.seek(max(0, size - n))
            return self.log.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return "(no log)"

    def close(self, why):
        """Ends rank 1 (its socket closes; then killed if it lingers)."""
        self.dead = self.dead or why
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except Exception:  # noqa: BLE001  (e.g. inside its own start)
            self.proc.kill()
            self.proc.wait()


def _library():
    from rowops import LIBRARY_PATH
    return LIBRARY_PATH


_DIST_GROUP = None
_DIST_UNAVAILABLE = None


def _dist_group():
    global _DIST_GROUP, _DIST_UNAVAILABLE
    if _DIST_UNAVAILABLE:
        raise DistributedUnavailable(_DIST_UNAVAILABLE)
    if _DIST_GROUP is not None and _DIST_GROUP.dead:
        raise DistributedUnavailable(
            f"the second rank stopped earlier in this run: "
            f"{_DIST_GROUP.dead}")
    if _DIST_GROUP is None:
        try:
            _DIST_GROUP = _DistGroup()
        except DistributedUnavailable as e:
            _DIST_UNAVAILABLE = str(e)
            raise
    return _DIST_GROUP


class DistributedRunner:
    """The distributed path's point on rank 0: fn and one argument tuple of
    DTensors per input set; the C driver times fn(*args[set]). Where the
    placement communicates (mirror), rank 1 must make every call too: the
    driver grants it calls ahead (grant), so it waits inside each call's
    collective for rank 0, and settles the surplus (settle) before
    verifying and releasing."""

    def __init__(self, op, dtype, layout, eps, nsets, columns):
        placement = os.environ.get("OPCOST_DISTRIBUTED_PLACEMENT", "rows")
        if placement not in _DIST_PLACEMENTS:
            raise ValueError(
                f"OPCOST_DISTRIBUTED_PLACEMENT must be one of "
                f"{', '.join(_DIST_PLACEMENTS)}, got {placement!r}")
        self.group = _dist_group()
        shapes = [tuple(spec[2]) for spec, _ in columns]
        dtypes = [spec[1] for spec, _ in columns]
        self.placement = placement
        self.threads_peer = max(1, (os.cpu_count() or 1) -
                                torch.get_num_threads())
        with self._guarded():
            self.group.send(cmd="point", op=op, placement=placement,
                            eps=eps, shapes=shapes, dtypes=dtypes,
                            nsets=nsets, threads=self.threads_peer)
            self.point = _DistPoint(self.group.mesh, op, placement, eps,
                                    shapes, dtypes, nsets, columns)
            peer = self.group.answer("point")
            if peer["mirror"] != self.point.mirror:
                raise RuntimeError(f"the ranks disagree on communication: "
                                   f"{self.point.comms} vs {peer['comms']}")
        self.fn = self.point.fn
        self.args = self.point.args
        self.mirror = self.point.mirror
        self._full = None

    @contextlib.contextmanager
    def _guarded(self):
        """Any failure leaves the ranks out of step (a collective one made
        and the other did not): rank 1 is ended, and the later points
        skip, saying why."""
        try:
            yield
        except BaseException as e:
            self.group.close(f"{type(e).__name__}: {e}")
            raise

    def grant(self, n):
        """rank 1 may make n more calls (it waits in each for rank 0)."""
        with self._guarded():
            self.group.send(cmd="calls", n=int(n))

    def settle(self, surplus):
        """rank 0 makes the surplus calls it granted but did not make; then
        both ranks have made the same calls."""
        with self._guarded():
            for _ in range(surplus):
                self.fn(*self.args[0])
            self.group.send(cmd="sync")
            self.group.answer("sync")

    def abandon(self, why):
        """After a failed timed call: the ranks are out of step."""
        self.group.close(why)
        self.point = self.args = self._full = None

    def verify(self, set_index, last):
        """The outputs whole, for the driver's check: both ranks call on
        set_index once more and gather. None when rank 0's share of that
        call differs from its share of the timed call's outputs `last`."""
        with self._guarded():
            self.group.send(cmd="verify", set=int(set_index))
            out, self._full = self.point.gathered(set_index)
        if not all(torch.equal(a.to_local(), b.to_local())
                   for a, b in zip(out, last)):
            return None
        return self._full

    def note(self):
        comms = ", ".join(f"{n} {k.split('.')[-1]}"
                          for k, n in sorted(self.point.comms.items()))
        return (f"2 gloo ranks on this host, x {self.placement} "
                f"({_dist_placement(self.placement)}) -> outputs "
                f"{'/'.join(self.point.placements)}; per call: "
                + (f"{comms}, rank 1 ({self.threads_peer} thread"
                   f"{'s' if self.threads_peer > 1 else ''}) mirrors each call"
                   if self.mirror else "no communication, rank 1 idle"))

    def release(self, surplus):
        self.settle(surplus)
        with self._guarded():
            self.group.send(cmd="drop")
        self.point = self.args = self._full = None


def distributed_runner(op, dtype, layout, eps, nsets, columns):
    """(DistributedRunner, None), or (None, why) when the path cannot run
    here (no torch.distributed, no gloo, no second rank). columns: per
    tensor argument (x, residual, weight), its first input set's (address,
    dtype, sizes, strides) and the bytes from one set's to the next's."""
    try:
        return DistributedRunner(op, dtype, layout, eps, nsets,
                                 columns), None
    except DistributedUnavailable as e:
        return None, str(e)


def distributed_peer():
    """Rank 1 of the distributed path (python -c ... PORT): answers on its
    standard output, takes commands on its standard input (one socket);
    exits when rank 0 closes it."""
    import signal
    import sys
    from datetime import timedelta
    import torch.distributed as dist
    from torch.distributed.tensor import init_device_mesh
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints go to the log, not to rank 0

    def say(what, **kw):
        answers.write(json.dumps(dict(kw, say=what)) + "\n")

    say("hello")
    store = dist.TCPStore("127.0.0.1", int(sys.argv[1]), 2, False,
                          timeout=timedelta(seconds=_DIST_ANSWER_S))
    dist.init_process_group("gloo", store=store, rank=1, world_size=2,
                            timeout=timedelta(seconds=_DIST_COLLECTIVE_S))
    mesh = init_device_mesh("cpu", (2,))
    say("ready")
    point = None
    for line in sys.stdin:
        msg = json.loads(line)
        cmd = msg["cmd"]
        try:
            if cmd == "point":
                torch.set_num_threads(msg["threads"])
                point = None
                point = _DistPoint(mesh, msg["op"], msg["placement"],
                                   msg["eps"], msg["shapes"], msg["dtypes"],
                                   msg["nsets"])
                say("point", mirror=point.mirror, comms=point.comms)
            elif cmd == "calls":
                point.calls(msg["n"])
            elif cmd == "verify":
                point.gathered(msg["set"])
            elif cmd == "sync":
                say("sync")
            elif cmd == "drop":
                point = None
        except Exception as e:  # noqa: BLE001  (reported, then exits)
            import traceback
            traceback.print_exc()
            say("error", error=f"{type(e).__name__}: {e}")
            sys.exit(1)
