#!/usr/bin/env bash
# Builds the libFuzzer targets for the two bench parsers and runs each for a
# bounded time. Usage: fuzz/run.sh [seconds-per-target] [build-dir], the
# build dir by default build/fuzz (build/ is git-ignored).
# Exits non-zero on any crash, leak, sanitizer report or failed assertion.
set -euo pipefail

secs="${1:-20}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${2:-$root/build/fuzz}"
cc="${CC_FUZZ:-clang-14}"
command -v "$cc" >/dev/null || cc=clang

case "$secs" in
'' | *[!0-9]*)
    echo "fuzz/run.sh: seconds must be a positive integer, got '$secs'" >&2
    exit 2
    ;;
esac

mkdir -p "$build"
# shape_file.c names ops and dtypes through kernels/ (rowops_op_name in
# op_table.c, rowops_dtype_name in rowops_tensor.c, which needs
# eligibility.c, cpu_features.c and cpu_cache.c); both read through
# bench/io/infile.c, and bench/results/ writes through bench/io/outfile.c.
common=(bench/shapes/errorf.c kernels/op_table.c kernels/rowops_tensor.c
    kernels/eligibility.c kernels/cpu_features.c kernels/cpu_cache.c
    bench/io/infile.c)
# shellcheck disable=SC2054 # the commas belong to -fsanitize=
flags=(-std=c11 -Wall -Wextra -Werror -g -O1
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
    -Ibench/shapes -Ibench/results -Ibench/io -Ikernels)

cd "$root"
# the two targets built and run side by side (each one process)
"$cc" "${flags[@]}" -o "$build/fuzz_shape_file" fuzz/fuzz_shape_file.c \
    bench/shapes/shape_file.c "${common[@]}" -lm &
"$cc" "${flags[@]}" -o "$build/fuzz_results_csv" fuzz/fuzz_results_csv.c \
    bench/results/*.c bench/io/infile.c bench/io/outfile.c -lm &
wait %1 && wait %2

# fuzz TARGET: runs it for secs into its log; its exit status
fuzz() {
    local target="$1"
    # Work on a copy: libFuzzer adds new inputs to its first corpus dir.
    local work="$build/corpus-$target"
    rm -rf "$work" "$build/artifacts-$target"
    mkdir -p "$work" "$build/artifacts-$target"
    cp fuzz/corpus/"$target"/* "$work"/
    # Leaks are findings too (detect_leaks is on by default with ASan).
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$build/fuzz_$target" -max_total_time="$secs" -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts-$target/" \
        "$work" >"$build/fuzz_$target.log" 2>&1
}

targets=(shape_file results_csv)
pids=()
for target in "${targets[@]}"; do
    echo "== fuzz_$target: $secs s"
    fuzz "$target" &
    pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
    target="${targets[$i]}" log="$build/fuzz_${targets[$i]}.log"
    if wait "${pids[$i]}"; then rc=0; else rc=$?; fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    echo "fuzz_$target: executions ${execs:-unknown}, exit $rc"
    if [ "$rc" -ne 0 ]; then
        status=1
        echo "fuzz_$target: FAILED; tail of $log:" >&2
        tail -40 "$log" >&2
        ls "$build/artifacts-$target" >&2
    fi
done
exit "$status"
