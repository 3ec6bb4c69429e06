#!/usr/bin/env bash
# The model paths end to end (no timing asserted): `opcost run` of the
# ten model-<norm>-<mode> paths on shapes/models/decoders.csv's tiny-llama
# (tests/data/tiny-llama-test.csv). Each has one row, at the fused op's
# contiguous point only, verified against the float64 stack as shipped
# (status ok, the error in the note), paired with the stack as shipped in
# its mode; the compiled and aoti ones carry the compiler's evidence (0 graph
# breaks, 4 rowops calls in the rowops stack's code and no copy or cast
# around them, a fusion boundary); every one a norm share; no op bytes, no
# fraction of peak; the console prints the model section. Then the token
# limit and the bad options.
# Usage: model_paths.sh OPCOST SOURCE_DIR BUILD_DIR
set -u
opcost="$1" src="$2" dir="$3/model_paths"
rm -rf "$dir" && mkdir -p "$dir"
fail=0
paths=model-shipped-eager,model-rowops-eager,model-torch-eager
paths+=,model-shipped-compiled,model-rowops-compiled,model-torch-compiled
paths+=,model-decomposed-compiled
paths+=,model-shipped-aoti,model-rowops-aoti,model-torch-aoti
shapes="$src/tests/data/tiny-llama-test.csv"
"$opcost" run --quick --threads 1 --no-pin --replicates 0 --shapes "$shapes" --paths "$paths" \
    --out "$dir/m.csv" >"$dir/out.txt" 2>&1 || {
    echo "FAIL: opcost run of the model paths exited $?"
    tail -20 "$dir/out.txt"
    exit 1
}
python3 - "$dir/m.csv" <<'PY' || fail=1
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = []
num = lambda s: float(s) if s not in ("", "nan") else math.nan
names = ["model-shipped-eager", "model-rowops-eager", "model-torch-eager",
         "model-shipped-compiled", "model-rowops-compiled",
         "model-torch-compiled", "model-decomposed-compiled",
         "model-shipped-aoti", "model-rowops-aoti", "model-torch-aoti"]
f32 = [r for r in rows if r["dtype"] == "float32"]
rows = [r for r in rows if r["dtype"] == "bfloat16"]
got = sorted(r["path"] for r in rows)
if got != sorted(names):
    bad.append(f"one row per model path at the fused contiguous point, got {got}")
if sorted(r["path"] for r in f32) != sorted(names) or any(
        r["status"] != "skipped" or "tiny-llama is published in bfloat16"
        not in r["note"] for r in f32):
    bad.append("float32 rows: skipped, the model published in bfloat16: "
               + str([(r["path"], r["status"], r["note"]) for r in f32]))
for r in rows:
    p = r["path"]
    if (r["op"], r["layout"], r["B"]) != ("fused_add_rms_norm", "contiguous", "5"):
        bad.append(f"{p}: a row at {r['op']} {r['layout']} B={r['B']}")
    if r["status"] != "ok":
        bad.append(f"{p}: status {r['status']}: {r['note']}")
        continue
    if r["note"].count("from float64 as shipped (tolerance") != 1:
        bad.append(f"{p}: the verification not once in the note: {r['note']}")
    share = num(r["norm_share"])
    if not 0 < share < 1:
        bad.append(f"{p}: norm_share {r['norm_share']}")
    if r["bytes"] or r["gbps"] or r["frac_of_peak"]:
        bad.append(f"{p}: op bytes/gbps/frac_of_peak on a model row")
    mode = p.rsplit("-", 1)[1]
    base = "model-shipped-eager" if mode == "eager" or p == "model-shipped-compiled" \
        else "model-shipped-aoti" if mode == "aoti" and p != "model-shipped-aoti" \
        else "model-shipped-compiled"
    if p == "model-shipped-eager":
        if r["paired_with"] or r["ratio"]:
            bad.append(f"{p}: the baseline has a ratio")
    elif r["paired_with"] != base or not num(r["ratio"]) > 0:
        bad.append(f"{p}: paired_with {r['paired_with']!r} ratio {r['ratio']!r}, want {base}")
    if mode in ("compiled", "aoti"):
        if r["graph_breaks"] != "0":
            bad.append(f"{p}: graph_breaks {r['graph_breaks']!r}")
        if r["recompiles"] != ("0" if mode == "compiled" else ""):
            bad.append(f"{p}: recompiles {r['recompiles']!r}")
        if not r["fusion_boundary"]:
            bad.append(f"{p}: no fusion_boundary")
        want = "4" if p in ("model-rowops-compiled", "model-rowops-aoti") else "0"
        if r["op_calls"] != want:
            bad.append(f"{p}: op_calls {r['op_calls']!r}, want {want}")
        if r["copies_around"] != "0":
            bad.append(f"{p}: copies_around {r['copies_around']!r}")
        # an AOTInductor package may come from the cache (no build time),
        # and says so
        cached = mode == "aoti" and "package loaded from the cache" in r["note"]
        if not (num(r["compile_ms"]) > 0 or cached and not r["compile_ms"]):
            bad.append(f"{p}: compile_ms {r['compile_ms']!r}: {r['note']}")
    elif r["graph_breaks"] or r["op_calls"] or r["fusion_boundary"]:
        bad.append(f"{p}: compiler evidence on an eager path")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
if ! grep -q "^The op in a model" "$dir/out.txt" ||
    ! grep -Eq "^  eager +[0-9.]+% +[0-9.]+% +x[0-9.]+ \+-[0-9.]+%" "$dir/out.txt" ||
    ! grep -Eq "^  aoti +[0-9.]+% +[0-9.]+% +x[0-9.]+ \+-[0-9.]+%" "$dir/out.txt" ||
    ! grep -Eq "^    B = 5 +compiled rowops / decomposed x[0-9.]+ \+-" "$dir/out.txt"; then
    echo "FAIL: the console's model section:"
    sed -n '/The op in a model/,$p' "$dir/out.txt"
    fail=1
fi
# the token limit: every model row skipped, saying why, in one console line
"$opcost" run --quick --threads 1 --no-pin --replicates 0 --shapes "$shapes" \
    --paths model-shipped-eager --model-max-tokens 4 --out "$dir/limit.csv" \
    >"$dir/limit.txt" 2>&1
grep -q "skipped   2 model rows, as tiny-llama-test model-shipped-eager bfloat16 B=5 contiguous: a model path at 5 tokens: beyond --model-max-tokens 4 (as given)" \
    "$dir/limit.txt" || {
    echo "FAIL: the token limit's line:"
    tail -5 "$dir/limit.txt"
    fail=1
}
# --model-dtypes all: the float32 point timed too
"$opcost" run --quick --threads 1 --no-pin --replicates 0 --shapes "$shapes" --dtype float32 \
    --paths model-torch-eager --model-dtypes all --out "$dir/all.csv" \
    >"$dir/all.txt" 2>&1
python3 - "$dir/all.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
ok = [(r["dtype"], r["status"]) for r in rows]
if ok != [("float32", "ok")]:
    print("FAIL: --model-dtypes all, float32:", ok, [r["note"] for r in rows])
    sys.exit(1)
PY
# a shape set without a model: skipped, naming the models there are
"$opcost" run --quick --threads 1 --no-pin --replicates 0 --shapes edges --paths model-rowops-eager \
    --out "$dir/edges.csv" >"$dir/edges.txt" 2>&1
grep -q "has no decoder config in shapes/models/decoders.csv (llama-3.1-8b" \
    "$dir/edges.txt" || {
    echo "FAIL: a set without a model:"
    tail -5 "$dir/edges.txt"
    fail=1
}
for bad in "--model-max-tokens -1|must be an integer in 0..1048576" \
    "--model-budget-s 0|must be a number of seconds in 0.1..3600" \
    "--model-dtypes some|must be published or all"; do
    opt="${bad%%|*}" want="${bad#*|}"
    out=$("$opcost" run $opt 2>&1)
    [[ $? == 2 && "$out" == *"$want"* ]] || {
        echo "FAIL: $opt: $out"
        fail=1
    }
done
# opcost ab leaves them out: named, refused
build=$(dirname "$opcost")
out=$("$opcost" ab --base "$build" --new "$build" --paths model-rowops-eager 2>&1)
[[ "$out" == *"the model paths are not compared across builds"* ]] || {
    echo "FAIL: opcost ab --paths model-rowops-eager: $out"
    fail=1
}
exit $fail
