import csv,sys
res={}
fs=sys.argv[1:]
for f in fs:
    for r in csv.DictReader(open(f'/tmp/xpf/cmp-{f}.csv')):
        k=(r['op'][:5],r['dtype'][:4],int(r['B']))
        res.setdefault(k,{})[f]=(float(r['ratio']),float(r['ratio_ci95_rel']))
print('time / base:', fs)
for k in res:
    print(k, ' '.join(f"{res[k][f][0]:.3f}±{100*res[k][f][1]:.1f}" if f in res[k] else '-' for f in fs))
