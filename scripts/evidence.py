"""`make evidence`: what the compiler did with the rowops op, written to
results/evidence/ (Python only because torch.compile and torch.export have
no C API):

  graph_breaks.txt            torch._dynamo.explain of the norm site
  fx_graph.txt                the captured graphs (Dynamo, AOT forward and
                              backward), each node with its fake output
                              metadata: shape, dtype, stride, device
  inductor_output_code.py     Inductor's output code, opaque boundary
                              (forward and backward)
  inductor_output_code_decomposed.py   the same, decomposed boundary
  exported_program.txt        torch.export with a dynamic batch dimension
  boundary.csv, boundary.md   opaque vs decomposed under compile: time per
                              call for a decode-sized, a medium and a large
                              shape, and the generated kernels' passes
"""

import argparse
import csv
import os
import re
import statistics
import sys
import time
from pathlib import Path

import torch
from torch._inductor.utils import run_and_get_code

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import rowops  # noqa: E402

HIDDEN = 4096
SHAPES = (("decode", 8), ("medium", 256), ("large", 4096))


def meta_text(v):
    if isinstance(v, torch.Tensor):
        return (f"shape={tuple(v.shape)} dtype={v.dtype} "
                f"stride={tuple(v.stride())} device={v.device}")
    if isinstance(v, (list, tuple)):
        return "(" + ", ".join(meta_text(x) for x in v) + ")"
    return repr(v)


def graph_text(title, gm):
    lines = [f"## {title}", ""]
    for n in gm.graph.nodes:
        val = n.meta.get("val", n.meta.get("example_value"))
        target = n.target if n.op != "call_function" else str(n.target)
        lines.append(f"{n.name:28s} {n.op:14s} {target}")
        if val is not None:
            lines.append(f"{'':28s} -> {meta_text(val)}")
    return "\n".join(lines) + "\n\n" + gm.code + "\n"


def site_inputs(B, dtype, requires_grad=False):
    g = torch.Generator().manual_seed(B)
    h = torch.randn(B, 256, generator=g).to(dtype)
    r = torch.randn(B, HIDDEN, generator=g).to(dtype)
    return h.requires_grad_(requires_grad), r.requires_grad_(requires_grad)


def capture_graphs(site, h, r):
    """Dynamo's graph and the AOT forward/backward graphs, with metadata."""
    from torch._dynamo.backends.common import aot_autograd
    texts = []

    def dynamo_backend(gm, example_inputs):
        texts.append(graph_text("Dynamo graph (captured)", gm))

        def fw(g, _):
            texts.append(graph_text("AOT forward graph", g))
            return g.forward

        def bw(g, _):
            texts.append(graph_text("AOT backward graph", g))
            return g.forward
        return aot_autograd(fw_compiler=fw, bw_compiler=bw)(gm, example_inputs)

    torch._dynamo.reset()
    y, res = torch.compile(site, backend=dynamo_backend, fullgraph=True)(h, r)
    (y.float().sum() + res.float().sum()).backward()
    return "\n".join(texts)


def output_code(site, h, r):
    torch._dynamo.reset()
    compiled = torch.compile(site, fullgraph=True)

    def step():
        y, res = compiled(h, r)
        (y.float().sum() + res.float().sum()).backward()
    _, codes = run_and_get_code(step)
    return "\n\n# ==== next module ====\n\n".join(codes)


def kernel_summary(code):
    """Generated kernels and, per kernel, its loops over the row."""
    kernels = re.findall(r"^(cpp_fused_\w+) = async_compile", code, re.M)
    calls = re.findall(r"torch\.ops\.rowops\.(\w+)\.default\(", code)
    return kernels, calls


# ---- timing: inputs rotated beyond the last-level cache, as the bench

def time_per_call(fn, sets, min_time=0.4):
    for i in range(3):
        fn(*sets[i % len(sets)])
    samples, n = [], 0
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(samples) < 7:
        t0 = time.perf_counter()
        for _ in range(8):
            fn(*sets[n % len(sets)])
            n += 1
        samples.append((time.perf_counter() - t0) / 8 * 1e6)
    return statistics.median(samples), len(samples)


def make_sets(B, dtype, budget=128 << 20):
    per = 2 * B * HIDDEN * torch.finfo(dtype).bits // 8
    count = max(2, min(4096, budget // per))
    g = torch.Generator().manual_seed(B)
    w = torch.randn(HIDDEN, generator=g).to(dtype)
    return [(torch.randn(B, HIDDEN, generator=g).to(dtype),
             torch.randn(B, HIDDEN, generator=g).to(dtype), w)
            for _ in range(count)]


def boundary_table(out_dir, dtypes):
    rows = []
    codes = {}
    for boundary, op in (("opaque", torch.ops.rowops.fused_add_rms_norm),
                         ("decomposed",
                          torch.ops.rowops.fused_add_rms_norm_reference)):
        def norm(x, r, w, op=op):
            return op(x, r, w, 1e-6)
        for dtype in dtypes:
            for name, B in SHAPES:
                sets = make_sets(B, dtype)
                torch._dynamo.reset()
                compiled = torch.compile(norm, fullgraph=True)
                _, code = run_and_get_code(compiled, *sets[0])
                code = "\n".join(code)
                codes[(boundary, dtype)] = code
                kernels, calls = kernel_summary(code)
                us, n = time_per_call(compiled, sets)
                eager_us, _ = time_per_call(norm, sets)
                moved = 4 * B * HIDDEN * torch.finfo(dtype).bits // 8
                rows.append(dict(
                    boundary=boundary, dtype=str(dtype)[6:], shape=name, B=B,
                    N=HIDDEN, compiled_us=f"{us:.2f}",
                    eager_us=f"{eager_us:.2f}", samples=n,
                    gbps=f"{moved / us / 1e3:.1f}",
                    rowops_calls=" ".join(calls) or "-",
                    generated_kernels=" ".join(kernels) or "-"))
                print(f"  {boundary:10s} {str(dtype)[6:]:8s} {name:6s} "
                      f"B={B:5d}: compiled {us:9.2f} us, eager {eager_us:9.2f}"
                      f" us", flush=True)
    with open(out_dir / "boundary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (out_dir / "inductor_output_code_norm_decomposed.py").write_text(
        codes[("decomposed", dtypes[0])])
    (out_dir / "inductor_output_code_norm_opaque.py").write_text(
        codes[("opaque", dtypes[0])])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "results" / "evidence"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.threads)
    dtype = torch.bfloat16
    torch.manual_seed(0)
    site = rowops.nn.NormSite(HIDDEN, inner=256, dtype=dtype)
    h, r = site_inputs(8, dtype)

    torch._dynamo.reset()
    explain = torch._dynamo.explain(site)(h, r)
    (out / "graph_breaks.txt").write_text(
        f"torch {torch.__version__}; rowops.nn.NormSite(hidden={HIDDEN}, "
        f"inner=256, bfloat16), input [8, 256], residual [8, {HIDDEN}]\n"
        f"graph_count: {explain.graph_count}\n"
        f"graph_break_count: {explain.graph_break_count}\n"
        f"op_count: {explain.op_count}\n"
        f"break_reasons: {explain.break_reasons}\n")
    print(f"graph breaks: {explain.graph_break_count}")

    hg, rg = site_inputs(8, dtype, requires_grad=True)
    (out / "fx_graph.txt").write_text(capture_graphs(site, hg, rg))
    (out / "inductor_output_code.py").write_text(output_code(site, hg, rg))
    decomposed = rowops.nn.NormSite(HIDDEN, inner=256, dtype=dtype,
                                    boundary="decomposed")
    decomposed.load_state_dict(site.state_dict())
    (out / "inductor_output_code_decomposed.py").write_text(
        output_code(decomposed, hg, rg))

    batch = torch.export.Dim("batch", min=1, max=8192)
    ep = torch.export.export(site.eval(), (h, r), dynamic_shapes={
        "hidden": {0: batch}, "residual": {0: batch}})
    (out / "exported_program.txt").write_text(str(ep))

    print("opaque vs decomposed under torch.compile (norm alone, "
          f"N = {HIDDEN}, inputs rotated beyond the LLC):")
    boundary_table(out, (torch.bfloat16, torch.float32))
    print(f"evidence written to {out}")


if __name__ == "__main__":
    main()
