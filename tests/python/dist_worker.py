"""One rank of the distributed tests (tests/python/test_distributed.py
starts two, gloo on the CPU). Every rank runs the same checks: each op on a
DTensor in each placement against the single-process result, the in-place
form's errors, a two-layer model trained three steps with FSDP2 and with
tensor + sequence parallelism, and that model under torch.compile. It
measures and writes what it saw (differences, placements, collectives,
losses, errors) as JSON; the tests assert on it.

Usage: dist_worker.py RANK WORLD INIT_FILE OUT_JSON"""

import json
import os
import sys
import traceback
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.distributed.tensor import (  # noqa: E402
    DTensor, Partial, Replicate, Shard, distribute_tensor, init_device_mesh)
from torch.distributed.tensor.debug import CommDebugMode  # noqa: E402

import rowops  # noqa: E402,F401
from rowops.distributed import SequenceParallelNorm  # noqa: E402
from rowops.nn import FusedAddRMSNorm  # noqa: E402

ops = torch.ops.rowops
EPS = 1e-6


def _gen(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _randn(shape, dtype, seed):
    return torch.randn(shape, generator=_gen(seed)).to(dtype)


def _comms(mode):
    """{collective name: count} seen by a CommDebugMode."""
    return {str(k).split("'")[1] if "'" in str(k) else str(k): int(v)
            for k, v in mode.get_comm_counts().items() if v}


def _diff(got, want):
    got, want = got.detach().double(), want.detach().double()
    empty = want.numel() == 0
    return {"max_abs": 0.0 if empty else float((got - want).abs().max()),
            "max_ref": 0.0 if empty else float(want.abs().max()),
            "equal": bool(torch.equal(got, want))}


def _placements(t):
    return [str(p) for p in t.placements]


# ---- each op on DTensor inputs in one placement vs one process

PLACEMENTS = {  # name -> (x shape, x placement or "partial")
    "rows": ((5, 8), Shard(0)),            # uneven: 3 + 2 rows
    "replicate": ((5, 8), Replicate()),
    "hidden": ((5, 8), Shard(1)),
    "hidden-neg": ((5, 8), Shard(-1)),
    "partial": ((5, 8), "partial"),
    "3d-batch": ((2, 5, 8), Shard(0)),
    "3d-seq": ((2, 5, 8), Shard(1)),
    "3d-hidden": ((2, 5, 8), Shard(2)),
    "1d-hidden": ((8,), Shard(0)),         # one row: its only dim is hidden
}


def _dist(t, mesh, placement):
    if placement == "partial":  # two halves summing to t exactly
        return DTensor.from_local(t * 0.5, mesh, [Partial()], run_check=False)
    return distribute_tensor(t, mesh, [placement])


def _like(t, out):
    """t distributed as the DTensor out is."""
    return distribute_tensor(t, out.device_mesh, out.placements)


def parity(mesh, op, dtype, name, grads):
    """Forward, and backward with the upstream gradients `grads` ("all":
    every output, "out": the first only), of op on DTensors placed as
    PLACEMENTS[name], against the same calls on whole tensors."""
    shape, placement = PLACEMENTS[name]
    fused = op == "fused_add_rms_norm"
    x = _randn(shape, dtype, 1)
    inputs = [x]
    if fused:
        inputs += [_randn(shape, dtype, 2), _randn(shape[-1:], dtype, 3)]
    fn = getattr(ops, op)

    ref_in = [t.clone().requires_grad_() for t in inputs]
    ref_out = fn(*ref_in, EPS)
    ups = [_randn(o.shape, o.dtype, 10 + i) for i, o in enumerate(ref_out)]
    n = len(ref_out) if grads == "all" else 1
    torch.autograd.backward(list(ref_out[:n]), ups[:n])

    placements = [placement] + ([placement, Replicate()] if fused else [])
    if fused and placement == "partial":
        placements[1] = Replicate()
    d_in = [_dist(t, mesh, p).detach().requires_grad_()
            for t, p in zip(inputs, placements)]
    with CommDebugMode() as fwd:
        d_out = fn(*d_in, EPS)
    d_ups = [_like(u, o) for u, o in zip(ups[:n], d_out)]
    with CommDebugMode() as bwd:
        torch.autograd.backward(list(d_out[:n]), d_ups)
    names = ["out", "residual_out", "rstd"] if fused else ["y", "rstd"]
    res = {"outputs": {}, "grads": {},
           "fwd_comms": _comms(fwd), "bwd_comms": _comms(bwd)}
    for nm, o, r in zip(names, d_out, ref_out):
        res["outputs"][nm] = dict(_diff(o.full_tensor(), r.detach()),
                                  placements=_placements(o))
    for nm, d, r in zip(["x", "residual", "weight"], d_in, ref_in):
        res["grads"][nm] = dict(_diff(d.grad.full_tensor(), r.grad),
                                placements=_placements(d.grad))
    return res


OPS = ("rms_norm_rows", "fused_add_rms_norm")
# (op, dtype, placement name, upstream gradients); key "op/dtype/name/grads"
CASES = [(op, "float32", name, grads) for op in OPS for name in PLACEMENTS
         for grads in ("all", "out")] + \
    [(op, "bfloat16", name, "all") for op in OPS
     for name in ("rows", "hidden", "3d-seq")]


def parity_checks(mesh):
    return {"/".join(case): parity(mesh, case[0], getattr(torch, case[1]),
                                   case[2], case[3])
            for case in CASES}


# ---- placements the in-place form cannot take


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the message is the result)
        return f"{type(e).__name__}: {e}"
    return None


def inplace_checks(mesh):
    x, r = (_randn((5, 8), torch.float32, s) for s in (1, 2))
    w = _randn((8,), torch.float32, 3)
    out = {}
    want_x, want_r = x.clone(), r.clone()
    ops.fused_add_rms_norm_(want_x, want_r, w, EPS)
    dx, dr = distribute_tensor(x, mesh, [Shard(0)]), \
        distribute_tensor(r, mesh, [Shard(0)])
    dw = distribute_tensor(w, mesh, [Replicate()])
    with CommDebugMode() as mode:
        ops.fused_add_rms_norm_(dx, dr, dw, EPS)
    out["rows"] = {"x": _diff(dx.full_tensor(), want_x),
                   "residual": _diff(dr.full_tensor(), want_r),
                   "comms": _comms(mode)}
    cases = {
        "hidden": ([Shard(1)], [Shard(1)]),
        "partial": ([Partial()], [Partial()]),
        "mismatch": ([Shard(0)], [Replicate()]),
    }
    for name, (px, pr) in cases.items():
        dx = DTensor.from_local(x, mesh, px, run_check=False) \
            if px == [Partial()] else distribute_tensor(x, mesh, px)
        dr = DTensor.from_local(r, mesh, pr, run_check=False) \
            if pr == [Partial()] else distribute_tensor(r, mesh, pr)
        before = (dx.to_local().clone(), dr.to_local().clone())
        err = _error(lambda: ops.fused_add_rms_norm_(dx, dr, dw, EPS))
        out[name] = {"error": err,
                     "untouched": bool(torch.equal(dx.to_local(), before[0])
                                       and torch.equal(dr.to_local(),
                                                       before[1]))}
    # a DTensor next to a plain tensor: DTensor's own error
    out["mixed"] = {"error": _error(lambda: ops.fused_add_rms_norm(
        distribute_tensor(x, mesh, [Shard(0)]), r, w, EPS))}
    return out


# ---- a two-layer model trained three steps

B, S, H, INNER, STEPS, LR = 4, 6, 16, 32, 3, 0.1


class RowsNorm(nn.Module):
    """rms_norm_rows with a weight: one input, so torch's SequenceParallel
    style applies as it is."""

    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, h):
        y, _ = ops.rms_norm_rows(h, EPS)
        return y * self.weight


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(H, INNER, bias=False)
        self.down = nn.Linear(INNER, H, bias=False)
        self.norm = FusedAddRMSNorm(H, EPS)

    def forward(self, y, residual):
        x = self.down(torch.relu(self.up(y)))
        return self.norm(x, residual)  # (norm(x + residual) * w, x + residual)


class TwoLayer(nn.Module):
    """Two MLP layers, each followed by the fused residual add + norm, and a
    final rms_norm_rows: both ops and both backward ops train."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(), Layer()])
        self.final = RowsNorm(H)

    def forward(self, x):
        y, residual = x, x
        for layer in self.layers:
            y, residual = layer(y, residual)
        return self.final(y)


def _model():
    torch.manual_seed(0)
    m = TwoLayer()
    with torch.no_grad():  # weights not all ones: the norms' weights count
        for layer in [m.final] + [lay.norm for lay in m.layers]:
            layer.weight.uniform_(0.5, 1.5)
    return m


def _data():
    return _randn((B, S, H), torch.float32, 20), \
        _randn((B, S, H), torch.float32, 21)


def train_reference():
    m = _model()
    opt = torch.optim.SGD(m.parameters(), lr=LR)
    x, target = _data()
    losses = []
    for _ in range(STEPS):
        loss = ((m(x) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def _tp_model(mesh):
    from torch.distributed.tensor.parallel import (
        ColwiseParallel, RowwiseParallel, SequenceParallel, parallelize_module)
    plan = {"final": SequenceParallel()}
    for i in range(2):
        plan[f"layers.{i}.up"] = ColwiseParallel(input_layouts=Shard(1))
        plan[f"layers.{i}.down"] = RowwiseParallel(output_layouts=Shard(1))
        plan[f"layers.{i}.norm"] = SequenceParallelNorm()
    return parallelize_module(_model(), mesh, plan)


def _train_tp(model, mesh, steps=STEPS):
    """Each rank holds its sequence chunk; the loss is the sum of the ranks'
    squared errors over all elements (the reference's mean)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    x, target = _data()
    chunk = S // world
    xs = x[:, rank * chunk:(rank + 1) * chunk]
    ts = target[:, rank * chunk:(rank + 1) * chunk]
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses, placements = [], {}
    for _ in range(steps):
        out = model(xs)
        placements = {"out": _placements(out)}
        loss = ((out.to_local() - ts) ** 2).sum() / target.numel()
        opt.zero_grad()
        loss.backward()
        placements.update({n: _placements(p.grad)
                           for n, p in model.named_parameters()
                           if n.endswith("weight") and "norm" in n
                           or n == "final.weight"})
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        losses.append(float(total))
    return losses, placements


def train_tp(mesh):
    model = _tp_model(mesh)
    with CommDebugMode() as mode:
        losses, placements = _train_tp(model, mesh, 1)
    comms = _comms(mode)
    losses += _train_tp(model, mesh, STEPS - 1)[0]
    # the norms alone: their calls under CommDebugMode, no other layer
    y = DTensor.from_local(_data()[0][:, :S // 2], mesh, [Shard(1)],
                           run_check=False)
    with CommDebugMode() as norm_mode:
        model.layers[0].norm(y, y)
        model.final(y)
    return {"losses": losses, "grad_placements": placements,
            "step_comms": comms, "norm_comms": _comms(norm_mode)}


def _fsdp_model(mesh):
    from torch.distributed.fsdp import fully_shard
    model = _model()
    for layer in model.layers:
        fully_shard(layer, mesh=mesh)
    return fully_shard(model, mesh=mesh)


def _train_fsdp(model):
    """Data parallel: each rank its half of the batch, its mean loss; the
    loss reported is the ranks' mean (the reference's full-batch mean)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x, target = _data()
    part = B // world
    xs, ts = (t[rank * part:(rank + 1) * part] for t in (x, target))
    losses = []
    for _ in range(STEPS):
        loss = ((model(xs) - ts) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        losses.append(float(total) / world)
    return losses


def train_fsdp(mesh):
    try:
        model = _fsdp_model(mesh)
        losses = _train_fsdp(model)
    except Exception as e:  # noqa: BLE001  (CPU ranks may be refused)
        return {"error": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc()}
    return {"losses": losses,
            "param_placements": {n: _placements(p)
                                 for n, p in model.named_parameters()}}


def _compiled(model):
    """model under torch.compile with a backend that records the rowops
    ops in Dynamo's graphs and in AOTAutograd's forward and backward
    graphs, then runs them as they are (aot_eager: Inductor would change
    the kernels, not what Dynamo captures, and costs a C++ build per graph
    on the CPU)."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    seen = {"dynamo": set(), "aot": set()}

    def record(kind, gm):
        seen[kind].update(str(n.target) for n in gm.graph.nodes
                          if "rowops" in str(n.target))

    def boxed(gm, example_inputs):
        record("aot", gm)
        return make_boxed_func(gm.forward)

    aot = aot_autograd(fw_compiler=boxed, bw_compiler=boxed)

    def backend(gm, example_inputs):
        record("dynamo", gm)
        return aot(gm, example_inputs)

    return torch.compile(model, backend=backend), seen


def _compile_check(make, train):
    import torch._dynamo
    from torch._dynamo.utils import counters
    torch._dynamo.reset()
    counters.clear()
    model, seen = _compiled(make())
    losses = train(model)
    return {"losses": losses,
            "graph_breaks": {k: int(v)
                             for k, v in counters["graph_break"].items()},
            "graphs": int(counters["stats"]["unique_graphs"]),
            "dynamo_ops": sorted(seen["dynamo"]),
            "aot_ops": sorted(seen["aot"])}


def compile_tp(mesh):
    """The TP/SP model under torch.compile, trained three steps."""
    return _compile_check(lambda: _tp_model(mesh),
                          lambda m: _train_tp(m, mesh)[0])


def compile_fsdp(mesh):
    """The FSDP2 model under torch.compile, trained three steps."""
    return _compile_check(lambda: _fsdp_model(mesh), _train_fsdp)


def main():
    rank, world, init_file, out_path = (int(sys.argv[1]), int(sys.argv[2]),
                                        sys.argv[3], sys.argv[4])
    torch.set_num_threads(1)  # two ranks share the machine's cores
    dist.init_process_group("gloo", init_method=f"file://{init_file}",
                            rank=rank, world_size=world,
                            timeout=timedelta(seconds=60))
    mesh = init_device_mesh("cpu", (world,))
    results = {"torch": torch.__version__}
    steps = [("parity", parity_checks), ("inplace", inplace_checks),
             ("reference", lambda m: train_reference()),
             ("tp", train_tp), ("fsdp", train_fsdp),
             ("compile_tp", compile_tp), ("compile_fsdp", compile_fsdp)]
    only = os.environ.get("DIST_WORKER_ONLY")
    for name, fn in steps:
        if only and name not in only.split(","):
            continue
        try:
            results[name] = fn(mesh)
        except Exception as e:  # noqa: BLE001  (reported, asserted on)
            results[name] = {"error": f"{type(e).__name__}: {e}",
                             "traceback": traceback.format_exc()}
        dist.barrier()
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
