#!/usr/bin/env bash
# `opcost run --device cuda` on a machine without a usable GPU: refused
# before anything runs, exit 2, the reason named, nothing written (no
# crash). Skipped (77) where a GPU answers. Usage: cuda_refused.sh OPCOST DIR
set -u
opcost="$1"
dir="$2/cuda_refused"
rm -rf "$dir" && mkdir -p "$dir"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    echo "skipped: a GPU is present (gpu-check.sh runs the CUDA bench)"
    exit 77
fi
out=$("$opcost" run --device cuda --quick --out "$dir/x.csv" 2>&1)
rc=$?
echo "$out"
fail=0
[[ $rc -eq 2 ]] || { echo "FAIL: exit $rc, want 2"; fail=1; }
grep -q -- "--device cuda: no usable CUDA device: ." <<<"$out" ||
    { echo "FAIL: the refusal does not name --device cuda and the reason"; fail=1; }
[[ ! -e "$dir/x.csv" ]] || { echo "FAIL: a results file was written"; fail=1; }
exit $fail
