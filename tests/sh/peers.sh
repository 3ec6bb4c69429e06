#!/usr/bin/env bash
# The peer paths' machinery, functional and in place (beside rowops' own
# in-place form), with a stand-in peer built here (a zentorch
# package whose zentorch_add_rms_norm_ is a few lines of torch, found
# through OPCOST_PEERS): a right one verified and timed, a wrong one
# `wrong`, a missing one and one whose set-up failed `skipped` with the
# reason, every row there; each verified row's measured error (out, h) in
# units of 2^-p; where set-up installed the real peers
# (python/peers.lock), peer-vllm and peer-zentorch verified on float32 rows.
# Usage: peers.sh OPCOST BUILD_DIR
set -u
opcost="$1" dir="$2/peers"
rm -rf "$dir" && mkdir -p "$dir"
printf '%s\n' "op,B,N,dtype,layout,freq" \
    "fused_add_rms_norm,8,256,float32,contiguous,1" \
    "fused_add_rms_norm,8,256,float32,transposed,1" \
    "rms_norm_rows,8,256,float32,contiguous,1" >"$dir/s.csv"
standin() { # standin DIR SCALE [LEAKS]: a zentorch package, outputs times
    # SCALE, leaking LEAKS 32-byte blocks a call (zentorch 2.13 under torch
    # 2.15 leaks two, in its stable-ABI boxer)
    mkdir -p "$1/site/zentorch"
    cat >"$1/site/zentorch/__init__.py" <<PY
import ctypes, os, torch
__version__ = "stand-in x$2"
_malloc = ctypes.CDLL(None).malloc
_malloc.restype, _malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
_lib = torch.library.Library("zentorch", "DEF")
_lib.define("zentorch_add_rms_norm_(Tensor(a!) input, Tensor weight, "
            "Tensor(b!) residual, float epsilon) -> ()")
_seen = set()
def _impl(x, w, r, eps):
    for _ in range(${3:-0}):
        _malloc(32)
    # the blocks of memory it was handed (the slabs keep them to two)
    for t in (x, r):
        p = t.untyped_storage().data_ptr()
        if p not in _seen and os.environ.get("STANDIN_STORAGES"):
            _seen.add(p)
            open(os.environ["STANDIN_STORAGES"], "a").write(f"{p}\n")
    r.add_(x)
    h = r.double()
    rstd = torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    x.copy_(h * rstd * w.double() * $2)
_lib.impl("zentorch_add_rms_norm_", _impl, "CPU")
PY
}
standin "$dir/right" 1
standin "$dir/wrong" 1.1
standin "$dir/leaky" 1 2
mkdir -p "$dir/failed" && echo "pip install -r python/peers.lock failed: offline" >"$dir/failed/.failed"
fail=0
run() { # run NAME PEERS_DIR PATHS
    OPCOST_PEERS="$2" "$opcost" run --quick --threads 1 --no-pin --llc-mib 32 \
        --replicates 0 --shapes "$dir/s.csv" --paths "kernel,$3" \
        --out "$dir/$1.csv" >"$dir/$1.log" 2>&1 ||
        { echo "FAIL: $1: opcost run exited $?"; tail -5 "$dir/$1.log"; fail=1; }
}
STANDIN_STORAGES="$dir/storages" run right "$dir/right" \
    peer-zentorch,peer-zentorch-inplace,eager-python,eager-python-inplace
run wrong "$dir/wrong" peer-zentorch,peer-zentorch-inplace
run missing "$dir/none" peer-zentorch,peer-vllm,peer-flashinfer,peer-quack
run failed "$dir/failed" peer-zentorch
run real "" peer-vllm,peer-zentorch,peer-vllm-inplace,peer-zentorch-inplace
# short of memory the peers are skipped, the run goes on
OPCOST_PEER_MEMORY_RESERVE=1 run memory "$dir/right" peer-zentorch,eager-python
# a leaking peer beside a path that allocates 16 MiB blocks: each leak
# splits a freed block, so glibc's heap grew by 0.5 GB a point here and
# the peer was skipped for memory from the fourth point on (the process
# held 3.4 GB at the fifth; 1.4 at most since a point's end hands the
# free pages back). The peer may hold 2.2 GiB.
printf '%s\n' "op,B,N,dtype,layout,freq" >"$dir/frag.csv"
for b in 1024 1025 1026 1027 1028; do
    echo "fused_add_rms_norm,$b,4096,float32,contiguous,1" >>"$dir/frag.csv"
done
total=$(awk '/^MemTotal:/ {print $2 * 1024}' /proc/meminfo)
OPCOST_PEERS="$dir/leaky" OPCOST_PEER_MEMORY_HELD=$(awk -v t="$total" \
    'BEGIN {printf "%.4f", 2.2 * 2^30 / t}') "$opcost" run --threads 1 \
    --no-pin --llc-mib 32 --replicates 0 --shapes "$dir/frag.csv" \
    --paths reference-python,peer-zentorch --rep-budget-ms 100 \
    --noise 0.0001 --out "$dir/frag-run.csv" >"$dir/frag.log" 2>&1 ||
    { echo "FAIL: frag: opcost run exited $?"; tail -5 "$dir/frag.log"; fail=1; }
python3 - "$dir" <<'PY' || fail=1
import csv, sys
d = sys.argv[1]
def rows(name):
    return {(r["op"], r["layout"], r["path"]): r
            for r in csv.DictReader(open(f"{d}/{name}.csv", newline=""))}
bad = []
def expect(name, key, status, note=""):
    r = rows(name).get(key)
    if r is None:
        bad.append(f"{name}: no row for {key}")
    elif r["status"] != status or note not in r["note"]:
        bad.append(f"{name} {key}: {r['status']} '{r['note']}', "
                   f"want {status} with '{note}'")
    return r
F, R = "fused_add_rms_norm", "rms_norm_rows"
for layout in ("contiguous", "transposed"):
    r = expect("right", (F, layout, "peer-zentorch"), "ok",
               "verified within 4x the contract's tolerance")
    if r and "stand-in x1" not in r["dispatch_path"]:
        bad.append(f"right: dispatch_path names the peer: {r['dispatch_path']}")
    expect("wrong", (F, layout, "peer-zentorch"), "wrong", "out[")
expect("right", (R, "contiguous", "peer-zentorch"), "skipped",
       "zentorch has no row normalization op")
# the in-place forms: on each set's own copies, verified like the rest, a
# peer's on a transposed input through contiguous copies copied back;
# neither for rms_norm_rows
for layout in ("contiguous", "transposed"):
    expect("right", (F, layout, "peer-zentorch-inplace"), "ok")
    expect("wrong", (F, layout, "peer-zentorch-inplace"), "wrong", "out[")
# each peer's ratio is against rowops' op of the same form
for layout in ("contiguous", "transposed"):
    for p, want in (("peer-zentorch", "eager-python"),
                    ("peer-zentorch-inplace", "eager-python-inplace")):
        r = rows("right").get((F, layout, p))
        if r and (r["paired_with"] != want or not r["ratio"]):
            bad.append(f"{p} {layout}: paired with '{r['paired_with']}' "
                       f"(ratio '{r['ratio']}'), want {want}")
# the in-place rows' ceiling is the in-place mix, and their frac_of_peak
# is against the in-place probe (ordinary stores to the lines just read);
# the functional rows' the fused mix
for layout in ("contiguous", "transposed"):
    for p in ("peer-zentorch-inplace", "eager-python-inplace",
              "peer-zentorch", "kernel"):
        r = rows("right").get((F, layout, p))
        want = "fused_in_place plain" if p.endswith("inplace") else "fused "
        if r and want not in r["ceiling_kind"]:
            bad.append(f"{p} {layout}: ceiling_kind {r['ceiling_kind']!r}")
# rowops in place on a transposed input of 8 rows: the strided kernel
# (its in-place column-major kernel takes 16 rows and more: test_kernels)
r = rows("right").get((F, "transposed", "eager-python-inplace"))
if r and r["dispatch_path"] != "cpu_strided":
    bad.append(f"rowops in place, transposed: {r['dispatch_path']}")
for p in ("peer-zentorch-inplace", "eager-python-inplace"):
    if (R, "contiguous", p) in rows("right"):
        bad.append(f"{p}: a row at rms_norm_rows, which has no in-place form")
for layout in ("contiguous", "transposed"):
    r = expect("right", (F, layout, "eager-python-inplace"), "ok")
    if r and r["residual_err_units"] != "0":
        bad.append(f"rowops in place: h exact ({r['residual_err_units']})")
# the errors measured at verification (units of 2^-24 relative here): the
# stand-in rounds once from double, rowops' h is exact, its y a few units
right = rows("right")
def units(key, col):
    v = right[key][col] if key in right else ""
    return float(v) if v != "" else None
k, z = (F, "contiguous", "kernel"), (F, "contiguous", "peer-zentorch")
if units(k, "residual_err_units") != 0:
    bad.append(f"kernel's h is exact: {units(k, 'residual_err_units')}")
if not (0 < (units(k, "out_err_units") or -1) < 8):
    bad.append(f"kernel's y within a few units: {units(k, 'out_err_units')}")
if not (0 <= (units(z, "out_err_units") or -1) <= 1) or \
        units(z, "residual_err_units") != 0:
    bad.append(f"the stand-in rounds once: {units(z, 'out_err_units')}, "
               f"{units(z, 'residual_err_units')}")
if units((R, "contiguous", "kernel"), "residual_err_units") is not None:
    bad.append("rms_norm_rows has no h: its residual error is empty")
if units((R, "contiguous", "peer-zentorch"), "out_err_units") is not None:
    bad.append("a skipped row has no error")
for p in ("peer-zentorch", "peer-vllm"):
    expect("missing", (F, "contiguous", p), "skipped", "are not installed in")
# the GPU peers, named in a CPU run: a row each, skipped with the reason
for p in ("peer-flashinfer", "peer-quack"):
    expect("missing", (F, "contiguous", p), "skipped", "runs on a GPU only")
expect("failed", (F, "contiguous", "peer-zentorch"), "skipped", "offline")
expect("memory", (F, "contiguous", "peer-zentorch"), "skipped",
       "the peer is skipped so the run finishes")
expect("memory", (F, "contiguous", "eager-python"), "ok")
frag = [r for r in csv.DictReader(open(f"{d}/frag-run.csv", newline=""))
        if r["path"] == "peer-zentorch"]
if len(frag) != 5:
    bad.append(f"frag: {len(frag)} rows of the leaking peer, want 5")
for r in frag:
    if r["status"] != "ok":
        bad.append(f"frag: the leaking peer at B = {r['B']}: {r['status']} "
                   f"'{r['note']}'")
real = rows("real")
for p in ("peer-vllm", "peer-zentorch", "peer-vllm-inplace",
          "peer-zentorch-inplace"):
    r = real.get((F, "contiguous", p))
    if r is None:
        bad.append(f"real: no row for {p}")
    elif r["status"] == "skipped" and "are not installed" in r["note"]:
        print(f"SKIP the real {p}: {r['note']}")
    elif r["status"] != "ok":
        bad.append(f"real {p}: {r['status']} '{r['note']}'")
    else:
        print(f"real {p}: ok, {r['median_us']} us ({r['dispatch_path']})")
# vLLM's row normalization on contiguous rows needs no copy: its call has
# no conversion part (its output buffer is not filled first)
r = real.get((R, "contiguous", "peer-vllm"))
if r and r["status"] == "ok" and r["conversion_us"] not in ("", "0"):
    bad.append(f"real peer-vllm rms_norm_rows: conversion_us "
               f"{r['conversion_us']} (a copy into its output?)")
# the console's peer section: each peer against rowops' op of its form,
# with its paired figure; without a rowops row to pair with, it says so
import re
log = open(f"{d}/right.log").read()
sec = log[log.find("Against the peers"):]
for p, base in (("peer-zentorch", "eager-python"),
                ("peer-zentorch-inplace", "eager-python-inplace")):
    if not re.search(rf"\n  {p} +{base} +[0-9.]+ +[0-9.]+ +x[0-9.]+ \+-", sec):
        bad.append(f"the console's peer section has no paired line for {p}")
if "no rowops row of its form to pair with" not in open(f"{d}/real.log").read() \
        and any(r["status"] == "ok" for k, r in real.items() if k[2].startswith("peer-")):
    bad.append("real: an unpaired peer's line does not say why")
# the run says once per peer what it found, or why not
if "opcost run: peer-zentorch: not here: the peers are not installed" \
        not in open(f"{d}/missing.log").read():
    bad.append("missing: the log does not say the peer is not here")
if "opcost run: peer-zentorch: found zentorch stand-in x1" \
        not in open(f"{d}/right.log").read():
    bad.append("right: the log does not say which zentorch it found")
# the peer is handed two blocks of memory in all: the in-place forms share
# one copy of the sets (rowops' and the peer's alike) and every call's
# contiguous copies come from one more, whatever the path and layout
# (three before, one per path and kind: a cold run grew past 16 GB)
held = set(open(f"{d}/storages").read().split())
if len(held) != 2:
    bad.append(f"the stand-in was handed {len(held)} blocks of memory, want 2")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# the figure: each peer's paired ratio against B
"$opcost" plot "$dir/right.csv" --kind peers --out "$dir/plots" --table \
    >"$dir/plot.log" 2>&1 && ls "$dir/plots" | grep -q '^peers-s' ||
    { echo "FAIL: opcost plot --kind peers drew nothing"; cat "$dir/plot.log"; fail=1; }
exit $fail
