#!/usr/bin/env bash
# `make nightly`: the default suite into results/history/, compared with the
# last accepted baseline (gated on each distribution's weighted cost per
# call; per-row changes reported, not gated), the history plot, a short
# report; exits with the comparison's code (0 ok, 1 regression, 2 bad
# input). A run without a regression becomes the new baseline.
set -uo pipefail
build="${1:-build}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
history="$repo/results/history"
mkdir -p "$history"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
run="$history/nightly-$stamp.csv"

"$build/opcost" run --out "$run" ${NIGHTLY_ARGS:-} || exit 2
baseline_file="$history/BASELINE"
if [[ ! -s "$baseline_file" ]]; then
    basename "$run" >"$baseline_file"
    echo "nightly: no baseline yet; $(basename "$run") is the baseline"
    rc=0
else
    base="$history/$(cat "$baseline_file")"
    if [[ ! -f "${base%.csv}.samples.csv" ]]; then
        # compare refuses it (exit 2): say why and how to start afresh
        echo "nightly: the baseline's samples sidecar ${base%.csv}.samples.csv" \
            "is missing (sidecars are not committed); on a new machine," \
            "start a baseline with: rm $baseline_file" >&2
    fi
    echo "nightly: $(basename "$run") against the baseline $(basename "$base")"
    "$build/opcost" compare --gate --gates-out "$history/gates.csv" \
        --csv "${run%.csv}.compare.csv" "$base" "$run"
    rc=$?
    if [[ $rc -eq 0 ]]; then
        basename "$run" >"$baseline_file"
        echo "nightly: no regression; $(basename "$run") is the new baseline"
    fi
fi
"$build/opcost" plot "$run" --kind history --history "$history" \
    --out "$repo/results/plots/history" || echo "nightly: history plot failed"
exit $rc
