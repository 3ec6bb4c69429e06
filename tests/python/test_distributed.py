"""rowops under DTensor sharding, FSDP2 and tensor/sequence parallelism:
two CPU ranks with gloo, started once for the module (dist_worker.py runs
every check on both ranks and reports what it measured; each test below
asserts on one part of the report). Each rank is bounded in time, so a hang
fails instead of stalling the suite."""

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from samples import TOL

HERE = Path(__file__).resolve().parent
WORLD = 2
TIMEOUT_S = 150  # both ranks, everything (about 20 s on two cores)

if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with the gloo backend is not available "
                "in this torch build", allow_module_level=True)

import rowops  # noqa: E402
import dist_worker  # noqa: E402
from rowops.distributed import (  # noqa: E402
    UnsupportedPlacementError, row_placements, supported)
from torch.distributed.tensor import (  # noqa: E402
    DTensor, Partial, Replicate, Shard)

ops = torch.ops.rowops


# ---- the two ranks


def _tail(path, n=4000):
    try:
        return Path(path).read_text()[-n:]
    except OSError:
        return "(no log)"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Both ranks' reports, rank 0's first."""
    tmp = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, ROWOPS_LIBRARY=str(rowops.LIBRARY_PATH),
               OMP_NUM_THREADS="1")
    if "GLOO_SOCKET_IFNAME" not in env and Path("/sys/class/net/lo").exists():
        env["GLOO_SOCKET_IFNAME"] = "lo"
    procs, logs, outs = [], [], []
    for rank in range(WORLD):
        log, out = tmp / f"rank{rank}.log", tmp / f"rank{rank}.json"
        logs.append(log)
        outs.append(out)
        with open(log, "w") as f:
            procs.append(subprocess.Popen(
                [sys.executable, str(HERE / "dist_worker.py"), str(rank),
                 str(WORLD), str(tmp / "init"), str(out)],
                stdout=f, stderr=subprocess.STDOUT, env=env))
    deadline = time.monotonic() + TIMEOUT_S
    try:
        for p in procs:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    finally:
        hung = [r for r, p in enumerate(procs) if p.poll() is None]
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    logs_text = "\n".join(f"--- rank {r} (exit {p.returncode}):\n"
                          f"{_tail(logs[r])}" for r, p in enumerate(procs))
    if hung:
        pytest.fail(f"ranks {hung} still running after {TIMEOUT_S} s "
                    f"(killed)\n{logs_text}")
    if any(p.returncode for p in procs):
        pytest.fail(f"a rank failed\n{logs_text}")
    return [json.loads(o.read_text()) for o in outs]


def _part(report, name):
    """rank 0's report of one check, failing with the error it hit."""
    part = report[0][name]
    if isinstance(part, dict) and "error" in part and "traceback" in part:
        pytest.fail(f"{name}: {part['error']}\n{part['traceback']}")
    return part


# ---- forward and backward of each op in each placement

# What each placement becomes, and the collectives the call makes. A row
# shard or Replicate runs locally: no communication, forward or backward.
# A hidden-dimension shard is all-gathered to Replicate (one collective per
# sharded input: x, and residual for the fused op); rms_norm_rows saves its
# input x, so its backward gathers x again (the fused op saves residual_out,
# already replicated). A Partial x is reduce-scattered to rows (and, saved
# by rms_norm_rows, again in its backward).
GATHER = "c10d_functional.all_gather_into_tensor"
SCATTER = "c10d_functional.reduce_scatter_tensor"
OUT_PLACEMENT = {"rows": "S(0)", "replicate": "R", "hidden": "R",
                 "hidden-neg": "R", "partial": "S(0)", "3d-batch": "S(0)",
                 "3d-seq": "S(1)", "3d-hidden": "R", "1d-hidden": "R"}
HIDDEN = ("hidden", "hidden-neg", "3d-hidden", "1d-hidden")


def expected_comms(op, name):
    fused = op == "fused_add_rms_norm"
    if name in HIDDEN:
        return {GATHER: 2 if fused else 1}, {} if fused else {GATHER: 1}
    if name == "partial":
        return {SCATTER: 1}, {} if fused else {SCATTER: 1}
    return {}, {}


CASE_IDS = ["/".join(c) for c in dist_worker.CASES]


def _close(d, dtype, what):
    rtol, atol = TOL[getattr(torch, dtype)]
    bound = rtol * d["max_ref"] + atol
    assert d["max_abs"] <= bound, \
        f"{what}: max |sharded - single| = {d['max_abs']:.3g} > {bound:.3g}"


@pytest.mark.parametrize("case", CASE_IDS)
def test_forward_equals_single_process(report, case):
    op, dtype, name, _ = case.split("/")
    res = _part(report, "parity")[case]
    for out_name, d in res["outputs"].items():
        _close(d, dtype, out_name)
        assert d["placements"] == [OUT_PLACEMENT[name]], out_name
    assert res["fwd_comms"] == expected_comms(op, name)[0]


@pytest.mark.parametrize("case", CASE_IDS)
def test_backward_equals_single_process(report, case):
    op, dtype, name, _ = case.split("/")
    res = _part(report, "parity")[case]
    rows_sharded = OUT_PLACEMENT[name] != "R"
    for grad_name, d in res["grads"].items():
        if grad_name == "weight" and dtype == "bfloat16" and rows_sharded:
            # each rank's partial sum is rounded to bfloat16 before the
            # reduction: two roundings, each half a unit in the last place
            bound = 2.0 ** -7 * d["max_ref"]
            assert d["max_abs"] <= bound, (d, bound)
        else:
            _close(d, dtype, f"grad {grad_name}")
        want = "P(sum)" if grad_name == "weight" and rows_sharded \
            else "R" if grad_name == "weight" else OUT_PLACEMENT[name]
        assert d["placements"] == [want], grad_name
    assert res["bwd_comms"] == expected_comms(op, name)[1]


def test_ranks_agree(report):
    """Both ranks computed the same full results and losses."""
    for name in ("parity", "tp", "fsdp", "compile_tp", "compile_fsdp"):
        a, b = report[0][name], report[1][name]
        if name == "parity":
            a = {k: v["outputs"] for k, v in a.items()}
            b = {k: v["outputs"] for k, v in b.items()}
        else:
            a, b = a.get("losses"), b.get("losses")
        assert a == b, name


# ---- what cannot run: a clear error, the data untouched


def test_inplace_on_row_shards_runs_locally(report):
    res = _part(report, "inplace")["rows"]
    _close(res["x"], "float32", "x")
    _close(res["residual"], "float32", "residual")
    assert res["comms"] == {}


@pytest.mark.parametrize("name,message", [
    ("hidden", "written in place, so they cannot be redistributed: "
               "rowops: placement S(1) of a 2-dimensional x is not a row "
               "shard"),
    ("partial", "placement P(sum) of a 2-dimensional x is not a row shard"),
    ("mismatch", "x and residual are written in place and must have the "
                 "same placements"),
])
def test_inplace_refuses_what_it_cannot_write(report, name, message):
    res = _part(report, "inplace")[name]
    assert res["error"] is not None and res["error"].startswith(
        "RuntimeError: rowops.fused_add_rms_norm_:"), res["error"]
    assert message in res["error"]
    assert res["untouched"]


def test_mixed_tensor_and_dtensor_is_refused(report):
    err = _part(report, "inplace")["mixed"]["error"]
    assert err is not None and "mixed torch.Tensor and DTensor" in err


# ---- a two-layer model trained three steps


def _same_losses(got, want):
    assert len(got) == len(want) == dist_worker.STEPS
    for g, w in zip(got, want):
        assert math.isclose(g, w, rel_tol=1e-5), (got, want)
    assert want[-1] < want[0]  # it trains


def test_tensor_and_sequence_parallel_training(report):
    ref = _part(report, "reference")
    res = _part(report, "tp")
    _same_losses(res["losses"], ref)
    # the norms run on sequence shards; their weights' gradients are the
    # partial sums over each rank's rows
    assert res["grad_placements"] == {
        "out": ["S(1)"], "layers.0.norm.weight": ["P(sum)"],
        "layers.1.norm.weight": ["P(sum)"], "final.weight": ["P(sum)"]}
    assert res["norm_comms"] == {}  # the norms alone communicate nothing
    # one training step: the linears' gathers and reduce-scatters, one
    # all-reduce per norm weight's Partial gradient, the loss's all-reduce
    assert res["step_comms"] == {GATHER: 4, SCATTER: 3,
                                 "c10d_functional.all_reduce": 3,
                                 "c10d.allreduce_": 1}


def test_fsdp2_training(report):
    ref = _part(report, "reference")
    res = _part(report, "fsdp")
    _same_losses(res["losses"], ref)
    assert set(map(tuple, res["param_placements"].values())) == {("S(0)",)}


@pytest.mark.parametrize("model", ["tp", "fsdp"])
def test_compiled_sharded_model_has_no_graph_break(report, model):
    res = _part(report, f"compile_{model}")
    assert res["graph_breaks"] == {}
    assert res["graphs"] >= 1
    # the ops reach the compiled graphs, forward and backward
    assert res["dynamo_ops"] == ["rowops.fused_add_rms_norm",
                                 "rowops.rms_norm_rows"]
    assert res["aot_ops"] == [
        "rowops.fused_add_rms_norm.default",
        "rowops.fused_add_rms_norm_backward.default",
        "rowops.rms_norm_rows.default",
        "rowops.rms_norm_rows_backward.default"]
    _same_losses(res["losses"], _part(report, "reference"))


# ---- in this process, no ranks


def test_rules_registered_for_every_op():
    table = DTensor._op_dispatcher.sharding_propagator.op_strategy_funcs
    for name in ("rms_norm_rows", "fused_add_rms_norm", "fused_add_rms_norm_",
                 "rms_norm_rows_backward", "fused_add_rms_norm_backward"):
        assert getattr(ops, name).default in table, name


def test_supported_placements():
    assert supported(Replicate(), 2)
    assert supported(Shard(0), 2) and supported(Shard(-2), 2)
    assert supported(Shard(1), 3)
    assert not supported(Shard(1), 2) and not supported(Shard(-1), 3)
    assert not supported(Partial(), 2)
    assert not supported(Shard(0), 1)  # one row: its only dim is hidden
    assert row_placements((Shard(-3), Replicate()), 3) == (Shard(0),
                                                           Replicate())
    with pytest.raises(UnsupportedPlacementError, match=r"S\(1\) of a "
                       r"2-dimensional x is not a row shard"):
        row_placements((Shard(1),), 2)


def test_import_without_torch_distributed():
    """import rowops works where DTensor cannot be imported; rowops.
    distributed is then None."""
    code = ("import sys; sys.modules['torch.distributed.tensor'] = None; "
            f"sys.path.insert(0, {str(HERE.parents[1] / 'python')!r}); "
            "import rowops, torch; "
            "assert rowops.distributed is None; "
            "x = torch.ones(2, 4); "
            "assert torch.allclose(rowops.rms_norm_rows(x)[0], x); "
            "print('ok')")
    env = dict(os.environ, ROWOPS_LIBRARY=str(rowops.LIBRARY_PATH))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


# ---- the bench's distributed path (build/opcost), where it was built


def _opcost():
    exe = Path(rowops.LIBRARY_PATH).parent / "opcost"
    if not exe.exists():
        pytest.skip(f"no opcost driver beside {rowops.LIBRARY_PATH}")
    return exe


def _bench_rows(tmp_path, name, **env):
    """`opcost run --quick --paths distributed` on two small shapes, with
    env; its rows (path, status, note, dispatch_path...)."""
    import csv
    shapes = tmp_path / "shapes.csv"
    shapes.write_text("op,B,N,dtype,layout,freq\n"
                      "fused_add_rms_norm,16,64,float32,contiguous,1\n"
                      "rms_norm_rows,6,40,bfloat16,transposed,1\n")
    out = tmp_path / f"{name}.csv"
    r = subprocess.run(
        [str(_opcost()), "run", "--quick", "--paths", "distributed",
         "--shapes", str(shapes), "--out", str(out)],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, ROWOPS_LIBRARY=str(rowops.LIBRARY_PATH),
                 **env))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    with open(out) as f:
        return list(csv.DictReader(f))


def test_bench_path_times_the_communication(tmp_path):
    """A hidden-dimension shard: every timed call all-gathers, rank 1
    mirrors each call, and the outputs verify."""
    rows = _bench_rows(tmp_path, "hidden",
                       OPCOST_DISTRIBUTED_PLACEMENT="hidden")
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    fused, plain = rows
    assert "2 all_gather_into_tensor, rank 1" in fused["note"]
    assert "1 all_gather_into_tensor, rank 1" in plain["note"]
    for r in rows:
        assert "mirrors each call" in r["note"]
        assert r["dispatch_path"].startswith("dtensor: ")
        assert float(r["median_us"]) > 0


def test_bench_path_skips_without_a_second_rank(tmp_path):
    """Where rank 1 cannot start (here: no such network interface for
    gloo), every point is skipped with the reason, without hanging."""
    rows = _bench_rows(tmp_path, "skip", GLOO_SOCKET_IFNAME="no-such-if0")
    assert [r["status"] for r in rows] == ["skipped", "skipped"]
    for r in rows:
        assert "the second rank did not start" in r["note"]
        assert "no-such-if0" in r["note"]


def test_bench_path_rejects_an_unknown_placement(tmp_path):
    rows = _bench_rows(tmp_path, "bad", OPCOST_DISTRIBUTED_PLACEMENT="cols")
    assert [r["status"] for r in rows] == ["error", "error"]
    assert "OPCOST_DISTRIBUTED_PLACEMENT must be one of rows, hidden, " \
        "replicate, got 'cols'" in rows[0]["note"]
