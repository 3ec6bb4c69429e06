#!/usr/bin/env bash
# CUDA compiler launcher (CMake's CUDA_COMPILER_LAUNCHER) for the rowops
# kernels: runs the compile it is given with `-Xptxas=-v --keep`, so the
# object that is linked comes with ptxas's resource report (registers,
# shared memory, spills per kernel and architecture) and its PTX (the
# kernels' .maxntid, i.e. __launch_bounds__) in OUTDIR/<source>/, for
# tests/c/test_cuda_resources.c. ptxas's info lines go to the report only;
# everything else the compiler prints still reaches the build output.
#   usage: nvcc-resources.sh OUTDIR nvcc ARGS...
set -euo pipefail
outdir=$1
shift
src=
prev=
for a in "$@"; do
    [[ $prev == -c ]] && src=$a
    prev=$a
done
name=$(basename "${src:-unknown}")
name=${name%.cu}
keep="$outdir/$name"
mkdir -p "$keep"
report="$keep/ptxas.txt"
rc=0
"$@" -Xptxas=-v --keep --keep-dir="$keep" 2> "$report.tmp" || rc=$?
grep -v -E '^(ptxas info|    [0-9]+ bytes stack frame)' "$report.tmp" >&2 || true
mv "$report.tmp" "$report"
exit "$rc"
