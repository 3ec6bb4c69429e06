"""Per-process contrasts of an `opcost ab` run, from its two files.

A row's samples in <run>-ab.samples.csv are its side's processes merged by
round, process 0 first within a round (rounds.c, opcost_member_merge), so
a round holding two samples is process 0 then process 1. The contrast of
a row is the mean over its rounds of log(process 0 / process 1); it is 0
but for what each process's own placement does. Writes every row's
contrast to contrasts.csv (the samples files, 30-35 MB a run, are not
kept), then prints the median and 90th percentile of |contrast| per path
and per size of one input set; with no runs named it reads contrasts.csv.

    python3 process_contrasts.py [RUN-ab.csv ...]
"""
import collections
import csv
import math
import statistics
import sys


def size_class(ws):
    return ("< 4 MiB" if ws < 4 << 20 else "4-16 MiB" if ws < 16 << 20
            else "16-64 MiB" if ws < 64 << 20 else ">= 64 MiB")


def contrasts(run):
    rows = list(csv.DictReader(open(run)))
    rounds = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(run.replace("-ab.csv", "-ab.samples.csv")) as f:
        for s in csv.DictReader(f):
            rounds[int(s["point"])][int(s["round"])].append(float(s["us"]))
    for i, r in enumerate(rows):
        v = [math.log(a[0] / a[1]) for a in rounds[i].values() if len(a) == 2]
        if r["status"] == "ok" and len(v) >= 10:
            yield r, statistics.fmean(v)


FIELDS = ["run", "side", "path", "dtype", "layout", "B", "working_set_bytes",
          "contrast"]


def main(runs):
    if runs:
        with open("contrasts.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            for run in runs:
                for r, d in contrasts(run):
                    w.writerow([run.split("/")[-1]] +
                               [r[k] for k in FIELDS[1:-1]] + [f"{d:.6f}"])
    by = collections.defaultdict(list)
    with open("contrasts.csv") as f:
        for r in csv.DictReader(f):
            by[(r["path"], size_class(int(r["working_set_bytes"])))].append(
                abs(float(r["contrast"])))
    order = ["< 4 MiB", "4-16 MiB", "16-64 MiB", ">= 64 MiB"]
    print("| path | one set | contrasts | median abs | p90 abs |")
    print("|---|---|---|---|---|")
    for (path, cls) in sorted(by, key=lambda k: (k[0], order.index(k[1]))):
        v = sorted(by[(path, cls)])
        print(f"| {path} | {cls} | {len(v)} | {100 * statistics.median(v):.2f} % "
              f"| {100 * v[int(0.9 * len(v))]:.2f} % |")


if __name__ == "__main__":
    main(sys.argv[1:])
