"""Frequency-weighted cost per call (us) of kernel-e2e from the transposed
layout against the row kernel on contiguous copies (kernel/auto) of the
same points, per op and dtype."""
import csv, sys
for f in sys.argv[1:]:
    acc={}
    for r in csv.DictReader(open(f)):
        if r['layout']!='transposed' or r['status']!='ok': continue
        k=(r['op'][:5],r['dtype'],r['threads'])
        a=acc.setdefault(k,{}).setdefault(int(r['B']),{})
        if r['path']=='kernel-e2e': a['t']=float(r['median_us']); a['f']=float(r['freq'])
        if r['path']=='kernel' and r['variant']=='auto': a['c']=float(r['median_us'])
    for k,bs in acc.items():
        fs=sum(v['f'] for v in bs.values())
        t=sum(v['f']*v['t'] for v in bs.values())/fs; c=sum(v['f']*v['c'] for v in bs.values())/fs
        print(f.split('/')[-1][:16], *k, f"transposed {t:.1f} us, contiguous copies {c:.1f} us, ratio {c/t:.2f}")
