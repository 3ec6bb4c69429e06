# scratch: rowops in-place vs vLLM in-place, alternating on the same buffers, warm
import sys, time, random, statistics, torch
sys.path.insert(0, '/work/main/python')
import rowops
torch.ops.load_library('/tmp/peerdl/vllm/vllm/_C_AVX2.abi3.so' if len(sys.argv) < 2 or sys.argv[1] == 'avx2' else '/tmp/peerdl/vllm/vllm/_C_AVX512.abi3.so')
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_num_threads(threads)
N = 4096
ro = torch.ops.rowops.fused_add_rms_norm_
vl = torch.ops._C.fused_add_rms_norm
for dt in (torch.bfloat16, torch.float32):
    for B in (1, 8, 64, 512, 4096):
        x = torch.randn(B, N, dtype=dt); r = torch.randn(B, N, dtype=dt); w = torch.randn(N, dtype=dt)
        x0, r0 = x.clone(), r.clone()
        disp = rowops.explain_dispatch(ro, x, r, w, 1e-6)
        inner = max(1, int(2000 / max(1, B)))
        def t(f):
            x.copy_(x0); r.copy_(r0)
            f(x, r, w, 1e-6)
            t0 = time.perf_counter_ns()
            for _ in range(inner):
                f(x, r, w, 1e-6)
            return (time.perf_counter_ns() - t0) / inner / 1e3
        ratios = []; a=[]; b=[]
        for _ in range(60):
            if random.random() < 0.5:
                ta = t(ro); tb = t(vl)
            else:
                tb = t(vl); ta = t(ro)
            ratios.append(ta / tb); a.append(ta); b.append(tb)
        ratios.sort()
        print(f"{str(dt)[6:]:8} B={B:5} rowops {statistics.median(a):9.2f} us vllm {statistics.median(b):9.2f} us  ratio {statistics.median(ratios):.3f} [{ratios[15]:.3f},{ratios[44]:.3f}]  {disp.impl}", flush=True)
