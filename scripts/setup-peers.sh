#!/usr/bin/env bash
# The peers' wheels (python/peers.lock) for the peer-* paths, idempotent:
# installed without their dependencies (they pin other torch versions) into
# ~/.cache/opcost/peers-<hash of the lock file>/, outside the clone, for
# bench/python/opcost_peers.py to load by path. Never fatal: where they
# cannot be installed (offline, another Python) the peer rows are skipped
# with the reason this script leaves in <dir>/.failed. Usage:
# setup-peers.sh PYTHON. Everything it says goes to stderr.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="$repo/python/peers.lock"
cache="${OPCOST_CACHE:-$HOME/.cache/opcost}"
dir="$cache/peers-$(sha256sum "$lock" | cut -c1-12)"
py="$1"
[[ -f "$dir/.complete" ]] && exit 0
echo "[setup] installing the peers' kernels into $dir (python/peers.lock)" >&2
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
if "$py" -m pip install --quiet --no-deps --require-hashes --only-binary=:all: \
    --retries 1 --timeout 20 --target "$dir.tmp/site" -r "$lock" >"$dir.tmp/pip.log" 2>&1; then
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
    touch "$dir/.complete"
else
    echo "[setup] the peers did not install (peer-* rows will be skipped):" >&2
    tail -3 "$dir.tmp/pip.log" >&2
    mkdir -p "$dir"
    { echo "pip install -r python/peers.lock failed:"; tail -1 "$dir.tmp/pip.log"; } >"$dir/.failed"
    rm -rf "$dir.tmp"
fi
exit 0
