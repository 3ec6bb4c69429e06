"""Pick (the kernel-path row of the variant kernel-e2e ran) against the
best fast variant per size-classes row; ratios paired with kernel/cpu_strided
in the same rounds, so pick/best is a ratio of two paired ratios."""
import csv, sys
fast=['cpu_fast_avx2','cpu_fast_avx512','cpu_fast_avx2_nt','cpu_fast_avx512_nt']
for f in sys.argv[1:]:
    d={}
    for r in csv.DictReader(open(f)):
        if r['status']!='ok': continue
        k=(r['op'][:5],r['dtype'],int(r['B']),int(r['N']),r['threads'],r['cache_state'])
        d.setdefault(k,{})[(r['path'],r['variant'])]=r
    for k,v in d.items():
        pick=v[('kernel-e2e','auto')]['dispatch_path']
        rat={n:float(v[('kernel',n)]['ratio']) for n in fast if ('kernel',n) in v}
        ci={n:float(v[('kernel',n)]['ratio_ci95_rel']) for n in fast if ('kernel',n) in v}
        best=min(rat,key=rat.get)
        ordb=min(['cpu_fast_avx2','cpu_fast_avx512'],key=rat.get)
        es=2 if k[1]!='float32' else 4
        mib=k[2]*k[3]*es*(2 if k[0]=='fused' else 1)/2**20
        lvl='L2' if mib<1 else 'LLC' if mib<32 else 'DRAM'
        s=lambda n:n.replace('cpu_fast_','')
        print(f"{f[:9]:9s} {lvl:4s} {k[0]} {k[1]:8s} B={k[2]:<6d} pick={s(pick):10s} pick/best={rat[pick]/rat[best]:.3f} (±{100*(ci[pick]**2+ci[best]**2)**.5:.1f}%) best={s(best):10s} pick/best-ordinary={rat[pick]/rat[ordb]:.3f} ({s(ordb)})")
