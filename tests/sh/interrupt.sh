#!/usr/bin/env bash
# SIGTERM mid-run: opcost run writes the rows already measured (status ok),
# marks every other point skipped ("interrupted"), and exits non-zero; the
# file passes the schema check. Usage: interrupt.sh OPCOST OUT_DIR
set -u
opcost="$1"
out="$2/interrupted.csv"
rm -f "$out"
"$opcost" run --shapes llama-3.1-8b-conv --paths kernel,eager-cpp \
    --out "$out" >/dev/null 2>&1 &
pid=$!
sleep 6
kill -TERM "$pid"
wait "$pid"
rc=$?
[[ $rc -ne 0 ]] || { echo "FAIL: exit status 0 after SIGTERM"; exit 1; }
"$opcost" check "$out" || { echo "FAIL: no valid results file"; exit 1; }
ok=$(grep -c ',ok,' "$out")
skipped=$(grep -c 'run interrupted' "$out")
echo "after SIGTERM: exit $rc, $ok rows ok, $skipped rows marked interrupted"
[[ $ok -gt 0 && $skipped -gt 0 ]] || { echo "FAIL: expected both"; exit 1; }
