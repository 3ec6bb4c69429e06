import csv, sys, collections
# per (op, dtype, B): copies/variant  (ratio of kernel/auto over variant)
for f in sys.argv[1:]:
    rows = list(csv.DictReader(open(f)))
    pts = collections.OrderedDict()
    for r in rows:
        if r['status'] != 'ok': continue
        k = (r['op'][:5], r['dtype'][:4], int(r['B']))
        name = r['path'] + ('' if r['variant']=='auto' else '['+r['variant']+']')
        pts.setdefault(k, {})[name] = (float(r['ratio']) if r['ratio'] else 1.0, r['ratio_ci95_rel'], r['dispatch_path'][:22])
    vs = ['kernel-e2e','kernel[cpu_colmajor_avx512]','kernel[x_scratch_l2]','kernel[x_scratch_l3]']
    print(f, '  copies/variant (1 = contiguous speed):', ' | '.join(vs))
    for k, d in pts.items():
        print(k, '  '.join(f"{1/d[v][0]:.2f}" if v in d else '  -  ' for v in vs), d.get('kernel-e2e',(0,0,''))[2])
