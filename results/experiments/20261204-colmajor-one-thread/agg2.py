import csv, sys, collections
vs = ['cpu_colmajor_avx512','x_serial','cpu_colmajor_avx2','x_serial2']
for f in sys.argv[1:]:
    pts = collections.OrderedDict()
    for r in csv.DictReader(open(f)):
        if r['status'] != 'ok' or r['path'] != 'kernel': continue
        k = (r['op'][:5], r['dtype'][:4], int(r['B']))
        pts.setdefault(k, {})[r['variant']] = (float(r['ratio']) if r['ratio'] else 1.0, float(r['ratio_ci95_rel'] or 0))
    print(f, 'copies/variant:', ' | '.join(vs), '| serial/tiles (x faster)')
    for k, d in pts.items():
        s = '  '.join(f"{1/d[v][0]:.2f}" if v in d else '  -  ' for v in vs)
        g = f"{d['cpu_colmajor_avx512'][0]/d['x_serial'][0]:.2f} {d['cpu_colmajor_avx2'][0]/d['x_serial2'][0]:.2f}"
        print(k, s, ' ', g)
