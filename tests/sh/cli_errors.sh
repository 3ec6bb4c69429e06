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
mkdir -p "$dir/ro" && chmod 500 "$dir/ro"
if [[ $(id -u) -ne 0 ]]; then # root writes anywhere
    expect 2 "not writable" -- "$opcost" run --out "$dir/ro/x.csv"
fi
[[ ! -e "$dir/x.csv" ]] || { echo "FAIL: a results file was written"; fail=1; }
exit $fail
