"""`make bench` until the C benchmark driver lands (bench issue): a short CPU
demonstration timing the rowops op, the reference composite and the unfused
eager sequence on a few Llama-3.1-8B-sized shapes (N = 4096), contiguous and
transposed. Median of 7 repetitions, each timing enough calls to span at
least 20 ms. Results are printed only; nothing is written."""

import statistics
import time

import torch
import torch.nn.functional as F

import rowops


def eager_unfused(x, r, w, eps):
    h = x + r
    return F.rms_norm(h, (h.shape[-1],), w, eps), h


def time_call(fn, reps=7, min_s=0.02):
    fn()  # warm-up
    calls, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < min_s:
        fn()
        calls += 1
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def main():
    print(f"rowops demo: torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, "
          f"CPU capability {torch.backends.cpu.get_cpu_capability()}")
    print(f"{'layout':<11}{'dtype':<10}{'B':>6}{'N':>6}  {'impl':<12}"
          f"{'rowops us':>10}{'reference us':>14}{'eager us':>10}")
    for layout in ("contiguous", "transposed"):
        for dtype in (torch.bfloat16, torch.float32):
            for B in (1, 16, 256):
                N = 4096
                x = torch.randn(B, N, dtype=dtype)
                r = torch.randn(B, N, dtype=dtype)
                if layout == "transposed":
                    x = x.t().contiguous().t()
                    r = r.t().contiguous().t()
                w = torch.randn(N, dtype=dtype)
                impl = rowops.explain_dispatch("fused_add_rms_norm", x, r,
                                               w).impl
                t_op = time_call(lambda: rowops.fused_add_rms_norm(x, r, w))
                t_ref = time_call(
                    lambda: rowops.reference.fused_add_rms_norm(x, r, w))
                t_eager = time_call(lambda: eager_unfused(x, r, w, 1e-6))
                print(f"{layout:<11}{str(dtype)[6:]:<10}{B:>6}{N:>6}  "
                      f"{impl:<12}{t_op:>10.1f}{t_ref:>14.1f}{t_eager:>10.1f}")
    print("impl is what the eligibility function chose (rowops.explain_dispatch);"
          " transposed inputs with B > 1 run the strided kernel.")


if __name__ == "__main__":
    main()
