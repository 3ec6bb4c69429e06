# scratch: rowops in place (modes via ROWOPS_TRY) vs vLLM/zentorch in place, alternating, warm or cold
import sys, os, time, random, statistics, torch
sys.path.insert(0, '/work/main/python')
site='/root/.cache/opcost/peers-ac55c5157593/site'
sys.path.insert(0, site)
import rowops
cap = os.environ.get('ROWOPS_CPU_CAPABILITY','')
torch.ops.load_library(site+('/vllm/_C_AVX2.abi3.so' if cap=='avx2' else '/vllm/_C_AVX512.abi3.so'))
import warnings; warnings.filterwarnings('ignore')
try:
    import zentorch; zt = torch.ops.zentorch.zentorch_add_rms_norm_
except Exception as e:
    print('no zentorch', e); zt=None
threads = int(os.environ.get('T', '1')); torch.set_num_threads(threads)
cold = os.environ.get('COLD','0')=='1'
modes = [int(m) for m in os.environ.get('MODES','0,1').split(',')]
N = 4096
ro = torch.ops.rowops.fused_add_rms_norm_
FUNC = os.environ.get('FUNC','0')=='1'
if FUNC: ro = torch.ops.rowops.fused_add_rms_norm
vl = torch.ops._C.fused_add_rms_norm
big = torch.empty(64<<20, dtype=torch.float32) if cold else None
dts = {'bf16':torch.bfloat16,'f32':torch.float32}
for dn in os.environ.get('DT','f32').split(','):
    dt=dts[dn]
    for B in [int(b) for b in os.environ.get('BS','1,8,64,204,925').split(',')]:
        x = torch.randn(B, N, dtype=dt); r = torch.randn(B, N, dtype=dt); w = torch.randn(N, dtype=dt)
        x0, r0 = x.clone(), r.clone()
        disp = rowops.explain_dispatch(ro, x, r, w, 1e-6)
        inner = 1 if cold else max(1, int(2000 / max(1, B)))
        def mk(m, g=ro):
            def f(x,r,w,e):
                os.environ['ROWOPS_TRY']=str(m%100); os.environ['ROWOPS_GRAIN']=str((m//100)*1024); g(x,r,w,e)
            return f
        fns = {f'ro{m}':mk(m) for m in modes}
        if not FUNC: fns['vllm'] = mk(-1, vl)
        if zt and not FUNC: fns['zt'] = mk(-1, lambda x,r,w,e: zt(x,w,r,e))
        def t(f):
            x.copy_(x0); r.copy_(r0)
            if cold: big.fill_(1.0)
            else: f(x, r, w, 1e-6)
            t0 = time.perf_counter_ns()
            for _ in range(inner):
                f(x, r, w, 1e-6)
            return (time.perf_counter_ns() - t0) / inner / 1e3
        res = {k:[] for k in fns}
        rounds = int(os.environ.get('R','40'))
        for _ in range(rounds):
            ks = list(fns); random.shuffle(ks)
            for k in ks: res[k].append(t(fns[k]))
        base=f'ro{modes[0]}'
        out=[f"{dn} B={B:5}"]
        for k in fns:
            rat = sorted(a/b for a,b in zip(res[k],res[base]))
            out.append(f"{k} {statistics.median(res[k]):8.2f} ({statistics.median(rat):.3f})")
        print('  '.join(out), disp.impl, flush=True)
