"""From `opcost run --shapes size-classes|bandwidth --paths kernel,kernel-e2e
--variants all` results: (1) each DRAM row's paired fraction of the op mix's
ceiling per variant, with its interval and probe state; (2) the pick (the
variant kernel-e2e ran) against the best fast variant of every row, as a
ratio of the two variants' paired ratios to kernel/cpu_strided in the same
rounds (1 = the pick is the best; its interval from the two intervals). In
the cache the eligibility function never streams (docs/dispatch.md: the
next op reads the outputs there), so those rows also compare the pick with
the best ordinary-store variant.
usage: python3 tables.py RUN.csv [RUN.csv ...]"""
import csv, sys

ORDER = ['cpu_fast_avx512_nta', 'cpu_fast_avx512_nt', 'cpu_fast_avx2_nta',
         'cpu_fast_avx2_nt', 'cpu_fast_avx512', 'cpu_fast_avx2',
         'cpu_colmajor_avx512', 'cpu_colmajor_avx2', 'cpu_colmajor_narrow']
FAST = [n for n in ORDER if n.startswith('cpu_fast')]
short = lambda n: n.replace('cpu_fast_', '').replace('cpu_colmajor_', 'colmajor_')

for f in sys.argv[1:]:
    rows = [r for r in csv.DictReader(l for l in open(f) if not l.startswith('#'))]
    pts = {}
    for r in rows:
        if r['status'] != 'ok':
            continue
        k = (r['op'], r['dtype'], int(r['B']), int(r['N']), r['layout'], r['threads'])
        pts.setdefault(k, {})[(r['path'], r['variant'])] = r
    print(f)
    print(' (1) DRAM rows: paired frac_of_peak ± interval [probe state]')
    for k in sorted(pts):
        v = pts[k]
        anyrow = next(iter(v.values()))
        if int(anyrow['working_set_bytes'] or 0) < 64 << 20:
            continue
        cells = []
        e2e = v.get(('kernel-e2e', 'auto'))
        if e2e and e2e['frac_of_peak']:
            cells.append(f"pick {short(e2e['dispatch_path'])} {float(e2e['frac_of_peak']):.2f}"
                         f"±{100 * float(e2e['frac_of_peak_ci95_rel'] or 0):.0f}% [{e2e['probe_state']}]")
        for n in ORDER:
            r = v.get(('kernel', n))
            if r and r['frac_of_peak']:
                cells.append(f"{short(n)} {float(r['frac_of_peak']):.2f}"
                             f"±{100 * float(r['frac_of_peak_ci95_rel'] or 0):.0f}%")
        print(f"  {k[0][:5]} {k[1]:8} B={k[2]:<6} {k[4][:5]} t{k[5]}: " + '; '.join(cells))
    print(' (2) pick / best fast variant (paired ratios to cpu_strided)')
    for k in sorted(pts, key=lambda k: (k[4], k[0], k[1], int(pts[k][next(iter(pts[k]))]['working_set_bytes'] or 0))):
        v = pts[k]
        if k[4] != 'contiguous' or ('kernel-e2e', 'auto') not in v:
            continue
        pick = v[('kernel-e2e', 'auto')]['dispatch_path']
        rat = {n: float(v[('kernel', n)]['ratio']) for n in FAST
               if ('kernel', n) in v and v[('kernel', n)]['ratio']}
        ci = {n: float(v[('kernel', n)]['ratio_ci95_rel'] or 0) for n in rat}
        if pick not in rat:
            continue
        best = min(rat, key=rat.get)
        ws = int(v[('kernel-e2e', 'auto')]['working_set_bytes'] or 0)
        lvl = 'L2' if ws < 1 << 20 else 'LLC' if ws < 32 << 20 else 'DRAM'
        ordinary = [n for n in rat if not n.endswith(('_nt', '_nta'))]
        ob = min(ordinary, key=rat.get) if ordinary else best
        iv = lambda a, b: 100 * (ci[a] ** 2 + ci[b] ** 2) ** .5
        extra = '' if lvl == 'DRAM' else (f"; pick/best ordinary x{rat[pick] / rat[ob]:.3f} "
                                          f"±{iv(pick, ob):.1f}% ({short(ob)})")
        print(f"  {lvl:4} {k[0][:5]} {k[1]:8} t{k[5]} {v[('kernel-e2e', 'auto')]['cache_state']:4} "
              f"pick {short(pick):11} pick/best x{rat[pick] / rat[best]:.3f} ±{iv(pick, best):.1f}% "
              f"({short(best)}){extra} [{v[('kernel', pick)]['probe_state'] or '-'}]")
