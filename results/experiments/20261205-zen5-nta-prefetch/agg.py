"""Prints, per point of an `opcost run` CSV, each variant's paired fraction
of the DRAM ceiling (with its probe state) and the paired ratio of the
non-temporal-prefetch kernel's time over the L2-prefetch one's (from
`opcost compare --variants A,B --csv`), per width.
usage: python3 agg.py RUN.csv [RUN.csv ...]   (run from the repository root)"""
import csv, subprocess, sys, tempfile, os

PAIRS = [("cpu_fast_avx512_nt", "cpu_fast_avx512_nta"),
         ("cpu_fast_avx2_nt", "cpu_fast_avx2_nta")]


def ratios(run):
    out = {}
    for a, b in PAIRS:
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, "c.csv")
            subprocess.run(["build/opcost", "compare", "--variants", f"{a},{b}",
                            "--csv", f, run], capture_output=True)
            if not os.path.exists(f):
                continue
            for r in csv.DictReader(open(f)):
                key = (r["op"], r["dtype"], r["N"], r["threads"], r["path"])
                out[key, b] = (float(r["ratio"]), float(r["ratio_ci95_rel"] or "nan"))
    return out


for run in sys.argv[1:]:
    rows = [r for r in csv.reader(l for l in open(run) if not l.startswith("#"))]
    head, rows = rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]
    rat = ratios(run)
    print(run)
    points = {}
    for r in rows:
        if r["status"] != "ok" or not r["frac_of_peak"]:
            continue
        key = (r["op"], r["dtype"], r["N"], r["threads"], r["path"])
        points.setdefault(key, {})[r["variant"]] = r
    for key in sorted(points, key=lambda k: (k[0], k[1], int(k[2]))):
        v = points[key]
        cells = []
        for name in ("cpu_fast_avx512_nt", "cpu_fast_avx512_nta", "cpu_fast_avx2_nt",
                     "cpu_fast_avx2_nta", "auto"):
            if name in v:
                f = float(v[name]["frac_of_peak"])
                ci = v[name].get("frac_of_peak_ci95_rel") or "nan"
                cells.append(f"{name.replace('cpu_fast_', '')} {f:.2f}±{float(ci) * 100:.0f}%"
                             f" {v[name].get('probe_state', '')[:1]}")
        for a, b in PAIRS:
            if (key, b) in rat:
                x, ci = rat[key, b]
                cells.append(f"{b.replace('cpu_fast_', '')}/nt x{x:.3f}±{ci * 100:.1f}%")
        print(f"  {key[0][:5]} {key[1]:8} N={key[2]:5} t{key[3]} {key[4]:6} | " + " | ".join(cells))
