"""Under ROWOPS_CPU_CAPABILITY=avx2: the pick (kernel/auto's dispatch_path)
against the best AVX2 variant per size-classes row. Each variant's ratio is
paired with kernel/auto in the same rounds, so pick/best = 1 / min(ratio)
where the picked variant's own ratio is its A/A against auto."""
import csv, sys
fast = ['cpu_fast_avx2', 'cpu_fast_avx2_nt']
for f in sys.argv[1:]:
    d = {}
    for r in csv.DictReader(open(f)):
        if r['status'] != 'ok' or r['path'] != 'kernel':
            continue
        k = (r['op'][:5], r['dtype'], int(r['B']), int(r['N']), r['threads'],
             r['cache_state'])
        d.setdefault(k, {})[r['variant']] = r
    worst = []
    for k, v in d.items():
        pick = v['auto']['dispatch_path']
        rat = {n: float(v[n]['ratio']) for n in fast if n in v}
        ci = {n: float(v[n]['ratio_ci95_rel']) for n in fast if n in v}
        best = min(rat, key=rat.get)
        es = 2 if k[1] != 'float32' else 4
        mib = k[2] * k[3] * es * (2 if k[0] == 'fused' else 1) / 2**20
        lvl = 'L2' if mib < 1 else 'LLC' if mib < 32 else 'DRAM'
        s = lambda n: n.replace('cpu_fast_', '')
        pb = rat[pick] / rat[best]
        worst.append(pb)
        print(f"t{k[4]} {k[5]:4s} {lvl:4s} {k[0]} {k[1]:8s} B={k[2]:<6d} "
              f"pick={s(pick):8s} pick/best={pb:.3f} "
              f"(±{100*(ci[pick]**2+ci[best]**2)**.5:.1f}%) best={s(best)}")
    print(f, 'rows', len(worst), 'within 3 %:', sum(w <= 1.03 for w in worst),
          'worst x%.3f' % max(worst))
