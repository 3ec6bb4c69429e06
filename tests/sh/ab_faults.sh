#!/usr/bin/env bash
# opcost ab under faults of its workers and their environment: every wait
# is bounded, nothing outlives the run, each side's library is the one
# its loader mapped. No timing asserted beyond "it ended" (a hang bound).
#  1. a base whose opcost never answers (exec sleep): exit 2 naming the
#     side and "no answer"; no sleep left; a coordinator killed with
#     SIGKILL takes it along (PR_SET_PDEATHSIG)
#  2. a worker stopped (SIGSTOP) mid-run: killed at its deadline, named,
#     the run ends (exit 2), its points error, no worker left
#  3. one SIGINT while a worker is stopped: the run ends within a bound
#  4. LD_LIBRARY_PATH, LD_PRELOAD, PYTHONPATH removed for the workers and
#     said (a stand-in worker dumps its environment); --keep-loader-env
#     keeps them
#  5. each side's library said (path, size, FNV-1a 64); two sides whose
#     libraries are the same file, or the same bytes, while their builds
#     claim different commits: exit 2, why
#  6. a base whose loader finds a truncated librowops_torch.so (it dies of
#     SIGBUS before its hello): the library named as not mappable
# Usage: ab_faults.sh OPCOST BUILD_DIR
set -u
build="$(cd "$(dirname "$1")" && pwd)"
opcost="$build/$(basename "$1")"
rm -rf "$2/ab_faults" && mkdir -p "$2/ab_faults"
dir="$(cd "$2/ab_faults" && pwd)"
fail=0
lib="$build/librowops_torch.so"
printf 'op,B,N,dtype,layout,freq\nrms_norm_rows,4,256,float32,contiguous,1\n' >"$dir/one.csv"
{
    echo 'op,B,N,dtype,layout,freq'
    for b in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
        echo "rms_norm_rows,$b,1024,float32,contiguous,1"
    done
} >"$dir/many.csv"
small=(--llc-mib 32 --threads 1 --paths kernel --rep-budget-ms 5)

# ended PID SECONDS: waits for PID to end, SECONDS at most (0: ended)
ended() {
    for _ in $(seq $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}
# worker_of PID: the oldest `opcost worker` child of PID (waits 30 s)
worker_of() {
    local w=""
    for _ in $(seq 300); do
        w=$(pgrep -o -P "$1" -f 'opcost worker')
        [[ -n $w ]] && break
        sleep 0.1
    done
    echo "$w"
}
# until_points OUT PID N: waits (30 s at most) for N points in the journal
until_points() {
    local j="$1.journal.$2"
    for _ in $(seq 300); do
        [[ -f $j && $(($(wc -l <"$j") - 1)) -ge $(($3 * 2)) ]] && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    echo "FAIL: no finished point in $j within 30 s"
    fail=1
}

# ---- 1. a base that never answers
marker="600.$$"
mkdir -p "$dir/hang"
printf '#!/bin/sh\nexec sleep %s\n' "$marker" >"$dir/hang/opcost"
chmod +x "$dir/hang/opcost"
OPCOST_AB_DEADLINE_SCALE=0.02 timeout -s KILL 60 "$opcost" ab \
    --base "$dir/hang" --new "$build" --shapes "$dir/one.csv" "${small[@]}" \
    --out "$dir/hang.csv" >"$dir/hang.log" 2>&1
rc=$?
if [[ $rc -ne 2 ]] || ! grep -q -- "--base: .*the base worker (PID [0-9]*) gave no answer in [0-9.]* s to its hello" "$dir/hang.log"; then
    cat "$dir/hang.log"
    echo "FAIL: a base that never answers: exit $rc (want 2, the side and 'no answer' named)"
    fail=1
else
    echo "ok: $(grep 'gave no answer' "$dir/hang.log" | tail -1)"
fi
sleep 0.2
if pgrep -f "sleep $marker" >/dev/null; then
    echo "FAIL: the hung base's process outlived the run"
    kill -KILL $(pgrep -f "sleep $marker") 2>/dev/null
    fail=1
fi
# ... and a coordinator killed while it waits takes the worker along
"$opcost" ab --base "$dir/hang" --new "$build" --shapes "$dir/one.csv" \
    "${small[@]}" --out "$dir/hang9.csv" >"$dir/hang9.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
    pgrep -f "sleep $marker" >/dev/null && break
    sleep 0.1
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
gone=0
for _ in $(seq 50); do
    pgrep -f "sleep $marker" >/dev/null || { gone=1; break; }
    sleep 0.1
done
if [[ $gone -ne 1 ]]; then
    echo "FAIL: a worker outlived its coordinator killed with SIGKILL"
    kill -KILL $(pgrep -f "sleep $marker") 2>/dev/null
    fail=1
else
    echo "ok: the worker ended with its coordinator"
fi

# ---- 2. a worker stopped mid-run: killed at its deadline
out="$dir/stopped.csv"
OPCOST_AB_DEADLINE_SCALE=0.1 "$opcost" ab --base "$build" --new "$build" \
    --shapes "$dir/many.csv" "${small[@]}" --processes 1 --out "$out" \
    >"$out.log" 2>&1 &
pid=$!
w=$(worker_of "$pid")
until_points "$out" "$pid" 1
kill -STOP "$w"
if ! ended "$pid" 60; then
    echo "FAIL: a stopped worker hangs the run (60 s)"
    kill -KILL "$pid" "$w"
    fail=1
fi
wait "$pid"
rc=$?
kill -0 "$w" 2>/dev/null && { echo "FAIL: the stopped worker $w was left"; kill -KILL "$w"; fail=1; }
if [[ $rc -ne 2 ]] || ! grep -q "worker (PID $w) gave no answer in [0-9.]* s to " "$out.log"; then
    cat "$out.log"
    echo "FAIL: a stopped worker: exit $rc (want 2, PID $w named with 'no answer')"
    fail=1
else
    echo "ok: $(grep "PID $w" "$out.log" | head -1)"
fi
python3 - "$out" "$w" <<'PY' || fail=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ok = [r for r in rows if r["status"] == "ok"]
err = [r for r in rows if r["status"] == "error"]
assert ok, "no point measured before the stop"
assert err and all(f"PID {sys.argv[2]}" in r["note"] or "worker" in r["note"] for r in err), [r["note"] for r in err]
assert any("no answer" in r["note"] for r in err), [r["note"] for r in err][:3]
print(f"ok: {len(ok)} rows ok, {len(err)} error after the stop")
PY

# ---- 3. one SIGINT while a worker is stopped (deadlines as they are)
out="$dir/sigint.csv"
"$opcost" ab --base "$build" --new "$build" --shapes "$dir/many.csv" \
    "${small[@]}" --processes 1 --out "$out" >"$out.log" 2>&1 &
pid=$!
w=$(worker_of "$pid")
until_points "$out" "$pid" 1
kill -STOP "$w"
sleep 0.5
kill -INT "$pid"
# the grace after an interrupt is 3 s; a sample's deadline alone 10 s
if ! ended "$pid" 8; then
    echo "FAIL: one SIGINT with a worker stopped: the run still runs after 8 s"
    kill -KILL "$pid" "$w"
    fail=1
fi
wait "$pid"
rc=$?
kill -0 "$w" 2>/dev/null && { echo "FAIL: the stopped worker $w was left"; kill -KILL "$w"; fail=1; }
if [[ $rc -eq 0 ]] || ! grep -q "gave no answer in [0-9.]* s to .* (the run interrupted)" "$out.log"; then
    cat "$out.log"
    echo "FAIL: SIGINT with a worker stopped: exit $rc, the worker not named"
    fail=1
else
    echo "ok: $(grep 'the run interrupted' "$out.log" | head -1)"
fi

# ---- 4. the loader's environment removed for the workers, and said
mkdir -p "$dir/envdump"
printf '#!/bin/sh\nenv >"%s/env.$$"\nexit 3\n' "$dir/envdump" >"$dir/envdump/opcost"
chmod +x "$dir/envdump/opcost"
LD_LIBRARY_PATH="$dir/nolib" PYTHONPATH="$dir/nopy" timeout -s KILL 60 \
    "$opcost" ab --base "$dir/envdump" --new "$build" --shapes "$dir/one.csv" \
    "${small[@]}" --out "$dir/env.csv" >"$dir/env.log" 2>&1
dump=$(cat "$dir"/envdump/env.* 2>/dev/null)
if ! grep -q "^opcost ab: removed for the workers .*: LD_LIBRARY_PATH=$dir/nolib, PYTHONPATH=$dir/nopy$" "$dir/env.log" ||
    grep -q '^LD_LIBRARY_PATH=\|^PYTHONPATH=' <<<"$dump" || [[ -z $dump ]]; then
    cat "$dir/env.log"
    echo "FAIL: the loader's environment not removed for the workers, or not said: $(grep 'LD_\|PYTHONPATH' <<<"$dump")"
    fail=1
else
    echo "ok: $(grep 'removed for the workers' "$dir/env.log")"
fi
rm -f "$dir"/envdump/env.*
LD_LIBRARY_PATH="$dir/nolib" timeout -s KILL 60 "$opcost" ab --keep-loader-env \
    --base "$dir/envdump" --new "$build" --shapes "$dir/one.csv" \
    "${small[@]}" --out "$dir/env.csv" >"$dir/keep.log" 2>&1
if grep -q "removed for the workers" "$dir/keep.log" ||
    ! grep -q "^LD_LIBRARY_PATH=$dir/nolib$" "$dir"/envdump/env.* 2>/dev/null; then
    cat "$dir/keep.log"
    echo "FAIL: --keep-loader-env did not keep LD_LIBRARY_PATH"
    fail=1
else
    echo "ok: --keep-loader-env kept LD_LIBRARY_PATH"
fi

# ---- 5. each side's library; the same file or bytes under two commits
grep -Eq "^opcost ab: base library $lib, [0-9]+ bytes, FNV-1a 64 [0-9a-f]{16}$" "$dir/stopped.csv.log" ||
    { grep library "$dir/stopped.csv.log"; echo "FAIL: the base's library not said"; fail=1; }
grep -Eq "^opcost ab: new library $lib, [0-9]+ bytes, FNV-1a 64 [0-9a-f]{16}$" "$dir/stopped.csv.log" ||
    { echo "FAIL: the new side's library not said"; fail=1; }
# a checkout of another commit: what the base build claims to be
git init -q "$dir/other" && git -C "$dir/other" -c user.name=t -c user.email=t@t \
    commit -q --allow-empty -m other || { echo "FAIL: git"; fail=1; }
mkdir -p "$dir/samefile" "$dir/samebytes" "$dir/copy"
cp "$lib" "$dir/copy/"
printf '#!/bin/sh\nGIT_DIR="%s" exec "%s" "$@"\n' "$dir/other/.git" "$opcost" \
    >"$dir/samefile/opcost"
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" GIT_DIR="%s" exec "%s" "$@"\n' \
    "$dir/copy" "$dir/other/.git" "$opcost" >"$dir/samebytes/opcost"
chmod +x "$dir/samefile/opcost" "$dir/samebytes/opcost"
for kind in samefile samebytes; do
    want="the same file"
    [[ $kind == samebytes ]] && want="libraries of the same bytes"
    timeout -s KILL 120 "$opcost" ab --base "$dir/$kind" --new "$build" \
        --shapes "$dir/one.csv" "${small[@]}" --processes 1 \
        --out "$dir/$kind.csv" >"$dir/$kind.log" 2>&1
    rc=$?
    if [[ $rc -ne 2 ]] || ! grep -q "claim different commits (base [0-9a-f]*, new [0-9a-f]*.*) but loaded $want" "$dir/$kind.log"; then
        cat "$dir/$kind.log"
        echo "FAIL: $kind: exit $rc (want 2: '$want' under two commits)"
        fail=1
    else
        echo "ok: $kind: $(grep -o 'claim different.*FNV-1a 64 [0-9a-f]*)' "$dir/$kind.log")"
    fi
done

# ---- 6. a truncated library: named as not mappable
mkdir -p "$dir/trunc/lib"
head -c 4096 "$lib" >"$dir/trunc/lib/librowops_torch.so"
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$dir/trunc/lib" \
    "$opcost" >"$dir/trunc/opcost"
chmod +x "$dir/trunc/opcost"
timeout -s KILL 120 "$opcost" ab --base "$dir/trunc" --new "$build" \
    --shapes "$dir/one.csv" "${small[@]}" --out "$dir/trunc.csv" \
    >"$dir/trunc.log" 2>&1
rc=$?
if [[ $rc -ne 2 ]] || ! grep -q -- "--base: .*died of signal [0-9]* (Bus error) .*could not be mapped: $dir/trunc/lib/librowops_torch.so: 4096 bytes, its loadable segments reach [0-9]*: truncated" "$dir/trunc.log"; then
    cat "$dir/trunc.log"
    echo "FAIL: a truncated library: exit $rc, not named as not mappable"
    fail=1
else
    echo "ok: $(grep -o 'could not be mapped.*' "$dir/trunc.log")"
fi
exit $fail
