#!/usr/bin/env bash
# `make nightly`: this checkout's build against the last accepted commit's,
# paired in the same rounds over shared buffers (opcost ab), so a night's
# verdict holds whatever the host's speed was: the accepted commit is built
# once in a cached clone outside this one (~/.cache/opcost/nightly/<sha>,
# $OPCOST_CACHE), the A/B run goes to results/history/nightly-<UTC>.csv
# (both sides' absolute medians in it too), each distribution group's
# verdict to results/history/gates.csv, and the paired-history plot chains
# the nights' ratios into one drift-free trend.
#
# Exit status: 0 no regression (this commit becomes the baseline), 1 a
# regression (a point or a group slower beyond the threshold), 3 unsure (an
# interval reaches across the threshold: neither a pass nor a fail; the
# baseline stays), 2 no comparison (the baseline does not build, a side
# went away, the run was interrupted, a group not paired at every point:
# its gates.csv row says incomplete, bad input; the baseline stays). Options for the run: BENCH_ARGS or NIGHTLY_ARGS
# (e.g. make nightly BENCH_ARGS=--quick). OPCOST_HISTORY and
# OPCOST_HISTORY_PLOTS move the history and its plot elsewhere (the tests).
set -uo pipefail
build="$(cd "${1:-build}" && pwd)" || exit 2
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
history="${OPCOST_HISTORY:-$repo/results/history}"
plots="${OPCOST_HISTORY_PLOTS:-$repo/results/plots/history}"
cache="${OPCOST_CACHE:-$HOME/.cache/opcost}/nightly"
mkdir -p "$history" "$cache"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
run="$history/nightly-$stamp.csv"
say() { echo "nightly: $*"; }

head="$(git -C "$repo" rev-parse HEAD 2>/dev/null)" ||
    { say "$repo is not a git checkout: no commit to accept"; exit 2; }
baseline_file="$history/BASELINE"
base=""
if [[ -s $baseline_file ]]; then
    base="$(tr -d '\r\n' <"$baseline_file")"
    if ! [[ $base =~ ^[0-9a-f]{40}$ ]]; then
        # the unpaired nightly (before opcost ab) kept a run's CSV name here
        say "$baseline_file holds '$base', not a commit (an unpaired" \
            "nightly's baseline): tonight is an A/A night of $head"
        base=""
    elif ! git -C "$repo" cat-file -e "$base^{commit}" 2>/dev/null; then
        say "the accepted commit $base is not in this clone: fetch it, or" \
            "start a new chain with: echo $head > $baseline_file"
        exit 2
    fi
fi
if [[ -z $base ]]; then
    base="$head"
    say "no accepted commit yet: $head against itself (an A/A night: what" \
        "the pairing sees when nothing changed)"
fi

# The accepted commit's build, once per commit: a clone of its own (it
# shares this clone's objects by hard links and survives this clone).
wt="$cache/$base"
if [[ ! -x $wt/build/opcost ]]; then
    if [[ ! -d $wt/.git ]]; then
        rm -rf "$wt"
        git clone -q --no-checkout "$repo" "$wt" &&
            git -C "$wt" checkout -q --detach "$base" ||
            { say "cannot check out $base into $wt"; exit 2; }
    fi
    say "building the accepted commit $base in $wt"
    make -C "$wt" build >"$wt.build.log" 2>&1 ||
        { tail -20 "$wt.build.log"; say "the accepted commit $base does not build"; exit 2; }
fi

say "$head against the accepted $base"
# shellcheck disable=SC2086 # the options are words
"$build/opcost" ab --gate --gates-out "$history/gates.csv" --base "$wt" \
    --new "$build" --out "$run" ${NIGHTLY_ARGS:-} ${BENCH_ARGS:-}
rc=$?
case $rc in
0)
    echo "$head" >"$baseline_file"
    say "no regression; $head is the new accepted commit" ;;
1) say "regression against $base; the accepted commit stays $base" ;;
3) say "unsure: not a pass, not a fail; the accepted commit stays $base" ;;
*) say "no comparison (opcost ab exit $rc: interrupted, a side went away," \
    "no point paired, or a group incomplete: gates.csv says incomplete);" \
    "the accepted commit stays $base" ;;
esac
if [[ -f $run ]]; then
    "$build/opcost" plot --kind paired_history --history "$history" \
        --out "$plots" || say "the history plot failed"
fi
exit $rc
