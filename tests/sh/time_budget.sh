#!/usr/bin/env bash
# opcost run --time-budget 60 on a small shape set (tests/data/tiny-llama-
# budget.csv: tiny-llama's tokens, so the model paths and their pilot run,
# and one large call of little weight). Checked: the run's own account
# of its time keeps to the budget within a margin it measures itself (its
# longest point, which the plan cannot split, and its start, which the
# end's probe repeats, plus a second of writing): a benchmark's bound, not
# a timed assertion of this host's speed; every point of the set has its
# rows, every path the same at every point (the model paths at the fused
# op's contiguous points), and every row the plan cut is skipped with a
# note that starts with "budget:"; the console counts the cuts.
# Usage: time_budget.sh OPCOST SOURCE_DIR BUILD_DIR
set -u
opcost="$1" src="$2" dir="$3/time_budget"
rm -rf "$dir" && mkdir -p "$dir"
shapes="$src/tests/data/tiny-llama-budget.csv"
# one thread, and of each kind of path one or two (compiles, the model
# stacks' pilot): the budget's test, at a test's cost
paths=kernel,kernel-e2e,eager-cpp,reference,eager-python,compiled-python
paths+=,model-shipped-eager,model-rowops-eager,model-shipped-compiled
"$opcost" run --time-budget 60 --threads 1 --no-pin --paths "$paths" \
    --shapes "$shapes" --out "$dir/b.csv" >"$dir/out.txt" 2>&1 || {
    echo "FAIL: opcost run --time-budget 60 exited $?"
    tail -20 "$dir/out.txt"
    exit 1
}
python3 - "$dir/b.csv" "$dir/out.txt" "$shapes" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
out = open(sys.argv[2]).read()
shapes = [l.strip().split(",") for l in open(sys.argv[3])
          if l.strip() and not l.startswith("#") and not l.startswith("op,")]
bad = []
m = re.search(r"^time: (\d+) s of the 60 s budget \(--time-budget\): start ([\d.]+) s;.*"
              r"the longest point ([\d.]+) s$", out, re.M)
if not m:
    bad.append("no account of the run's time against its budget")
else:
    took, start, longest = (float(x) for x in m.groups())
    margin = longest + start + 1
    print(f"the run took {took:.0f} s of its 60 s budget; its margin "
          f"{margin:.1f} s (the longest point {longest:.1f} s, start "
          f"{start:.1f} s, 1 s of writing)")
    if took > 60 + margin:
        bad.append(f"took {took:.0f} s, beyond 60 s + {margin:.1f} s")
if not re.search(r"^cut for the budget: ", out, re.M):
    bad.append("no line saying what the budget cut")
points = {}
for r in rows:
    key = (r["op"], r["B"], r["N"], r["dtype"], r["layout"])
    points.setdefault(key, set()).add(r["path"])
    if r["status"] == "skipped" and r["note"].startswith("budget:"):
        continue
    if r["status"] != "ok" and not r["note"]:
        bad.append(f"{key} {r['path']}: {r['status']} without a note")
for op, B, N, dtype, layout, _ in shapes:
    if (op, B, N, dtype, layout) not in points:
        bad.append(f"no rows at {op} B={B} N={N} {dtype} {layout}")
paths = set().union(*points.values()) if points else set()
models = {p for p in paths if p.startswith("model-")}
for key, got in points.items():
    want = paths if key[0] == "fused_add_rms_norm" and key[4] == "contiguous" \
        else paths - models
    if got != want:
        bad.append(f"{key}: paths {sorted(want - got)} missing")
cut = sum(r["note"].startswith("budget:") for r in rows)
print(f"{len(rows)} rows at {len(points)} points, {len(paths)} paths; "
      f"{cut} cut by the budget")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
