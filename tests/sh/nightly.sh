#!/usr/bin/env bash
# make nightly's script on pairs, in a scratch history: the accepted
# commit's build taken from the cache (here this build, so nothing is
# built), an A/B run of a one-shape set, its gates appended, the verdict
# as the exit status (0 pass: BASELINE names this commit; 1 regression, 3
# unsure: BASELINE stays; timing is not asserted), the paired history
# drawn; a BASELINE of the unpaired nightly (a CSV name) starts an A/A
# night; a BASELINE naming a commit this clone lacks is refused (exit 2);
# a BASELINE with a CRLF ending names its commit.
# Usage: nightly.sh SOURCE_DIR BUILD_DIR
set -u
src="$1" build="$(cd "$2" && pwd)" dir="$2/nightly"
rm -rf "$dir" && mkdir -p "$dir/history" "$dir/cache/nightly"
fail=0
head=$(git -C "$src" rev-parse HEAD 2>/dev/null) || {
    echo "skip: $src is not a git checkout"
    exit 77
}
mkdir -p "$dir/cache/nightly/$head"
ln -s "$build" "$dir/cache/nightly/$head/build"
printf 'op,B,N,dtype,layout,freq\nfused_add_rms_norm,4,1024,bfloat16,contiguous,1\n' >"$dir/one.csv"
export OPCOST_CACHE="$dir/cache" OPCOST_HISTORY="$dir/history"
export OPCOST_HISTORY_PLOTS="$dir/plots"
export NIGHTLY_ARGS="--shapes $dir/one.csv --paths kernel --llc-mib 32 --rep-budget-ms 5 --threads 1 --no-pin"
night() {
    "$src/scripts/nightly.sh" "$build" >"$dir/night.log" 2>&1
}
echo "nightly-20261130T052603Z.csv" >"$dir/history/BASELINE" # the unpaired nightly's
night
rc=$?
grep -q "not a commit (an unpaired nightly's baseline)" "$dir/night.log" ||
    { echo "FAIL: a CSV baseline was not recognised"; cat "$dir/night.log"; fail=1; }
case $rc in
0) [[ $(cat "$dir/history/BASELINE") == "$head" ]] ||
    { echo "FAIL: a pass did not accept $head"; fail=1; } ;;
1 | 3) [[ $(cat "$dir/history/BASELINE") == nightly-* ]] ||
    { echo "FAIL: exit $rc moved the baseline"; fail=1; } ;;
*) echo "FAIL: nightly exit $rc"; cat "$dir/night.log"; fail=1 ;;
esac
ls "$dir"/history/nightly-*.csv >/dev/null 2>&1 || { echo "FAIL: no nightly CSV"; fail=1; }
[[ $(grep -c . "$dir/history/gates.csv" 2>/dev/null) -ge 2 ]] ||
    { echo "FAIL: no gate rows appended"; fail=1; }
if command -v gnuplot >/dev/null; then
    [[ -s $dir/plots/paired-history.png ]] ||
        { echo "FAIL: no paired-history plot"; cat "$dir/night.log"; fail=1; }
fi
echo "ok: a night against a CSV baseline: exit $rc"
# a baseline commit this clone does not have
echo 0123456789abcdef0123456789abcdef01234567 >"$dir/history/BASELINE"
night
rc=$?
[[ $rc -eq 2 ]] && grep -q "is not in this clone" "$dir/night.log" ||
    { echo "FAIL: an unknown accepted commit: exit $rc"; cat "$dir/night.log"; fail=1; }
echo "ok: an unknown accepted commit is refused"
# a BASELINE written on Windows (CRLF): the commit, not "missing" or "not
# a commit" (the old script took the \r as part of a CSV name)
printf '%s\r\n' "$head" >"$dir/history/BASELINE"
night
rc=$?
grep -q "against the accepted $head" "$dir/night.log" &&
    ! grep -q "not a commit\|not in this clone" "$dir/night.log" ||
    { echo "FAIL: a CRLF BASELINE: exit $rc"; cat "$dir/night.log"; fail=1; }
echo "ok: a CRLF BASELINE names its commit: exit $rc"
exit $fail
