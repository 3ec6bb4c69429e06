#!/bin/bash
# opcost built without libtorch (ROWOPS_WITH_TORCH=OFF, the sanitizer
# build): check, compare and targets work on committed results files of
# schema versions 1 to 3, shapes checks the shape sets, and run refuses
# with the reason. Usage: analysis_without_torch.sh OPCOST SOURCE_DIR TMP
set -u
opcost=$1 src=$2 tmp=$3
fail=0
expect() { # expect RC DESCRIPTION COMMAND...
    local want=$1 what=$2
    shift 2
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $what: exit $rc, want $want"
        echo "$out" | tail -5
        fail=1
    else
        echo "ok: $what"
    fi
}
v1=$src/results/20261130T074930Z-vm.csv
v2=$src/results/20261201T151311Z-vm.csv
v3a=$src/results/20261201T184118Z-vm.csv
v3b=$src/results/20261201T184813Z-vm.csv
expect 0 "check of versions 1, 2, 3" "$opcost" check "$v1" "$v2" "$v3a"
expect 0 "compare of two version-3 runs" "$opcost" compare --no-samples "$v3a" "$v3b"
expect 0 "compare of version 1 against version 3" "$opcost" compare --no-samples "$v1" "$v3a"
expect 0 "targets" "$opcost" targets "$v3a"
expect 0 "shapes check" "$opcost" shapes check "$src"/shapes/*.csv
expect 2 "run refused" "$opcost" run --quick --out "$tmp/never.csv"
if "$opcost" run --quick --out "$tmp/never.csv" 2>&1 | grep -q "built without libtorch"; then
    echo "ok: run names the reason"
else
    echo "FAIL: run does not say it was built without libtorch"
    fail=1
fi
[ ! -e "$tmp/never.csv" ] || { echo "FAIL: run wrote $tmp/never.csv"; fail=1; }
exit $fail
