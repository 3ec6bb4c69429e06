"""Per-process contrasts of an `opcost ab` run, from its two files.

A row's samples in <run>-ab.samples.csv are its side's processes merged by
round, process 0 first within a round (rounds.c, opcost_member_merge), so
a round holding two samples is process 0 then process 1. The contrast of
a row is the mean over its rounds of log(process 0 / process 1); it is 0
but for what each process's own placement does. Prints the median and
90th percentile of |contrast| per path and per size of one input set.

    python3 process_contrasts.py RUN-ab.csv [RUN-ab.csv ...]
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


def main(runs):
    by = collections.defaultdict(list)
    for run in runs:
        for r, d in contrasts(run):
            by[(r["path"], size_class(int(r["working_set_bytes"])))].append(
                abs(d))
    order = ["< 4 MiB", "4-16 MiB", "16-64 MiB", ">= 64 MiB"]
    print("| path | one set | contrasts | median abs | p90 abs |")
    print("|---|---|---|---|---|")
    for (path, cls) in sorted(by, key=lambda k: (k[0], order.index(k[1]))):
        v = sorted(by[(path, cls)])
        print(f"| {path} | {cls} | {len(v)} | {100 * statistics.median(v):.2f} % "
              f"| {100 * v[int(0.9 * len(v))]:.2f} % |")


if __name__ == "__main__":
    main(sys.argv[1:])
