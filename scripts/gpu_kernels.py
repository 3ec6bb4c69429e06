#!/usr/bin/env python3
"""The kernels part of scripts/gpu-check.sh, on a CUDA device: per-dtype
maximum error of every rowops CUDA path against the float64 formula, and
timings of the fused op at the issue's bfloat16 shapes against a
device-to-device copy measured here (the ceiling), eager `x + r` then
`F.rms_norm`, and the compiled reference (torch.compile of that
composite), plus the CUDA-graph floor at B = 1.

Every timing is a CUDA graph of `reps` calls over rotating input sets
(together at least 4x the L2, so every call reads DRAM), replayed several
times; the median replay over reps is one call's time. Bytes moved: x,
residual and weight read once, out and residual_out written once, rstd.

    ROWOPS_LIBRARY=build/librowops_torch.so python3 scripts/gpu_kernels.py \
        --out OUTDIR [--budget SECONDS]

Writes OUTDIR/kernels_errors.csv, OUTDIR/kernels_timing.csv and prints
both tables; exits 1 when an error exceeds its tolerance."""

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "python"))

import rowops  # noqa: E402
from samples import TOL, formula, make_sample  # noqa: E402

try:
    import rowops.triton as rtriton  # noqa: E402
except Exception as e:  # noqa: BLE001  (no triton: its rows say so)
    rtriton = None
    TRITON_ERROR = repr(e)

ops = torch.ops.rowops
SHAPES = [(16384, 4096), (4096, 32768), (65536, 128), (2048, 65536)]
RSTD_BOUND = 9 * 2.0**-24


def errors(start, budget):
    """Largest error / tolerance per (op, dtype, kernel) over layouts."""
    rows = []
    cases = [("contiguous", 37, 4096), ("contiguous", 3, 65536),
             ("transposed", 37, 4097), ("row_sliced", 37, 1000),
             ("misaligned", 37, 1000), ("3d", 11, 333),
             ("contiguous", 2, 70000)]
    for op in ("rms_norm_rows", "fused_add_rms_norm"):
        for dtype in (torch.float32, torch.float16, torch.bfloat16,
                      torch.float64):
            worst = {}
            for layout, B, N in cases:
                if time.time() - start > budget:
                    break
                s = make_sample(op, layout, B, N, dtype, "cuda")
                variants = [("rowops", getattr(ops, op))]
                if (rtriton and op == "fused_add_rms_norm"
                        and dtype != torch.float64):
                    variants.append(("triton", rtriton.fused_add_rms_norm))
                want = formula(s)
                rtol, atol = TOL[dtype]
                for name, fn in variants:
                    got = fn(*s.args)
                    impl = (ops._last_dispatch() if name == "rowops"
                            else "triton")
                    out_err = ((got[0].double() - want[0]).abs()
                               / (atol + rtol * want[0].abs())).max().item()
                    rstd_err = (got[-1].double() / want[-1] - 1).abs().max()
                    h_ok = (op == "rms_norm_rows"
                            or torch.equal(got[1], want[1]))
                    key = impl
                    w = worst.setdefault(key, [0.0, 0.0, True, ""])
                    if out_err > w[0]:
                        w[0], w[3] = out_err, f"{layout} {B}x{N}"
                    w[1] = max(w[1], rstd_err.item())
                    w[2] = w[2] and h_ok
            for impl, (out_err, rstd_err, h_ok, where) in sorted(worst.items()):
                bound = 1e-12 if dtype == torch.float64 else RSTD_BOUND
                rows.append({
                    "op": op, "dtype": str(dtype)[6:], "impl": impl,
                    "max_err_over_tol": f"{out_err:.3f}",
                    "worst_case": where,
                    "rstd_rel_err": f"{rstd_err:.2e}",
                    "rstd_bound": f"{bound:.1e}",
                    "residual_out_exact": "yes" if h_ok else "NO",
                    "ok": "yes" if (out_err <= 1 and rstd_err <= bound
                                    and h_ok) else "NO"})
    return rows


def graph_time(fn, sets, reps, replays=7):
    """Median microseconds per call of fn(*set) captured reps times."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for s in sets[:2]:
            fn(*s)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(reps):
            fn(*sets[i % len(sets)])
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / reps)
    del graph
    return sorted(times)[len(times) // 2]


def copy_ceiling():
    """GB/s of a 2 GiB device-to-device copy (bytes read + written), the
    faster of two forms: copy_ (in a graph, a memcpy node) and an
    elementwise kernel (mul by 1). On an H200 the memcpy node read 2773
    GB/s where kernels moved 4000 (2026-12-04), which put paths at 1.45
    of a ceiling that was none."""
    n = 1 << 30
    src = torch.empty(n, dtype=torch.bfloat16, device="cuda").normal_()
    dst = torch.empty_like(src)
    forms = {"memcpy": lambda: dst.copy_(src),
             "kernel": lambda: torch.mul(src, 1, out=dst)}
    gbs = {name: 2 * n * 2 / (graph_time(fn, [()], reps=10, replays=5)
                              * 1e-6) / 1e9 for name, fn in forms.items()}
    del src, dst
    best = max(gbs, key=gbs.get)
    return gbs[best], ", ".join(f"{k} {v:.0f}" for k, v in gbs.items())


def eager(x, r, w, eps=1e-6):
    h = x + r
    return F.rms_norm(h, (h.shape[-1],), w, eps), h


def timings(start, budget, ceiling):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    compiled = torch.compile(eager, dynamic=False)
    rows = []
    for B, N in SHAPES:
        dt = torch.bfloat16
        nbytes = (4 * B * N + N) * 2 + 4 * B
        nsets = max(1, math.ceil(4 * l2 / nbytes))
        gen = torch.Generator(device="cuda").manual_seed(B + N)
        sets = []
        for _ in range(nsets):
            x = torch.randn(B, N, device="cuda", generator=gen).to(dt)
            r = torch.randn(B, N, device="cuda", generator=gen).to(dt)
            sets.append((x, r, torch.randn(N, device="cuda",
                                           generator=gen).to(dt)))
        reps = max(nsets, min(200, int(2e9 / nbytes)))
        d = rowops.explain_dispatch("fused_add_rms_norm", *sets[0])
        paths = [("rowops " + d.impl, ops.fused_add_rms_norm)]
        if rtriton:
            paths.append(("rowops.triton", rtriton.fused_add_rms_norm))
        paths.append(("eager x+r, F.rms_norm", eager))
        paths.append(("compiled reference", compiled))
        res = {}
        for name, fn in paths:
            if time.time() - start > budget:
                res[name] = None
                continue
            try:
                res[name] = graph_time(fn, sets, reps)
            except Exception as e:  # noqa: BLE001
                print(f"  {name} at {B}x{N}: {e!r}", file=sys.stderr)
                res[name] = None
        base_e = res.get("eager x+r, F.rms_norm")
        base_c = res.get("compiled reference")
        for name, us in res.items():
            gbs = nbytes / (us * 1e-6) / 1e9 if us else None
            rows.append({
                "shape": f"{B}x{N}", "path": name,
                "us": f"{us:.2f}" if us else "skipped",
                "GB/s": f"{gbs:.0f}" if gbs else "",
                "of_copy_ceiling": f"{gbs / ceiling:.2f}" if gbs else "",
                "vs_eager": f"{base_e / us:.2f}x" if us and base_e else "",
                "vs_compiled": f"{base_c / us:.2f}x" if us and base_c else "",
                "reason": d.reason if name.startswith("rowops cuda") else ""})
        del sets
        torch.cuda.empty_cache()
    # B = 1: a call against the CUDA-graph floor (the smallest kernel)
    x = torch.randn(1, 4096, device="cuda").to(torch.bfloat16)
    r, w = torch.randn_like(x), torch.randn(4096, device="cuda").bfloat16()
    one = torch.empty(1, device="cuda")
    floor = graph_time(lambda: one.fill_(1.0), [()], reps=200)
    b1 = graph_time(ops.fused_add_rms_norm, [(x, r, w)], reps=200)
    rows.append({"shape": "1x4096", "path": "CUDA-graph floor (fill_ of 1)",
                 "us": f"{floor:.2f}", "GB/s": "", "of_copy_ceiling": "",
                 "vs_eager": "", "vs_compiled": "", "reason": ""})
    rows.append({"shape": "1x4096",
                 "path": "rowops " + ops._last_dispatch(),
                 "us": f"{b1:.2f}", "GB/s": "", "of_copy_ceiling": "",
                 "vs_eager": "", "vs_compiled": "",
                 "reason": f"{b1 - floor:+.2f} us over the floor"})
    return rows


def table(rows):
    if not rows:
        return "(none)"
    keys = list(rows[0])
    width = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    lines = ["  ".join(k.ljust(width[k]) for k in keys)]
    lines += ["  ".join(str(r[k]).ljust(width[k]) for k in keys)
              for r in rows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=150.0,
                    help="seconds; later measurements are skipped past it")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not torch.cuda.is_available():
        print("gpu_kernels: no CUDA device on this machine", file=sys.stderr)
        return 2
    start = time.time()
    if rtriton is None:
        print(f"gpu_kernels: rowops.triton unavailable: {TRITON_ERROR}")
    err_rows = errors(start, args.budget / 3)
    ceiling, forms = copy_ceiling()
    time_rows = timings(start, args.budget, ceiling)
    for name, rows in (("kernels_errors.csv", err_rows),
                       ("kernels_timing.csv", time_rows)):
        with open(out / name, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}"
          f", D2D copy ceiling {ceiling:.0f} GB/s (read + write; the faster"
          f" of {forms})")
    print("\nmax error (err / (atol + rtol |want|), 1 = at tolerance):")
    print(table(err_rows))
    print("\nbfloat16 fused_add_rms_norm, CUDA graphs, inputs beyond L2:")
    print(table(time_rows))
    print(f"\ngpu_kernels: {time.time() - start:.0f} s")
    return 0 if all(r["ok"] == "yes" for r in err_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
