#!/usr/bin/env bash
# `opcost --help` lists every subcommand main() dispatches, and each
# answers --help with its usage and exit 0 (`opcost check --help` was
# refused; --help did not list compare, plot or check).
# Usage: cli_help.sh OPCOST SOURCE_DIR
set -u
opcost="$1"
main="$2/bench/cli/main.c"
fail=0
cmds=$(grep -oE '!strcmp\(cmd, "[a-z]+"\)' "$main" | grep -oE '"[a-z]+"' | tr -d '"' | sort -u)
[[ -n $cmds ]] || { echo "FAIL: no subcommands found in $main"; exit 1; }
help=$("$opcost" --help)
[[ $? -eq 0 ]] || { echo "FAIL: opcost --help: exit status"; fail=1; }
for c in $cmds; do
    if ! grep -qE "^  $c( |$)" <<<"$help"; then
        echo "FAIL: opcost --help does not list '$c'"
        fail=1
    fi
    [[ $c == help ]] && continue
    out=$("$opcost" "$c" --help 2>&1)
    rc=$?
    if [[ $rc -ne 0 ]] || ! grep -q "^usage: opcost $c" <<<"$out"; then
        echo "FAIL: opcost $c --help -> exit $rc: $(head -1 <<<"$out")"
        fail=1
    else
        echo "ok: opcost $c --help"
    fi
done
exit $fail
