#!/usr/bin/env bash
# Signals mid-run (docs/reliability.md). Usage: interrupt.sh OPCOST OUT_DIR
#  1. one SIGTERM: opcost run writes the rows already measured (status ok),
#     marks every other point skipped ("interrupted"), exits non-zero; the
#     file passes the schema check.
#  2. two SIGTERMs: the second changes nothing (it used to kill the run
#     with no CSV and no samples file).
#  3. three: the run stops at once (exit 128 + 15); the points finished
#     before it are in the CSV and its sidecar, which read (the schema)
#     but are marked incomplete (the journal's rows unsettled): opcost
#     check exits 1 on it and says so.
# No journal file is left behind in any case.
set -u
opcost="$1"
dir="$2/interrupted"
rm -rf "$dir"
mkdir -p "$dir"
fail=0

# start OUT ARGS...: runs opcost in the background, sets $pid
start() {
    local out="$1"
    shift
    "$opcost" run --llc-mib 32 --threads 1 --no-pin --shapes llama-3.1-8b-conv --paths kernel,eager-cpp \
        --out "$out" "$@" >"$out.log" 2>&1 &
    pid=$!
}

# until_points OUT N: waits (up to 60 s) until N points are in the journal
until_points() {
    local j="$1.journal.$pid"
    for _ in $(seq 600); do
        [[ -f $j && $(($(wc -l <"$j") - 1)) -ge $(($2 * 2)) ]] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "FAIL: no finished point in $j (within 60 s, while it ran): $(tail -1 "$1.log")"
    fail=1
}

# check OUT RC WANT_RC WANT_SKIPPED(yes|no) [WANT_CHECK_RC]
check() {
    local out="$1" rc="$2" want="$3" skipped_wanted="$4" check_rc="${5:-0}"
    if [[ $want == nonzero ]]; then
        [[ $rc -ne 0 ]] || { echo "FAIL: $out: exit 0 after a signal"; fail=1; }
    else
        [[ $rc -eq $want ]] || { echo "FAIL: $out: exit $rc, want $want"; fail=1; }
    fi
    "$opcost" check "$out" >"$out.check" 2>&1
    local crc=$?
    [[ $crc -eq $check_rc ]] ||
        { echo "FAIL: $out: opcost check exit $crc, want $check_rc: $(cat "$out.check")"; fail=1; return; }
    if [[ $check_rc -eq 1 ]]; then
        grep -q "incomplete: .* rows unsettled" "$out.check" ||
            { echo "FAIL: $out: check does not say incomplete: $(cat "$out.check")"; fail=1; }
        "$opcost" compare --no-samples "$out" "$out" >"$out.compare" 2>&1
        [[ $? -eq 2 ]] && grep -q "is incomplete" "$out.compare" ||
            { echo "FAIL: $out: compare took an incomplete file: $(head -3 "$out.compare")"; fail=1; }
    fi
    local ok skipped
    ok=$(grep -c ',ok,' "$out")
    skipped=$(grep -c 'run interrupted' "$out")
    echo "$(basename "$out"): exit $rc, $ok rows ok, $skipped marked interrupted"
    [[ $ok -gt 0 ]] || { echo "FAIL: $out: no measured row"; fail=1; }
    if [[ $skipped_wanted == yes ]]; then
        [[ $skipped -gt 0 ]] || { echo "FAIL: $out: no row marked interrupted"; fail=1; }
    fi
    ! ls "$out".journal.* "${out%.csv}".samples.csv.journal.* 2>/dev/null |
        grep -q . || { echo "FAIL: a journal file was left"; fail=1; }
}

out="$dir/once.csv"
start "$out"
until_points "$out" 1
kill -TERM "$pid"
wait "$pid"
check "$out" $? nonzero yes

# points of ~2 s (two paths, 5 repetitions of 200 ms: no early stop on
# noise), so the signals
# below land while one is being measured
out="$dir/twice.csv"
start "$out" --rep-budget-ms 200 --noise 0.0001
until_points "$out" 1
kill -TERM "$pid"
sleep 0.2
kill -TERM "$pid"
wait "$pid"
check "$out" $? nonzero yes

out="$dir/thrice.csv"
start "$out" --rep-budget-ms 200 --noise 0.0001
until_points "$out" 1
for _ in 1 2 3; do
    kill -TERM "$pid"
    sleep 0.2
done
wait "$pid"
check "$out" $? 143 no 1
grep -q "stopped: the finished points are in" "$out.log" ||
    { echo "FAIL: no message on the third signal"; fail=1; }
exit $fail
