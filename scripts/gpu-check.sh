#!/usr/bin/env bash
# The GPU check, for one run on a machine with a CUDA device and the torch
# already installed there (python3; no network, so no set-up script):
#   scripts/gpu-check.sh OUTDIR
# Sections, each timed, each writing OUTDIR/<section>.log and a line of
# OUTDIR/summary.txt; the summary is printed last. Another section is a
# function section_<name> plus one line in SECTIONS below.
#   device     GPU, driver, torch, capability
#   build      cmake build of the operator library (no bench, no _fast
#              unless GPU_CHECK_FULL=1) against that torch, into
#              GPU_CHECK_BUILD (default /tmp/rowops-gpu-build)
#   resources  test_cuda_resources on this build's ptxas report, and
#              cuobjdump --dump-resource-usage of the linked library
#   tests      the CUDA tests: test_cuda.py, test_triton.py, and the cuda
#              tests of the other files
#   kernels    scripts/gpu_kernels.py: per-dtype max error, timings
# The whole run is held to GPU_CHECK_BUDGET seconds (default 450): each
# section gets what is left, at most its own limit. GPU_CHECK_SECTIONS
# picks some ("build resources" needs no device). Exit status: 0 if every
# section passed, 1 if one failed, 2 if a section needs a GPU and there is
# none.
# shellcheck disable=SC2317  # the section_* functions run via run_section
set -uo pipefail

out=${1:?usage: scripts/gpu-check.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=${PYTHON:-python3}
build=${GPU_CHECK_BUILD:-/tmp/rowops-gpu-build}
budget=${GPU_CHECK_BUDGET:-450}
mkdir -p "$out"
out=$(cd "$out" && pwd)
summary="$out/summary.txt"
: > "$summary"
status=0

note() { printf '%-10s %-6s %5ss  %s\n' "$1" "$2" "$3" "$4" >> "$summary"; }

# seconds a section may still use: min(limit, what is left of the budget)
allowance() {
    local left=$((budget - SECONDS))
    ((left < $1)) || left=$1
    ((left > 0)) || left=0
    echo "$left"
}

# run_section NAME LIMIT: section_NAME in a shell of its own under
# timeout (which signals the whole process group), logged
run_section() {
    local name=$1 limit t0 rc what
    limit=$(allowance "$2")
    t0=$SECONDS
    echo "== $name (at most ${limit}s)"
    if ((limit == 0)); then
        note "$name" skip 0 "no time left of the ${budget}s budget"
        status=1
        return
    fi
    SECTION_LIMIT=$limit timeout -k 10 "$limit" bash -c "section_$name" \
        > "$out/$name.log" 2>&1
    rc=$?
    tail -n 25 "$out/$name.log"
    what=$(cat "$out/$name.note" 2> /dev/null || true)
    if ((rc == 0)); then
        note "$name" ok $((SECONDS - t0)) "$what"
    else
        ((rc == 124)) && what="timed out after ${limit}s; $what"
        note "$name" FAIL $((SECONDS - t0)) "rc $rc; $what (see $name.log)"
        status=1
    fi
}

section_device() {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
        --format=csv || true
    "$py" - << 'EOF' | tee "$out/device.note"
import torch
p = torch.cuda.get_device_properties(0)
print(f"{p.name}, sm_{p.major}{p.minor}, {p.multi_processor_count} SMs, "
      f"L2 {p.L2_cache_size >> 20} MiB, torch {torch.__version__}, "
      f"CUDA {torch.version.cuda}")
EOF
}

section_build() {
    local prefix gen=() extra=(-DOPCOST_WITH_BENCH=OFF -DROWOPS_WITH_PYFAST=OFF)
    local targets=(rowops_torch test_cuda_resources)
    prefix=$("$py" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
    command -v ninja > /dev/null && gen=(-G Ninja)
    # the CUDA compiler: PATH, else the toolkit's usual place
    if [[ -z ${CUDACXX:-} ]] && ! command -v nvcc > /dev/null &&
        [[ -x /usr/local/cuda/bin/nvcc ]]; then
        export CUDACXX=/usr/local/cuda/bin/nvcc
    fi
    if [[ ${GPU_CHECK_FULL:-0} == 1 ]]; then
        extra=()
        targets=(all)
    fi
    configure() {
        cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_PREFIX_PATH="$prefix" \
            -DPython3_EXECUTABLE="$(command -v "$py")" "${extra[@]}"
    }
    # a stale build folder (other generator or options): start afresh
    configure || { rm -rf "$build" && configure; } || return 1
    grep -q 'rowops: CUDA kernels ON' "$out/build.log" || {
        echo "gpu-check: CMake found no CUDA compiler (set CUDACXX)"
        return 1
    }
    cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" || return 1
    echo "built $build/librowops_torch.so" > "$out/build.note"
}

section_resources() {
    local rc=0
    "$build/test_cuda_resources" "$build/cuda-resources" \
        > "$out/resources_ptxas.txt" 2>&1 || rc=1
    tail -n 3 "$out/resources_ptxas.txt"
    if ! command -v cuobjdump > /dev/null; then
        echo "no cuobjdump here: ptxas report only" > "$out/resources.note"
        return "$rc"
    fi
    cuobjdump --dump-resource-usage "$build/librowops_torch.so" \
        > "$out/resources_cuobjdump.txt" 2>&1 || rc=1
    # one line per rowops kernel and arch; stack or local bytes fail it
    awk -f "$root/scripts/gpu-resources.awk" "$out/resources_cuobjdump.txt" \
        > "$out/resources_table.txt" || rc=1
    tail -n 1 "$out/resources_table.txt" | tee "$out/resources.note"
    return "$rc"
}

section_tests() {
    export ROWOPS_LIBRARY="$build/librowops_torch.so"
    cd "$root" || return 1
    local rc=0
    "$py" -m pytest tests/python/test_cuda.py tests/python/test_triton.py \
        -q -rs -p no:cacheprovider --junitxml="$out/pytest_cuda.xml" || rc=1
    "$py" -m pytest tests/python/test_forward.py \
        tests/python/test_autograd.py tests/python/test_autocast.py \
        tests/python/test_errors.py tests/python/test_opcheck.py -k cuda \
        -q -rs -p no:cacheprovider --junitxml="$out/pytest_other.xml" || rc=1
    "$py" - "$out" << 'EOF' > "$out/tests.note"
import sys, xml.etree.ElementTree as ET
n = f = e = s = 0
for name in ("pytest_cuda.xml", "pytest_other.xml"):
    try:
        root = ET.parse(f"{sys.argv[1]}/{name}").getroot()
    except (OSError, ET.ParseError):
        continue
    for suite in root.iter("testsuite"):
        n += int(suite.get("tests", 0)); f += int(suite.get("failures", 0))
        e += int(suite.get("errors", 0)); s += int(suite.get("skipped", 0))
print(f"{n} tests: {n - f - e - s} passed, {f} failed, {e} errors, "
      f"{s} skipped")
EOF
    return "$rc"
}

section_kernels() {
    export ROWOPS_LIBRARY="$build/librowops_torch.so"
    "$py" "$root/scripts/gpu_kernels.py" --out "$out" \
        --budget $((SECTION_LIMIT - 30))
    local rc=$?
    echo "errors and timings: kernels_errors.csv, kernels_timing.csv" \
        > "$out/kernels.note"
    return "$rc"
}

# ---- the run ----
wanted=${GPU_CHECK_SECTIONS:-device build resources tests kernels}
need_device=0
for w in $wanted; do
    [[ $w == build || $w == resources ]] || need_device=1
done
if ((need_device)) && ! "$py" -c \
    'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
    2> /dev/null; then
    echo "gpu-check: no CUDA device on this machine (torch.cuda.is_available()" \
        "is False, or no torch in $py); nothing checked" >&2
    exit 2
fi

# name and limit in seconds (the integrator's 'opcost run --device cuda'
# section goes after kernels)
SECTIONS=(
    "device 30"
    "build 240"
    "resources 30"
    "tests 150"
    "kernels 150"
)
export out root py build
export -f allowance section_device section_build section_resources \
    section_tests section_kernels
for s in "${SECTIONS[@]}"; do
    [[ " $wanted " == *" ${s%% *} "* ]] || continue
    # shellcheck disable=SC2086  # "name limit"
    run_section $s
done

echo
echo "== summary ($SECONDS s; logs in $out)"
cat "$summary"
if [[ -f $out/kernels.log ]]; then
    echo
    sed -n '/^device:/,$p' "$out/kernels.log"
fi
exit "$status"
