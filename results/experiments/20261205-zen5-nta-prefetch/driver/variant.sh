#!/bin/bash
# Builds one throwaway variant of a fast row kernel for pair.c, from the
# kernel sources at git revision REV (default 8baaf8b, the tree before the
# _nta kernels), run from the repository root:
#   variant.sh avx512|avx2 NAME 'sed for cpu_fast_pipeline.h' ['sed for cpu_fast_blocks.h']
# writes $OUT/NAME.o (OUT default /tmp/ntax) with entries NAME, NAME_nt.
# The sources are copied into one directory and compiled from there: a
# quoted #include looks beside the source first, so compiling
# kernels/cpu_fast_avx512.c with -I pointing at patched copies would
# silently build the committed headers (this experiment's first pass did).
set -euo pipefail
width=$1 name=$2 rev=${REV:-8baaf8b} out=${OUT:-/tmp/ntax}
d=$out/$name
rm -rf "$d" && mkdir -p "$d"
for f in $(git ls-tree --name-only "$rev" kernels/ | grep -E '\.(h|def)$'); do
    git show "$rev:$f" >"$d/$(basename "$f")"
done
git show "$rev:kernels/cpu_fast_$width.c" >"$d/cpu_fast_$width.c"
[ -n "${3:-}" ] && sed -i "$3" "$d/cpu_fast_pipeline.h"
[ -n "${4:-}" ] && sed -i "$4" "$d/cpu_fast_blocks.h"
flags="-mavx2 -mfma -mf16c"
[ "$width" = avx512 ] && flags="-mavx512f -mavx512bw $flags"
gcc -O3 -DNDEBUG -std=gnu11 -I"$d" $flags \
    -Drowops_cpu_fast_$width="$name" -Drowops_cpu_fast_${width}_nt="${name}_nt" \
    -c "$d/cpu_fast_$width.c" -o "$out/$name.o"
