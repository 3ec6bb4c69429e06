#!/usr/bin/env bash
# Each shared library given links libstdc++ dynamically and holds no copy
# of it: a private libstdc++ inside a library that torch's process loads
# mixes with the process's own (the H200 image's toolchain did this, and
# formatting a double in an error message crashed). Checked: a NEEDED
# entry for libstdc++.so.6, and no definition of std::locale's members.
#   scripts/check-shared-libstdcxx.sh LIB.so [LIB.so ...]
set -uo pipefail
status=0
for lib in "$@"; do
    bad=0
    if ! readelf -d "$lib" | grep -q 'NEEDED.*\[libstdc++\.so\.6\]'; then
        echo "$lib: no NEEDED libstdc++.so.6 (libstdc++ linked statically?)"
        bad=1
    fi
    copies=$(nm --defined-only "$lib" | grep -c ' _ZNSt6locale')
    if ((copies > 0)); then
        echo "$lib: defines $copies std::locale symbols (a private libstdc++)"
        bad=1
    fi
    ((bad)) || echo "$lib: shared libstdc++, no private copy"
    ((status |= bad))
done
exit "$status"
