"""Zen 5 tables for issue 30 from results CSVs: variants at DRAM (paired
fraction of the mix ceiling), the pick against the best variant per size
class (paired ratios against kernel/auto), transposed/contiguous per B."""
import csv, sys, math
def load(f): return [r for r in csv.DictReader(open(f)) if r['status']=='ok']
def fl(x):
    try: return float(x)
    except: return math.nan
mode=sys.argv[1]; files=sys.argv[2:]
short=lambda op: 'fused' if op.startswith('fused') else 'rows'
if mode=='bw':
    for f in files:
        R=load(f)
        pts={}
        for r in R:
            if r['layout']!='contiguous': continue
            k=(short(r['op']),r['dtype'],r['threads'])
            v=r['variant'] if r['path']=='kernel' else 'e2e('+r['dispatch_path'].replace('cpu_fast_','')+')'
            pts.setdefault(k,{})[v]=(fl(r['frac_of_peak']),fl(r['frac_of_peak_ci95_rel']))
        for k,d in pts.items():
            cells=[f"{v.replace('cpu_fast_','')} {a:.2f}±{100*c:.0f}%" for v,(a,c) in sorted(d.items()) if v not in('cpu_strided','cpu_fast_portable')]
            print(f, *k, ' | '.join(cells))
elif mode=='sc':
    fast={'cpu_fast_avx2','cpu_fast_avx512','cpu_fast_avx2_nt','cpu_fast_avx512_nt'}
    for f in files:
        R=load(f)
        pts={}
        for r in R:
            if r['path']!='kernel': continue
            k=(short(r['op']),r['dtype'],r['B'],r['N'],r['threads'],r['cache_state'])
            pts.setdefault(k,{})[r['variant']]=r
        for k,d in pts.items():
            a=d['auto']; pick=a['dispatch_path']
            best=None
            for v,r in d.items():
                if v in fast and r['ratio']:
                    q=fl(r['ratio'])
                    if best is None or q<best[1]: best=(v,q,fl(r['ratio_ci95_rel']))
            # ordinary-store best too
            ob=min(((v,fl(r['ratio'])) for v,r in d.items() if v in ('cpu_fast_avx2','cpu_fast_avx512') and r['ratio']), key=lambda t:t[1])
            mib=int(k[2])*int(k[3])*(2 if k[1]!='float32' else 4)*(2 if k[0]=='fused' else 1)/2**20
            print(f"{f:12s} {k[0]:5s} {k[1]:8s} B={k[2]:>6s} out={mib:6.1f}MiB t{k[4]} {k[5]} pick={pick.replace('cpu_fast_',''):10s} pick/best={1/best[1]:.3f}±{100*best[2]:.1f}% best={best[0].replace('cpu_fast_','')} pick/best_ordinary={1/ob[1]:.3f}({ob[0].replace('cpu_fast_','')})")
elif mode=='tr':
    for f in files:
        R=load(f)
        out={}
        for r in R:
            if r['layout']!='transposed' or r['path']!='kernel-e2e': continue
            k=(short(r['op']),r['dtype'],r['threads'])
            q=fl(r['ratio']); out.setdefault(k,[]).append((int(r['B']),1/q,fl(r['ratio_ci95_rel']),r['dispatch_path'].replace('cpu_colmajor_','')))
        for k,l in sorted(out.items()):
            l.sort()
            print(f,*k); print('   '+'  '.join(f"{b}:{x:.2f}" for b,x,c,v in l))
            print('   '+'  '.join(f"{b}:{v.replace('cpu_colmajor_','')}±{100*c:.0f}" for b,x,c,v in l))
