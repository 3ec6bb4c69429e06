#!/usr/bin/env bash
# opcost ab: a small A/B of this build against itself, and what it refuses.
# Timing is never asserted (an A/A verdict depends on the host); the file
# is: both sides' rows for every point and path, each new row paired with
# its base twin (ratio, interval, p-value, rounds, a verdict of the four),
# both sides' samples in the same rounds, the schema check, the report,
# the threads pinned (or --no-pin said); two processes a side by default,
# a side's row holding both processes' samples and its interval the spread
# between them (a note says it), one with --processes 1 (the scatter then).
# And: --base/--new missing or not a build (exit 2, the option named), a
# side whose opcost does not speak the protocol (a build from before
# opcost ab: exit 2, said so), --device cuda refused, --processes out of
# its range refused. The coordinator's OpenMP threads wait passively.
# Usage: ab.sh OPCOST BUILD_DIR
set -u
opcost="$1" build="$(cd "$(dirname "$1")" && pwd)" dir="$2/ab"
rm -rf "$dir" && mkdir -p "$dir"
fail=0
printf 'op,B,N,dtype,layout,freq\nfused_add_rms_norm,4,1024,bfloat16,contiguous,1\nrms_norm_rows,64,1024,float32,transposed,1\n' >"$dir/shapes.csv"

env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT \
    "$opcost" ab --base "$build" --new "$build" --shapes "$dir/shapes.csv" \
    --paths kernel,eager-cpp --llc-mib 32 --rep-budget-ms 5 --threads 1 \
    --out "$dir/ab.csv" >"$dir/ab.log" 2>&1
rc=$?
if [[ $rc -ne 0 && $rc -ne 1 ]]; then
    cat "$dir/ab.log"
    echo "FAIL: opcost ab of a build against itself: exit $rc"
    exit 1
fi
"$opcost" check "$dir/ab.csv" >/dev/null || { echo "FAIL: check ab.csv"; fail=1; }
python3 - "$dir/ab.csv" <<'PY' || fail=1
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
key = lambda r: (r["op"], r["B"], r["N"], r["dtype"], r["layout"], r["path"], r["variant"])
base = {key(r): r for r in rows if r["side"] == "base"}
new = {key(r): r for r in rows if r["side"] == "new"}
assert len(rows) == 8 and len(base) == 4 and len(new) == 4, f"{len(rows)} rows: {len(base)} base, {len(new)} new"
assert base.keys() == new.keys(), "the sides' points and paths differ"
for k, r in new.items():
    b = base[k]
    assert r["status"] == "ok" and b["status"] == "ok", f"{k}: {r['status']} {b['status']}: {r['note']} {b['note']}"
    assert r["paired_with"] == "base" and b["paired_with"] == "", f"{k}: paired_with {r['paired_with']!r} / {b['paired_with']!r}"
    ratio, ci, p = float(r["ratio"]), float(r["ratio_ci95_rel"]), float(r["p_value"])
    assert ratio > 0 and math.isfinite(ci) and 0 <= p <= 1, f"{k}: ratio {ratio} ci {ci} p {p}"
    assert r["verdict"] in ("same", "faster", "slower", "unsure"), f"{k}: verdict {r['verdict']!r}"
    assert int(r["rounds"]) >= 10, f"{k}: {r['rounds']} rounds"
    assert r["stopped_by"] in ("target", "budget", "rounds"), f"{k}: stopped_by {r['stopped_by']!r}"
    assert r["git_sha"] and r["git_sha"] == b["git_sha"], "each side's own git_sha"
    # what each side's verification measured (protocol 2: AB_ERRORS)
    for x in (r, b):
        assert x["out_err_units"] != "" and float(x["out_err_units"]) >= 0, f"{k}: out_err_units {x['out_err_units']!r}"
        assert (x["residual_err_units"] != "") == (k[0] == "fused_add_rms_norm"), f"{k}: residual_err_units {x['residual_err_units']!r}"
    # the four processes' samples, every shared round's of each
    assert int(r["n_samples"]) >= 4 * int(r["rounds"]), f"{k}: {r['n_samples']} samples, {r['rounds']} rounds"
    # each process against all the others, new's less base's of the same
    # index: 3 contrasts at the one point of each path, dtype and layout
    assert "spread between the 4 processes of a side" in r["note"] and (
        "3 contrasts" in r["note"]), f"{k}: note {r['note']!r}"
side = list(csv.DictReader(open(sys.argv[1][:-4] + ".samples.csv", newline="")))
points = {}
for s in side:
    points.setdefault(int(s["point"]), set()).add(int(s["round"]))
for k in new:
    i, j = rows.index(new[k]), rows.index(base[k])
    shared = points[i] & points[j]
    assert len(shared) >= int(new[k]["rounds"]), f"{k}: {len(shared)} rounds shared, the row says {new[k]['rounds']}"
print(f"ok: {len(new)} pairs, rounds shared, verdicts {sorted(r['verdict'] for r in new.values())}")
PY
grep -q "points x paths: " "$dir/ab.log" || { echo "FAIL: no counts line"; fail=1; }
grep -q "expected cost per call: " "$dir/ab.log" || { echo "FAIL: no group line"; fail=1; }
# the threads pinned (affinity.h), one CPU each, or said why not
grep -Eq "^  threads +([0-9]+ threads? pinned to CPUs? [0-9,]+|not pinned: [0-9]+ threads on [0-9]+ CPUs)$" "$dir/ab.log" ||
    { grep threads "$dir/ab.log"; echo "FAIL: no pinning line"; fail=1; }
# the code on 2 MiB pages, placed anew (code_pages.h), or said why not:
# in the header (the coordinator) and once by each worker
grep -Eq "^  code        (on 2 MiB pages, placed anew every 50 ms of sampling \([0-9]+ segments of [0-9]+ objects|[0-9]+ of [0-9]+ segments on 2 MiB pages)" "$dir/ab.log" ||
    { grep code "$dir/ab.log"; echo "FAIL: no code line"; fail=1; }
[[ $(grep -c "^opcost worker .*: code " "$dir/ab.log") -ge 8 ]] ||
    { echo "FAIL: the eight workers did not say where their code runs"; fail=1; }
grep -q "^opcost ab: base .*, 4 processes a side$" "$dir/ab.log" ||
    { echo "FAIL: the processes a side not said"; fail=1; }
# the coordinator's OpenMP threads wait passively (omp_waits.h): its probe
# threads spun milliseconds on the sides' cores after every probe sample
grep -q "^opcost ab: coordinator's OpenMP threads: OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=3000 (set by opcost ab)$" "$dir/ab.log" ||
    { grep OpenMP "$dir/ab.log"; echo "FAIL: the coordinator's OpenMP waits not set"; fail=1; }
# ... and what the user set is kept, and said
env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=ACTIVE \
    "$opcost" ab --base "$build" --new "$build" --shapes "$dir/shapes.csv" \
    --paths kernel --llc-mib 32 --rep-budget 2 --no-pin --processes 1 \
    --out "$dir/nopin.csv" >"$dir/nopin.log" 2>&1
grep -q "^  threads     not pinned (--no-pin)$" "$dir/nopin.log" ||
    { cat "$dir/nopin.log"; echo "FAIL: --no-pin not said"; fail=1; }
grep -q "^opcost ab: base .*, 1 process a side$" "$dir/nopin.log" ||
    { cat "$dir/nopin.log"; echo "FAIL: --processes 1 not said"; fail=1; }
grep -q "^opcost ab: coordinator's OpenMP threads: OMP_WAIT_POLICY=ACTIVE GOMP_SPINCOUNT=(unset) (as the environment says)$" "$dir/nopin.log" ||
    { grep OpenMP "$dir/nopin.log"; echo "FAIL: the user's OMP_WAIT_POLICY not kept"; fail=1; }
[[ $(grep -c "^opcost worker .*: code " "$dir/nopin.log") -eq 2 ]] ||
    { echo "FAIL: --processes 1: not two workers"; fail=1; }

# ab's own budget: 100 ms per member and repetition unless given (run's
# is 10, which left an A/A of llama-3.1-8b-conv +-9 % wide)
printf 'op,B,N,dtype,layout,freq\nrms_norm_rows,4,1024,float32,contiguous,1\n' \
    >"$dir/one.csv"
"$opcost" ab --base "$build" --new "$build" --shapes "$dir/one.csv" \
    --paths kernel --llc-mib 32 --processes 1 --replicates 0 \
    --out "$dir/budget.csv" >"$dir/budget.log" 2>&1
grep -q "after 100.0 ms per member and repetition" "$dir/budget.log" ||
    { cat "$dir/budget.log"; echo "FAIL: ab's default budget is not 100 ms"; fail=1; }
grep -q "after 5.0 ms per member and repetition" "$dir/ab.log" ||
    { echo "FAIL: --rep-budget-ms 5 not kept by ab"; fail=1; }
# ... in getopt's other spellings too (it was recognized by its full name
# alone, and --rep-budget 2 became 100 ms)
grep -q "after 2.0 ms per member and repetition" "$dir/nopin.log" ||
    { echo "FAIL: --rep-budget 2 not kept by ab"; fail=1; }

# refusals: exit 2, naming the option and the rule
expect() { # expect STATUS TEXT CMD...
    local want="$1" text="$2"
    shift 2
    out=$("$@" 2>&1)
    local got=$?
    if [[ $got -ne $want ]] || ! grep -qF -- "$text" <<<"$out"; then
        echo "FAIL: $* -> exit $got (want $want, '$text'): $out"
        fail=1
    else
        echo "ok: $text"
    fi
}
expect 2 "--base DIR is required" "$opcost" ab --new "$build" --quick
expect 2 "--new: '$dir/none' is not a directory" "$opcost" ab --base "$build" --new "$dir/none"
mkdir -p "$dir/empty"
expect 2 "--base: '$dir/empty' holds no opcost" "$opcost" ab --base "$dir/empty" --new "$build"
# a side from before opcost ab: its opcost has no worker command
mkdir -p "$dir/old"
printf '#!/bin/sh\necho "opcost: unknown command $1" >&2\nexit 2\n' >"$dir/old/opcost"
chmod +x "$dir/old/opcost"
expect 2 "worker did not answer" "$opcost" ab --base "$dir/old" --new "$build" --quick --llc-mib 32
expect 2 "--device cuda" "$opcost" ab --base "$build" --new "$build" --device cuda --quick
expect 2 "--alpha: must be in (0, 1)" "$opcost" ab --base "$build" --new "$build" --alpha 2
expect 2 "--processes: must be a whole number from 1 to 8, got '0'" "$opcost" ab --base "$build" --new "$build" --processes 0
expect 2 "--processes: must be a whole number from 1 to 8, got '2x'" "$opcost" ab --base "$build" --new "$build" --processes 2x
exit $fail
