#!/usr/bin/env bash
# Bad input to the opcost CLI: a clear message naming the argument or
# file:line, exit status 2, nothing written. Usage: cli_errors.sh OPCOST DIR
set -u
opcost="$1"
dir="$2/cli_errors"
rm -rf "$dir"
mkdir -p "$dir"
printf 'op,B,N,dtype,layout,freq\nfused_add_rms_norm,-3,4096,float32,contiguous,1\n' >"$dir/negative.csv"
printf 'op,B,N,dtype\n' >"$dir/short_header.csv"
printf 'not,a,results,file\n' >"$dir/bad_results.csv"
: >"$dir/empty.csv"
fail=0
expect() { # expect STATUS PATTERN -- command...
    local want="$1" pattern="$2"
    shift 3
    local out
    out=$("$@" 2>&1)
    local got=$?
    if [[ $got -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
        echo "FAIL: $* -> exit $got (want $want): $out"
        fail=1
    else
        echo "ok: $* -> exit $got: $(head -1 <<<"$out")"
    fi
}
expect 2 "negative.csv:2: column 'B'" -- "$opcost" shapes check "$dir/negative.csv"
expect 2 "short_header.csv:1: header" -- "$opcost" shapes check "$dir/short_header.csv"
expect 2 "empty.csv" -- "$opcost" shapes check "$dir/empty.csv"
expect 2 "bad_results.csv:1:1: header" -- "$opcost" check "$dir/bad_results.csv"
expect 2 "negative.csv:2: column 'B'" -- "$opcost" run --shapes "$dir/negative.csv" --out "$dir/x.csv"
expect 2 "unknown option '--frobnicate'" -- "$opcost" run --frobnicate
expect 2 "--dtype: each must be" -- "$opcost" run --dtype int8
expect 2 "--replicates: must be an integer in 0..64, got '65'" -- "$opcost" run --replicates 65
expect 2 "--threshold: must be a fraction in 0.0001..1, got '2'" -- "$opcost" run --threshold 2
expect 2 "--llc-mib: must be a number of MiB in 1..1048576, got '0'" -- "$opcost" run --llc-mib 0
expect 2 "--full-bandwidth-wait-s: must be a number of seconds in 0..3600, got '-1'" -- "$opcost" run --full-bandwidth-wait-s -1
expect 2 "--time-budget: must be a number of seconds in 0..86400 \\(0: no budget\\), got '-5'" -- "$opcost" run --time-budget -5
expect 2 "--time-budget: must be a number of seconds in 0..86400 \\(0: no budget\\), got '1h'" -- "$opcost" run --time-budget 1h
expect 2 "--baseline: must name one of the selected paths \(--paths\), got 'native'" -- "$opcost" run --paths kernel,reference --baseline native
expect 2 "--baseline: VARIANT must be one of the selected variants" -- "$opcost" run --paths kernel --variants cpu_strided --baseline kernel/cpu_fast_avx2
# the unknown-name errors list every name, the last one too
expect 2 "unknown path 'nosuch' \\(known: kernel, .*, distributed\\)$" -- "$opcost" run --paths nosuch
expect 2 "unknown variant 'nosuch' \\(known: auto, all, cpu_strided, .*, triton\\)$" -- "$opcost" run --variants nosuch
mkdir -p "$dir/ro" && chmod 500 "$dir/ro"
if [[ $(id -u) -ne 0 ]]; then # root writes anywhere
    expect 2 "not writable" -- "$opcost" run --out "$dir/ro/x.csv"
fi
[[ ! -e "$dir/x.csv" ]] || { echo "FAIL: a results file was written"; fail=1; }

# A CPU capability the kernels would not apply: refused before anything
# runs; one they apply labels the rows' cpu and keeps AVX-512 kernels out.
expect 2 "ROWOPS_CPU_CAPABILITY=avx3: the CPU capability must be avx512, avx2 or default" -- env ROWOPS_CPU_CAPABILITY=avx3 "$opcost" run --quick --shapes edges --paths kernel --out "$dir/cap.csv"
[[ ! -e "$dir/cap.csv" ]] || { echo "FAIL: a capped run with a bad name wrote results"; fail=1; }
if ROWOPS_CPU_CAPABILITY=avx2 "$opcost" run --quick --shapes edges --paths kernel,kernel-e2e --dtype bfloat16 --out "$dir/cap.csv" >"$dir/cap.log" 2>&1; then
    python3 - "$dir/cap.csv" <<'PY' || fail=1
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
bad = [r for r in rows if "[ROWOPS_CPU_CAPABILITY=avx2]" not in r["cpu"]
       or "avx512" in r["dispatch_path"] or "narrow" in r["dispatch_path"]]
if not rows or bad:
    print("FAIL: capped rows", len(rows), "unlabelled or AVX-512:",
          [(r["cpu"], r["dispatch_path"]) for r in bad[:3]])
    sys.exit(1)
print("ok: ROWOPS_CPU_CAPABILITY=avx2: %d rows labelled, no AVX-512 kernel" % len(rows))
PY
else
    echo "FAIL: a run under ROWOPS_CPU_CAPABILITY=avx2"; cat "$dir/cap.log"; fail=1
fi

# Outputs (issue 19, items 7 and 9): only regular files or new names in
# existing, writable directories; refused before anything runs. The runs
# are kept small (--quick, one set, one path) should a refusal ever fail.
small=(--quick --shapes edges --paths kernel)
mkdir -p "$dir/dir.csv"
mkfifo "$dir/fifo.csv"
expect 2 "--out: directory '/proc' is not writable" -- "$opcost" run "${small[@]}" --out /proc/t.csv
expect 2 "--out: '$dir/dir.csv' is a directory" -- "$opcost" run "${small[@]}" --out "$dir/dir.csv"
expect 2 "--out: directory '$dir/missing/deeper' does not exist" -- "$opcost" run "${small[@]}" --out "$dir/missing/deeper/t.csv"
[[ ! -e "$dir/missing" ]] || { echo "FAIL: --out created directories"; fail=1; }
expect 2 "--out: '$dir/fifo.csv' is a FIFO: results are written only to regular files or new paths" -- "$opcost" run "${small[@]}" --out "$dir/fifo.csv"
[[ -p "$dir/fifo.csv" ]] || { echo "FAIL: the FIFO was replaced"; fail=1; }
mkfifo "$dir/side.samples.csv"
expect 2 "--out: '$dir/side.samples.csv' is a FIFO" -- "$opcost" run "${small[@]}" --out "$dir/side.csv"
# a character device of our own (never the machine's /dev/null)
if mknod "$dir/null.csv" c 1 3 2>/dev/null; then
    expect 2 "is a character device" -- "$opcost" run "${small[@]}" --out "$dir/null.csv"
    expect 2 "--csv: '$dir/null.csv' is a character device" -- "$opcost" compare --csv "$dir/null.csv" "$dir/a.csv" "$dir/a.csv"
    [[ -c "$dir/null.csv" ]] || { echo "FAIL: the device was replaced"; fail=1; }
else
    echo "SKIP character-device outputs: mknod needs root"
fi

# --quick over sets whose shapes are all beyond its 2^22 elements
# (item 11; the message blamed --dtype, which was not given), and a B * N
# that overflows int64 (item 17: it wrapped and the shape was kept)
printf 'op,B,N,dtype,layout,freq\nrms_norm_rows,8192,4096,float32,contiguous,1\n' >"$dir/big.csv"
printf 'op,B,N,dtype,layout,freq\nrms_norm_rows,4294967296,4294967296,float32,contiguous,1\n' >"$dir/wrap.csv"
quick_msg="--quick: every shape of the selected sets has more than 2\^22 elements"
expect 2 "$quick_msg" -- "$opcost" run --quick --shapes "$dir/big.csv" --out "$dir/q.csv"
expect 2 "$quick_msg" -- "$opcost" run --quick --shapes "$dir/wrap.csv" --out "$dir/q.csv"
expect 2 "--dtype: no shape of the selected sets has the selected dtypes" -- "$opcost" run --quick --shapes "$dir/big.csv" --dtype bfloat16 --out "$dir/q.csv"

# shape-set names resolve as `run` resolves them, whatever the directory
# (item 14: `shapes check NAME` looked in ./shapes)
(cd / && expect 0 "llama-3.1-8b-conv.csv: ok, 56 rows" -- "$opcost" shapes check llama-3.1-8b-conv) || fail=1
expect 2 "unknown shape set 'nope'" -- "$opcost" shapes check --shapes-dir "$dir" nope
# Hostile files, round two (issue 28). Outputs that are the command's own
# inputs (item 3): refused before anything runs, the input untouched.
printf 'op,B,N,dtype,layout,freq\nrms_norm_rows,4,256,float32,contiguous,1\n' >"$dir/good.csv"
cp "$dir/good.csv" "$dir/good.orig"
expect 2 "--out: '$dir/good.csv' is a --shapes file" -- "$opcost" run --quick --shapes "$dir/good.csv" --paths kernel --out "$dir/good.csv"
cmp -s "$dir/good.csv" "$dir/good.orig" || { echo "FAIL: run --out replaced its shape file"; fail=1; }
build="$(dirname "$opcost")"
expect 2 "--gates-out: '$dir/ab.csv' is --out" -- "$opcost" ab --base "$build" --new "$build" --quick --shapes "$dir/good.csv" --out "$dir/ab.csv" --gates-out "$dir/ab.csv"
expect 2 "--gates-out: '$dir/good.csv' is a --shapes file" -- "$opcost" ab --base "$build" --new "$build" --quick --shapes "$dir/good.csv" --gates-out "$dir/good.csv"
cmp -s "$dir/good.csv" "$dir/good.orig" || { echo "FAIL: ab --gates-out wrote to its shape file"; fail=1; }
# the same set twice counted its rows and weights twice (a low item)
expect 2 "--shapes: '$dir/good.csv' is given twice" -- "$opcost" run --quick --shapes "$dir/good.csv" --shapes "$dir/good.csv" --out "$dir/twice.csv"

# A run to read back, then inputs that are no regular file (item 8): a
# FIFO, /dev/zero behind a .csv name, a sidecar linked to it. Each refused
# at once (timeout: before, check and compare waited or read forever).
"$opcost" run --quick --shapes "$dir/good.csv" --paths kernel --llc-mib 32 --out "$dir/r.csv" >/dev/null 2>&1 ||
    { echo "FAIL: a quick run to read back"; fail=1; }
expect 2 "fifo.csv: is a FIFO: only regular files are read" -- timeout 20 "$opcost" check "$dir/fifo.csv"
ln -s /dev/zero "$dir/zero.csv"
expect 2 "zero.csv: is a character device" -- timeout 20 "$opcost" check "$dir/zero.csv"
mkdir -p "$dir/linked"
cp "$dir/r.csv" "$dir/linked/r.csv"
ln -s /dev/zero "$dir/linked/r.samples.csv"
expect 2 "r.samples.csv: is a character device" -- timeout 20 "$opcost" compare "$dir/r.csv" "$dir/linked/r.csv"

# A malformed trace is bad input (item 11): exit 2, not 1.
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n' >"$dir/empty_trace.csv"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:04.0,10,2\n2023-11-16 18:17:03.0,10,2\n' >"$dir/unsorted_trace.csv"
expect 2 "empty_trace.csv" -- "$opcost" shapes derive "$dir/empty_trace.csv"
expect 2 "unsorted_trace.csv" -- "$opcost" shapes derive "$dir/unsorted_trace.csv"

# shapes generate through a link planted at a file it writes (item 2)
mkdir -p "$dir/gen"
echo precious >"$dir/victim.txt"
ln -s "$dir/victim.txt" "$dir/gen/llama-3.1-8b-conv.csv"
# and at the fixed temporary name it used to write through (fopen of
# <file>.tmp followed a link planted there)
echo precious >"$dir/victim2.txt"
ln -s "$dir/victim2.txt" "$dir/gen/llama-3.1-8b-code.csv.tmp"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$opcost" shapes generate --traces-dir "$src/shapes/traces" --out-dir "$dir/gen" >/dev/null 2>&1 ||
    { echo "FAIL: shapes generate"; fail=1; }
[[ $(cat "$dir/victim.txt") == precious && ! -L "$dir/gen/llama-3.1-8b-conv.csv" ]] ||
    { echo "FAIL: shapes generate wrote through a planted link"; fail=1; }
[[ $(cat "$dir/victim2.txt") == precious ]] ||
    { echo "FAIL: shapes generate wrote through a link at its temporary"; fail=1; }

# Two runs in one second had one run_id and one results file (item 6):
# with results files of that name already there (planted for this second
# and the next few), a run takes the name with -2.
mkdir -p "$dir/res"
host=$(sed -n '2p' "$dir/r.csv" | cut -d, -f2 | cut -d- -f2-)
now=$(date -u +%s)
for k in 0 1 2 3 4 5 6 7 8 9; do
    id="$(date -u -d "@$((now + k))" +%Y%m%dT%H%M%SZ)-$host"
    echo planted >"$dir/res/$id.csv"
done
OPCOST_RESULTS_DIR="$dir/res" "$opcost" run --quick --shapes "$dir/good.csv" --paths kernel --llc-mib 32 >"$dir/claim.log" 2>&1 ||
    { echo "FAIL: a run beside a same-second results file"; cat "$dir/claim.log"; fail=1; }
[[ $(cat "$dir"/res/*Z-"$host".csv | sort -u) == planted ]] ||
    { echo "FAIL: a run replaced another run's results file"; fail=1; }
ls "$dir"/res/*Z-"$host"-2.csv >/dev/null 2>&1 ||
    { echo "FAIL: no results file with run_id -2"; ls "$dir/res"; fail=1; }
! ls -a "$dir/res" | grep -q '\.claim$' || { echo "FAIL: a claim was left"; fail=1; }
exit $fail
