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
#   bench      build/opcost run --device cuda on fused bfloat16 N = 4096 at
#              B = 1, 64, 8192 (CUPTI attribution, the copy ceiling, NVML),
#              its table: per path median, device, kernel, other kernels,
#              launch, dispatch, conversion, idle (us), frac of the ceiling;
#              needs the bench in the build (Python's embed headers), else
#              the build falls back to the library alone and bench fails
#   model      the model paths on CUDA (a 2-layer Llama-3.1-8B stack at
#              B = 64 and 1024, bfloat16: shipped, rowops, torch eager;
#              shipped and rowops compiled), their table: per path median,
#              ratio to the stack as shipped, rounds, graph breaks, rowops
#              calls, copies around them; in what the budget leaves
#   aoti       the AOTInductor model paths on CUDA (model-shipped-aoti,
#              model-rowops-aoti) on tiny-llama (tests/data/tiny-llama-
#              test.csv: on the CPU its packages build in seconds; on the
#              H200 of 2026-12-04, with the compiled stack before them,
#              not in 90 s), their table as model's; last
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
    # a note left by an earlier run into the same OUTDIR would read as this
    # run's (it did once: aoti's "no opcost" after a good build)
    rm -f "$out/$name.note"
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
    # the library, the resource test and the bench; without Python's embed
    # headers the bench cannot build: the library alone then
    local prefix gen=() extra=(-DROWOPS_WITH_PYFAST=OFF)
    local targets=(rowops_torch test_cuda_resources opcost)
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
    configure || { rm -rf "$build" && configure; } || {
        echo "gpu-check: configuring with the bench failed; without it"
        extra=(-DOPCOST_WITH_BENCH=OFF -DROWOPS_WITH_PYFAST=OFF)
        targets=(rowops_torch test_cuda_resources)
        rm -rf "$build" && configure
    } || return 1
    grep -q 'rowops: CUDA kernels ON' "$out/build.log" || {
        echo "gpu-check: CMake found no CUDA compiler (set CUDACXX)"
        return 1
    }
    cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" || return 1
    # a private libstdc++ in a library torch's process loads crashes there
    # (this machine's image did it once): the libraries built, checked
    local libs=("$build/librowops_torch.so")
    [[ -f $build/libopcost_bridge.so ]] && libs+=("$build/libopcost_bridge.so")
    "$root/scripts/check-shared-libstdcxx.sh" "${libs[@]}" || return 1
    echo "built $build/librowops_torch.so (shared libstdc++)" \
        > "$out/build.note"
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
        -q -rs -p no:cacheprovider --durations=8 \
        --junitxml="$out/pytest_cuda.xml" || rc=1
    "$py" -m pytest tests/python/test_forward.py \
        tests/python/test_autograd.py tests/python/test_autocast.py \
        tests/python/test_errors.py tests/python/test_opcheck.py -k cuda \
        -q -rs -p no:cacheprovider --durations=8 \
        --junitxml="$out/pytest_other.xml" || rc=1
    "$py" - "$out" << 'EOF' > "$out/tests.note"
import sys, xml.etree.ElementTree as ET
n = f = e = s = 0
missing = []
for name in ("pytest_cuda.xml", "pytest_other.xml"):
    try:
        root = ET.parse(f"{sys.argv[1]}/{name}").getroot()
    except (OSError, ET.ParseError):
        # no report: that pytest crashed or was killed (its log says)
        missing.append(name)
        continue
    for suite in root.iter("testsuite"):
        n += int(suite.get("tests", 0)); f += int(suite.get("failures", 0))
        e += int(suite.get("errors", 0)); s += int(suite.get("skipped", 0))
print(f"{n} tests: {n - f - e - s} passed, {f} failed, {e} errors, "
      f"{s} skipped" + (f"; no report from {', '.join(missing)} (crashed "
                        f"or killed)" if missing else ""))
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

section_bench() {
    [[ -x $build/opcost ]] || {
        echo "no $build/opcost (the build fell back to the library alone)" |
            tee "$out/bench.note"
        return 1
    }
    printf 'op,B,N,dtype,layout,freq\n%s\n%s\n%s\n' \
        fused_add_rms_norm,1,4096,bfloat16,contiguous,1 \
        fused_add_rms_norm,64,4096,bfloat16,contiguous,1 \
        fused_add_rms_norm,8192,4096,bfloat16,contiguous,1 \
        > "$out/bench-shapes.csv"
    cd "$root" || return 1
    local paths=kernel,kernel-e2e,eager-cpp,reference,native,eager-python
    paths+=,compiled-python,cuda-graph,eager-python-inplace
    # the GPU peers: timed where their packages are installed on the
    # machine, else a skipped row with why (none is pinned yet)
    paths+=,peer-vllm,peer-flashinfer,peer-liger,peer-quack,peer-apex
    "$build/opcost" run --device cuda --shapes "$out/bench-shapes.csv" \
        --paths "$paths" --variants auto,cuda_fast,triton \
        --rep-budget-ms 20 --out "$out/bench.csv" || return 1
    "$py" - "$out/bench.csv" << 'EOF' | tee "$out/bench_table.txt"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = ("median_us", "device_us", "kernel_us", "other_kernel_us",
        "launch_us", "dispatch_us", "conversion_us", "idle_us")
print("bench:     B path[variant]          " +
      " ".join(f"{c[:-3]:>9}" for c in cols) +
      "  frac (+-) vs-base (+-) rounds stop source MHz reasons")
for r in rows:
    name = r["path"] + ("" if r["variant"] == "auto" else f"[{r['variant']}]")
    if r["status"] != "ok":
        print(f"bench: {r['B']:>5} {name:<24} {r['status']}: {r['note'][:70]}")
        continue
    v = " ".join(f"{float(r[c]):9.2f}" if r[c] else f"{'-':>9}" for c in cols)
    # the rounds on a GPU: the paired probe (device copies) and the ratio
    # to the baseline, each with its interval
    pm = lambda x, c: (f"{float(r[x]):.3f} {float(r[c]):.3f}" if r[x] and r[c]
                       else "- -")
    print(f"bench: {r['B']:>5} {name:<24} {v} "
          f"{pm('frac_of_peak', 'frac_of_peak_ci95_rel')} "
          f"{pm('ratio', 'ratio_ci95_rel')} {r['rounds'] or '-'} "
          f"{r['stopped_by']} {r['attribution_source']} {r['sm_clock_mhz']} "
          f"{r['throttle_reasons']}")
if rows:
    print(f"bench: ceiling {rows[0]['ceiling_gbps']} GB/s (device-to-device "
          f"copy, bytes read + written); paired probe "
          f"{rows[0]['probe_gbps']} GB/s at the first point")
EOF
    echo "bench.csv, bench_table.txt" > "$out/bench.note"
}

# A model run's table (CSV, the line's tag): per bfloat16 row its median,
# ratio to its pair, rounds, graph breaks, rowops calls and copies.
model_table() {
    "$py" - "$1" "$2" << 'EOF'
import csv, sys
tag = sys.argv[2]
failed = 0
for r in csv.DictReader(open(sys.argv[1])):
    if r["dtype"] != "bfloat16":
        continue
    if r["status"] != "ok":
        # a row that went wrong fails the section (an AOTInductor package
        # that did not compile once read "aoti ok"); its note's start and
        # end (a compiler's error is at the end)
        failed += r["status"] in ("wrong", "error")
        n = r["note"].replace("\n", " ")
        print(f"{tag}: {r['B']:>5} {r['path']:<24} {r['status']}: "
              f"{n[:80]} ... {n[-400:]}")
        continue
    ratio = (f"{float(r['ratio']):.3f} +-{100 * float(r['ratio_ci95_rel']):.1f}%"
             if r["ratio"] else "baseline")
    print(f"{tag}: {r['B']:>5} {r['path']:<24} {float(r['median_us']):10.1f} us "
          f"{ratio:>18} rounds {r['rounds'] or '-'} breaks {r['graph_breaks'] or '-'} "
          f"op_calls {r['op_calls'] or '-'} copies {r['copies_around'] or '-'} "
          f"| {r['note'][-60:]}")
sys.exit(1 if failed else 0)
EOF
}

# model_report NAME: NAME.csv's table into NAME_table.txt and NAME's note;
# fails when a row went wrong or failed
model_report() {
    model_table "$out/$1.csv" "$1" | tee "$out/$1_table.txt"
    if ((PIPESTATUS[0] == 0)); then
        echo "$1.csv, $1_table.txt" > "$out/$1.note"
    else
        echo "a row wrong or in error ($1_table.txt)" > "$out/$1.note"
        return 1
    fi
}

section_model() {
    [[ -x $build/opcost ]] || {
        echo "no $build/opcost" | tee "$out/model.note"
        return 1
    }
    # the model paths on CUDA: a 2-layer Llama-3.1-8B stack (the file's
    # name gives the model: shapes/models/decoders.csv); B > 1 only, so that each
    # compiled stack compiles one graph (Triton's compile is the cost)
    printf 'op,B,N,dtype,layout,freq\n%s\n%s\n' \
        fused_add_rms_norm,64,4096,bfloat16,contiguous,1 \
        fused_add_rms_norm,1024,4096,bfloat16,contiguous,1 \
        > "$out/llama-3.1-8b-gpucheck.csv"
    cd "$root" || return 1
    local paths=model-shipped-eager,model-rowops-eager,model-torch-eager
    paths+=,model-shipped-compiled,model-rowops-compiled,model-vllm-eager
    "$build/opcost" run --device cuda --shapes "$out/llama-3.1-8b-gpucheck.csv" \
        --paths "$paths" --model-budget-s 3 --replicates 0 \
        --out "$out/model.csv" || return 1
    model_report model
}

section_aoti() {
    [[ -x $build/opcost ]] || {
        echo "no $build/opcost" | tee "$out/aoti.note"
        return 1
    }
    cd "$root" || return 1
    "$build/opcost" run --device cuda --shapes tests/data/tiny-llama-test.csv \
        --paths model-shipped-aoti,model-rowops-aoti \
        --model-budget-s 2 --replicates 0 --out "$out/aoti.csv" || return 1
    model_report aoti
}

# ---- the run ----
wanted=${GPU_CHECK_SECTIONS:-device build resources tests kernels bench model aoti}
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

# name and limit in seconds (the budget holds the sum to 450)
SECTIONS=(
    "device 20"
    "build 220"
    "resources 20"
    "tests 170"
    "kernels 100"
    "bench 110"
    "model 110"
    "aoti 240"
)
export out root py build
export -f allowance model_table model_report section_device section_build section_resources \
    section_tests section_kernels section_bench section_model section_aoti
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
if [[ -f $out/bench_table.txt ]]; then
    echo
    cat "$out/bench_table.txt"
fi
exit "$status"
