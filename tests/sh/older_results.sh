#!/usr/bin/env bash
# Results files of an earlier schema version (the committed runs of
# versions 1 and 2) keep loading in check, compare, plot and targets.
# Usage: older_results.sh OPCOST SOURCE_DIR BUILD_DIR
set -u
opcost="$1" src="$2" dir="$3/older_results"
rm -rf "$dir" && mkdir -p "$dir"
v1="$src/results/20261130T074930Z-vm.csv"
fail=0
run() { # run WANT_STATUS PATTERN -- command...
    local want="$1" pattern="$2"
    shift 3
    local out got
    out=$("$@" 2>&1)
    got=$?
    if [[ $got -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
        echo "FAIL: $* -> exit $got (want $want): $(tail -3 <<<"$out")"
        fail=1
    else
        echo "ok: $* -> exit $got"
    fi
}
head -c 15 "$v1" | grep -q '^schema_version,' &&
    [[ $(head -1 "$v1" | tr ',' '\n' | wc -l) -eq 42 ]] ||
    { echo "FAIL: $v1 is not a version-1 file"; exit 1; }
run 0 "1078 rows.*: ok" -- "$opcost" check "$v1"
# its rows above 1.05 of the one ceiling it had are warned of
run 0 "warning: row [0-9]+ .*frac_of_peak 1\.[0-9]+ > 1\.05: its ceiling \(one ceiling for all rows" -- "$opcost" check "$v1"
run 0 "CPU performance targets" -- "$opcost" targets "$v1"
run 0 "attribution.png" -- "$opcost" plot "$v1" --out "$dir/plots" --kind attribution
# compare needs per-repetition samples: give the older file a sidecar
# with each timed row's n_samples samples over its repetitions (each at the
# row's median)
sidecar() { # sidecar FILE.csv
    python3 - "$1" <<'PY'
import csv, sys
path = sys.argv[1]
rows = list(csv.DictReader(open(path, newline="")))
with open(path[:-4] + ".samples.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["run_id", "point", "path", "variant", "rep", "sample", "us"])
    for i, r in enumerate(rows):
        if r["status"] == "ok":
            n, reps = int(r["n_samples"]), int(r["reps"])
            for k in range(n):
                w.writerow([r["run_id"], i, r["path"], r["variant"],
                            k % reps, k // reps, r["median_us"]])
PY
}
cp "$v1" "$dir/v1.csv"
sidecar "$dir/v1.csv"
run 0 "1078 pairs: 0 slower, 0 faster, 1064 same" -- "$opcost" compare "$dir/v1.csv" "$dir/v1.csv"
# version 2 (measured attribution, ceilings per op mix): a committed run
v2="$src/results/20261201T151311Z-vm.csv"
[[ $(sed -n 2p "$v2" | cut -d, -f1) == 2 &&
    $(head -1 "$v2" | tr ',' '\n' | wc -l) -eq 51 ]] ||
    { echo "FAIL: $v2 is not a version-2 file"; exit 1; }
run 0 "1078 rows.*: ok" -- "$opcost" check "$v2"
run 0 "CPU performance targets" -- "$opcost" targets "$v2"
run 0 "attribution.png" -- "$opcost" plot "$v2" --out "$dir/plots2" --kind attribution
cp "$v2" "$dir/v2.csv"
sidecar "$dir/v2.csv"
run 0 "1078 pairs: 0 slower, 0 faster, 1064 same" -- "$opcost" compare "$dir/v2.csv" "$dir/v2.csv"
# a version-2 run recorded no noise of its own
run 0 "run-to-run noise \(95th percentile of \|log ratio\|\): 0.000 \(x1.000; the test's sigma 0.000\) between these runs; .*base not recorded, new not recorded" -- "$opcost" compare "$dir/v2.csv" "$dir/v2.csv"
exit $fail
