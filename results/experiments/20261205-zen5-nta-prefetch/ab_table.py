"""Per point of `opcost ab` results: the new build's time over the base's
(paired, with its 95 % interval and verdict).  usage: python3 ab_table.py F.csv ..."""
import csv, sys
for f in sys.argv[1:]:
    rows = [r for r in csv.DictReader(l for l in open(f) if not l.startswith('#'))
            if r.get('side') == 'new' and r['ratio']]
    print(f.split('/')[-1])
    for r in rows:
        ws = int(r['working_set_bytes'] or 0)
        lvl = 'L2' if ws < 1 << 20 else 'LLC' if ws < 32 << 20 else 'DRAM'
        print(f"  {r['op'][:5]} {r['dtype']:8} N={r['N']:5} B={r['B']:6} {lvl:4} "
              f"x{float(r['ratio']):.3f} ±{100 * float(r['ratio_ci95_rel']):.1f}% {r['verdict']}")
