#!/usr/bin/env bash
# Set-up for `make bench` and `make test` on a fresh machine, idempotent:
#   1. Debian packages the build needs (installed only if missing);
#   2. a virtual environment outside the clone, under
#      ~/.cache/opcost/venv-<hash of python/requirements.lock>, holding the
#      exact versions the lock file pins (torch is a multi-GB CUDA wheel,
#      hence the cache; a changed lock file gets a new environment);
#   3. the peers' kernels (python/peers.lock, scripts/setup-peers.sh);
#   4. a .pth file so that the environment's interpreter imports rowops from
#      this clone.
# Prints the interpreter's absolute path on stdout; progress goes to stderr.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="$repo/python/requirements.lock"
cache="${OPCOST_CACHE:-$HOME/.cache/opcost}"
hash="$(sha256sum "$lock" | cut -c1-12)"
venv="$cache/venv-$hash"
log() { echo "[setup] $*" >&2; }

# Debian packages: build tools, Python headers for the embedded interpreter,
# gnuplot for the plots.
# libnuma1: vLLM's CPU kernels (the peer-vllm path) link it.
debs=(cmake make gcc g++ pkg-config gnuplot-nox clang-14 libclang-rt-14-dev
    libnuma1)
# The embedded interpreter needs Python.h and libpython of the interpreter
# the environment is made from (Debian's python3.11 needs python3-dev).
python="${OPCOST_PYTHON:-python3}"
if ! "$python" -c 'import os, sysconfig, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
    debs+=(python3-dev)
fi
missing=()
for p in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
if ((${#missing[@]})); then
    log "installing Debian packages: ${missing[*]}"
    if [[ $(id -u) -eq 0 ]]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        "${missing[@]}" >&2
fi

if [[ ! -f "$venv/.complete" ]]; then
    log "creating $venv (torch and friends from $lock; several GB, cached)"
    mkdir -p "$cache"
    rm -rf "$venv"
    "$python" -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet -r "$lock" >&2
    touch "$venv/.complete"
fi

# the peers' kernels for the peer-* paths (never fatal: their rows are then
# skipped with the reason)
"$repo/scripts/setup-peers.sh" "$venv/bin/python"

site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$repo/python" >"$site/opcost-rowops.pth"
echo "$venv/bin/python"
