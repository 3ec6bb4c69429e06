#!/usr/bin/env bash
# The run-to-run noise (schema 3): every ok row of a run carries the run's
# noise (run_noise_rel, one value per run) and an interval (ci95_rel) at
# least as wide as its repetitions' own (ci95_reps_rel) and as
# exp(run_noise_rel) - 1; --replicates 0 leaves the intervals to the
# repetitions; too few pairs say so.
# Usage: run_noise.sh OPCOST QUICK_CSV BUILD_DIR
set -u
opcost="$1" quick="$2" dir="$3/run_noise"
rm -rf "$dir" && mkdir -p "$dir"
fail=0
# check FILE MODE: MODE noise (the noise known) or none (not known)
check() {
    python3 - "$1" "$2" <<'PY' || fail=1
import csv, math, sys
path, mode = sys.argv[1], sys.argv[2]
rows = [r for r in csv.DictReader(open(path, newline="")) if r["status"] == "ok"]
assert rows, f"{path}: no ok rows"
assert all(int(r["schema_version"]) >= 3 for r in rows), "schema_version is below 3 (no run_noise_rel)"
num = lambda s: float(s) if s not in ("", "nan") else math.nan
noise = {r["run_noise_rel"] for r in rows}
bad = []
if mode == "noise":
    assert len(noise) == 1, f"run_noise_rel differs between rows: {noise}"
    sigma = num(noise.pop())
    assert math.isfinite(sigma) and sigma > 0, f"run_noise_rel {sigma}"
    floor = math.expm1(sigma)
    for r in rows:
        ci, reps = num(r["ci95_rel"]), num(r["ci95_reps_rel"])
        want = floor if math.isnan(reps) else max(floor, reps)
        if not abs(ci - want) <= 1e-5 * want:
            bad.append((r["path"], r["B"], ci, reps, floor))
else:
    assert noise == {""}, f"run_noise_rel set without a noise: {noise}"
    for r in rows:
        if r["ci95_rel"] != r["ci95_reps_rel"]:
            bad.append((r["path"], r["B"], r["ci95_rel"], r["ci95_reps_rel"]))
assert not bad, f"{len(bad)} rows' ci95_rel is not what the rule gives: {bad[:3]}"
print(f"ok: {path}: {len(rows)} ok rows, {mode}")
PY
}
check "$quick" noise
# compare shows what each run measured of itself
want=$(python3 -c 'import csv,sys; r=[r for r in csv.DictReader(open(sys.argv[1])) if r["status"]=="ok"][0]; print("%.3f" % float(r["run_noise_rel"]))' "$quick")
out=$("$opcost" compare "$quick" "$quick" 2>&1)
grep -qF "as each run measured its own (run_noise_rel): base $want, new $want" <<<"$out" ||
    { echo "FAIL: compare: want base/new $want: $(grep noise <<<"$out")"; fail=1; }
# without replicates: intervals from the repetitions alone
"$opcost" run --quick --llc-mib 32 --shapes edges --paths kernel --replicates 0 \
    --out "$dir/none.csv" >"$dir/none.log" 2>&1 || { echo "FAIL: run"; fail=1; }
grep -q "run-to-run noise" "$dir/none.log" &&
    { echo "FAIL: --replicates 0 printed a noise"; fail=1; }
check "$dir/none.csv" none
# one point again, one path: fewer pairs than the estimate needs
"$opcost" run --quick --llc-mib 32 --shapes edges --paths kernel --replicates 1 \
    --out "$dir/few.csv" >"$dir/few.log" 2>&1 || { echo "FAIL: run"; fail=1; }
grep -q "run-to-run noise: not known (1 rows of 1 points measured again, 8 needed)" \
    "$dir/few.log" || { echo "FAIL: few pairs: $(grep noise "$dir/few.log")"; fail=1; }
check "$dir/few.csv" none
exit $fail
