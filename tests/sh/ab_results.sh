#!/usr/bin/env bash
# opcost ab's results under faults: no verdict that looks like a real one.
#  1. a base that computes wrong results (this build with
#     ROWOPS_TEST_WRONG_SCALE, kernels/test_slowdown.h): no pair compared,
#     exit 2, the console says why (not "ok: no paired ratio");
#  2. one SIGINT after some points: every group's gates.csv row says
#     incomplete (never a regression of 0), exit 2, and the paired-history
#     plot draws that night as incomplete;
#  3. three SIGINTs: the journal put in place of the results is marked,
#     opcost check exits 1 on it and says incomplete;
#  4. a second run with the same --out as a running one refuses (exit 2,
#     naming the other run); the first's file is its own;
#  5. opcost compare refuses ab files, pointing at opcost ab --report,
#     which reads one.
# Timing is never asserted. Usage: ab_results.sh OPCOST OUT_DIR
set -u
opcost="$1" dir="$2/ab_results"
rm -rf "$dir" && mkdir -p "$dir/wrong" "$dir/history"
build="$(cd "$(dirname "$opcost")" && pwd)"
fail=0
say_fail() { echo "FAIL: $*"; fail=1; }
common=(--paths kernel --llc-mib 32 --threads 1 --no-pin --processes 1)
printf 'op,B,N,dtype,layout,freq\nfused_add_rms_norm,4,1024,bfloat16,contiguous,1\nrms_norm_rows,4,1024,float32,contiguous,1\n' >"$dir/two.csv"
{
    echo 'op,B,N,dtype,layout,freq'
    for b in 2 3 4 5 6 7; do echo "fused_add_rms_norm,$b,1024,bfloat16,contiguous,1"; done
} >"$dir/six.csv"

# until_rows OUT PID N: waits (up to 60 s) until the journal of PID's run
# at OUT holds N rows
until_rows() {
    local j="$1.journal.$2"
    for _ in $(seq 600); do
        [[ -f $j && $(($(wc -l <"$j") - 1)) -ge $3 ]] && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    say_fail "no $3 rows in $j within 60 s"
}

# 1. a wrong base: this build, its fast kernels' outputs scaled by 1.01
cat >"$dir/wrong/opcost" <<SH
#!/bin/sh
ROWOPS_TEST_WRONG_SCALE=1.01 exec "$opcost" "\$@"
SH
chmod +x "$dir/wrong/opcost"
"$opcost" ab --base "$dir/wrong" --new "$build" --shapes "$dir/two.csv" \
    "${common[@]}" --rep-budget-ms 5 --out "$dir/wrong_base.csv" >"$dir/wrong_base.log" 2>&1
rc=$?
grep -q ',wrong,' "$dir/wrong_base.csv" 2>/dev/null ||
    say_fail "the scaled base's rows are not wrong: $(grep -c . "$dir/wrong_base.csv" 2>/dev/null) lines"
[[ $rc -eq 2 ]] || say_fail "a wrong base: exit $rc, want 2 (no comparison)"
grep -q "no comparison: 0 of 2 points x paths paired" "$dir/wrong_base.log" ||
    say_fail "a wrong base: the console does not say no comparison"
grep -q "no pair: base wrong" "$dir/wrong_base.log" ||
    say_fail "a wrong base: the table does not say the base is wrong"
grep -q "ok: no paired ratio" "$dir/wrong_base.log" &&
    say_fail "a wrong base: 'ok: no paired ratio'"
[[ $fail -eq 0 ]] && echo "ok: a wrong base: exit $rc, $(grep 'no comparison' "$dir/wrong_base.log" | tail -1)"
[[ $fail -eq 0 ]] || cat "$dir/wrong_base.log"

# 2. one SIGINT after two of six points, with a gate: incomplete
out="$dir/history/once.csv"
"$opcost" ab --base "$build" --new "$build" --shapes "$dir/six.csv" "${common[@]}" \
    --rep-budget-ms 100 --gate --gates-out "$dir/history/gates.csv" \
    --out "$out" >"$dir/once.log" 2>&1 &
pid=$!
until_rows "$out" $pid 4
kill -INT $pid
wait $pid
rc=$?
[[ $rc -eq 2 ]] || say_fail "one SIGINT: exit $rc, want 2"
grep -q ',incomplete$' "$dir/history/gates.csv" 2>/dev/null ||
    say_fail "one SIGINT: no incomplete row in gates.csv: $(cat "$dir/history/gates.csv" 2>&1)"
grep -q ',[01]$' "$dir/history/gates.csv" 2>/dev/null &&
    say_fail "one SIGINT: gates.csv has a verdict: $(cat "$dir/history/gates.csv")"
grep -q "^gate: incomplete" "$dir/once.log" || say_fail "one SIGINT: the gate does not say incomplete"
"$opcost" plot --kind paired_history --history "$dir/history" --out "$dir/plots" \
    >"$dir/plot.log" 2>&1
grep -rqs '"incomplete"' "$dir/plots" ||
    say_fail "one SIGINT: the paired history does not draw the night incomplete: $(cat "$dir/plot.log")"
grep -rqs '"same"' "$dir/plots" && say_fail "one SIGINT: the paired history says same"
echo "ok: one SIGINT: exit $rc, gates.csv: $(tail -1 "$dir/history/gates.csv" 2>/dev/null)"

# 3. three SIGINTs in a point: the journal in place, marked incomplete
out="$dir/thrice.csv"
"$opcost" ab --base "$build" --new "$build" --shapes "$dir/six.csv" "${common[@]}" \
    --rep-budget-ms 200 --noise 0.0001 --out "$out" >"$dir/thrice.log" 2>&1 &
pid=$!
until_rows "$out" $pid 2
for _ in 1 2 3; do
    kill -INT $pid
    sleep 0.2
done
wait $pid
rc=$?
[[ -f $out ]] || say_fail "three SIGINTs: no file at $out: $(tail -3 "$dir/thrice.log")"
"$opcost" check "$out" >"$dir/check.log" 2>&1
crc=$?
[[ $crc -eq 1 ]] && grep -q "incomplete: .* rows unsettled" "$dir/check.log" ||
    say_fail "three SIGINTs: opcost check exit $crc: $(cat "$dir/check.log")"
"$opcost" ab --report "$out" >"$dir/report.log" 2>&1
[[ $? -eq 2 ]] || say_fail "three SIGINTs: opcost ab --report of the journal did not exit 2"
echo "ok: three SIGINTs: exit $rc; check: exit $crc: $(head -c 120 "$dir/check.log")"

# 4. two runs with the same --out: the second refuses
out="$dir/same.csv"
"$opcost" run --shapes "$dir/six.csv" --paths kernel --llc-mib 32 --threads 1 --no-pin \
    --rep-budget-ms 200 --noise 0.0001 --out "$out" >"$dir/same1.log" 2>&1 &
pid=$!
until_rows "$out" $pid 1
"$opcost" run --shapes "$dir/two.csv" --paths kernel --llc-mib 32 --threads 1 --no-pin \
    --rep-budget-ms 5 --out "$out" >"$dir/same2.log" 2>&1
rc2=$?
"$opcost" ab --base "$build" --new "$build" --shapes "$dir/two.csv" "${common[@]}" \
    --rep-budget-ms 5 --out "$out" >"$dir/same3.log" 2>&1
rc3=$?
[[ -e $out ]] && say_fail "the same --out: a file at $out before the first run ended"
kill -TERM $pid
wait $pid
[[ $rc2 -eq 2 ]] && grep -q "is being written by another opcost run (pid $pid" "$dir/same2.log" ||
    say_fail "the same --out (run): exit $rc2: $(tail -2 "$dir/same2.log")"
[[ $rc3 -eq 2 ]] && grep -q "is being written by another opcost run (pid $pid" "$dir/same3.log" ||
    say_fail "the same --out (ab): exit $rc3: $(tail -2 "$dir/same3.log")"
"$opcost" check "$out" >/dev/null 2>&1 && [[ $(grep -c ',fused_add_rms_norm,' "$out") -eq 6 ]] ||
    say_fail "the same --out: the first run's file is not its own: $(grep -c . "$out" 2>&1)"
[[ -e $out.lock ]] && say_fail "the same --out: the lock was left"
echo "ok: the same --out: the second exits $rc2 (run) and $rc3 (ab): $(grep -o 'is being written.*' "$dir/same2.log" | head -1)"

# 5. compare of two ab files: refused with a pointer; ab --report reads one
"$opcost" ab --base "$build" --new "$build" --shapes "$dir/two.csv" "${common[@]}" \
    --rep-budget-ms 5 --out "$dir/aa.csv" >"$dir/aa.log" 2>&1
rc=$?
[[ $rc -eq 0 || $rc -eq 1 ]] || say_fail "an A/A: exit $rc: $(tail -3 "$dir/aa.log")"
"$opcost" compare "$dir/aa.csv" "$dir/history/once.csv" >"$dir/compare.log" 2>&1
rc=$?
[[ $rc -eq 2 ]] && grep -q "is an opcost ab file .*opcost ab --report" "$dir/compare.log" ||
    say_fail "compare of two ab files: exit $rc: $(head -5 "$dir/compare.log")"
grep -q "only-new\|only in" "$dir/compare.log" && say_fail "compare of two ab files joined them"
"$opcost" ab --report "$dir/aa.csv" >"$dir/aa_report.log" 2>&1
rc=$?
[[ $rc -eq 0 || $rc -eq 1 ]] && grep -q "expected cost per call: x" "$dir/aa_report.log" ||
    say_fail "ab --report of an A/A: exit $rc: $(tail -3 "$dir/aa_report.log")"
echo "ok: compare of ab files refused: $(head -c 160 "$dir/compare.log")"
exit $fail
