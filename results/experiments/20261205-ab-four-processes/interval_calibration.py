"""How well an opcost ab A/A run's intervals hold: each new row's
z = log(ratio) / se (se from ratio_ci95_rel at a normal's 1.96), by one
set's size against half the 32 MiB LLC and by path: their spread (1 for
intervals that hold), the share beyond 1.96 (5 %) and beyond 3.

    python3 interval_calibration.py RUN-ab.csv [...]
"""
import csv,math,statistics,sys,collections
LLC=32*2**20
runs=sys.argv[1:]
tot=collections.defaultdict(list)
for f in runs:
    rows=[r for r in csv.DictReader(open(f)) if r['side']=='new' and r['ratio']]
    for r in rows:
        lr=math.log(float(r['ratio'])); se=math.log1p(float(r['ratio_ci95_rel']))/1.96
        ws=int(r['working_set_bytes']); band='big' if ws*2>LLC else 'small'
        tot[(band,r['path'])].append((lr/se,f[-30:],r['B'],r['dtype'],r['layout'],r['ratio'],r['ratio_ci95_rel'],r['verdict']))
        tot[(band,'*')].append((lr/se,))
for k in sorted(tot):
    z=[t[0] for t in tot[k]]
    mad=statistics.median(abs(x) for x in z)/0.6745
    print('%-6s %-16s n=%4d sd=%.2f mad=%.2f |z|>1.96 %.1f%% |z|>3 %d'%(k[0],k[1],len(z),statistics.pstdev(z),mad,100*sum(abs(x)>1.96 for x in z)/len(z),sum(abs(x)>3 for x in z)))
