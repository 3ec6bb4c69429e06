import csv, sys, collections
vs = sys.argv[1].split(',')
for f in sys.argv[2:]:
    rows = list(csv.DictReader(open(f)))
    pts = collections.OrderedDict()
    for r in rows:
        if r['status'] != 'ok': continue
        k = (r['op'][:5], r['dtype'][:4], int(r['B']))
        name = r['path'] + ('' if r['variant']=='auto' else '['+r['variant']+']')
        pts.setdefault(k, {})[name] = (float(r['ratio']) if r['ratio'] else 1.0, float(r['ratio_ci95_rel'] or 0))
    print(f, 'copies/variant:', ' | '.join(vs))
    for k, d in pts.items():
        print(k, '  '.join(f"{1/d[v][0]:.2f}±{100*d[v][1]:.0f}" if v in d else '  -  ' for v in vs))
