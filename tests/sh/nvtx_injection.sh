#!/usr/bin/env bash
# opcost run under NVTX's tool interface: a --quick run of three paths over
# two tiny shape sets (one transposed shape, so native converts: its
# conversion is seen in the attribute phase, a convert phase appears only
# where attribution falls back to timing conversions alone), with
# compiled-aoti failing (its cache under a file: the package build fails),
# every range logged by tests/c/nvtx_inject.c and checked by nvtx_check:
# balanced, nested run > distribution > shape > path > phase, every path,
# phase and distribution named. The checker must also refuse the log with
# its last pop removed. Usage: nvtx_injection.sh OPCOST INJECT CHECK DIR
set -u
opcost="$1" inject="$2" check="$3" dir="$4/nvtx_injection"
rm -rf "$dir"
mkdir -p "$dir"
printf 'op,B,N,dtype,layout,freq\nrms_norm_rows,4,64,float32,contiguous,1\nfused_add_rms_norm,8,128,float32,transposed,1\n' >"$dir/nvtx-a.csv"
printf 'op,B,N,dtype,layout,freq\nrms_norm_rows,2,256,bfloat16,contiguous,1\n' >"$dir/nvtx-b.csv"
paths=kernel,native,compiled-aoti
if ! NVTX_INJECTION64_PATH="$inject" OPCOST_NVTX_LOG="$dir/nvtx.log" \
    OPCOST_CACHE=/dev/null/opcost "$opcost" run --llc-mib 32 --quick --threads 1 --no-pin --paths "$paths" \
    --shapes "$dir/nvtx-a.csv" --shapes "$dir/nvtx-b.csv" --out "$dir/run.csv" \
    >"$dir/run.out" 2>&1; then
    cat "$dir/run.out"
    echo "FAIL: opcost run"
    exit 1
fi
if ! grep -q 'compiled-aoti: NotADirectoryError' "$dir/run.out"; then
    cat "$dir/run.out"
    echo "FAIL: compiled-aoti did not fail as this test needs"
    exit 1
fi
if grep -q 'opcost: nvtx:' "$dir/run.out"; then
    grep 'opcost: nvtx:' "$dir/run.out"
    echo "FAIL: the run's own range check complained"
    exit 1
fi
"$check" "$dir/nvtx.log" --paths "$paths" --distributions nvtx-a,nvtx-b \
    --phases calibrate,warm-up,sample,verify,attribute || exit 1
# the checker itself: a missing pop must fail it
last=$(grep -n "$(printf '\tpop\topcost$')" "$dir/nvtx.log" | tail -1 | cut -d: -f1)
sed "${last}d" "$dir/nvtx.log" >"$dir/unbalanced.log"
if "$check" "$dir/unbalanced.log" >/dev/null 2>&1; then
    echo "FAIL: nvtx_check accepted a log with a pop missing"
    exit 1
fi
echo "ok: the checker refuses a log with a pop missing"
