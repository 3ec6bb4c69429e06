# cuobjdump --dump-resource-usage output -> one line per rowops kernel and
# architecture (registers, stack, local memory), then a summary line;
# exit 1 when a kernel has a stack frame or local (spill) memory.
/arch = sm_/ { arch = $3 }
/Function rowops_/ { name = $2; sub(":", "", name) }
/REG:/ && name != "" {
    reg = stack = local = 0
    for (i = 1; i <= NF; ++i) {
        split($i, kv, ":")
        if (kv[1] == "REG") reg = kv[2] + 0
        if (kv[1] == "STACK") stack = kv[2] + 0
        if (kv[1] == "LOCAL") local = kv[2] + 0
    }
    printf "%-36s %-6s REG %3d STACK %d LOCAL %d\n", name, arch, reg, stack, local
    if (reg > maxreg) maxreg = reg
    if (stack > 0 || local > 0) bad++
    n++
    name = ""
}
END {
    printf "cuobjdump: %d rowops kernel builds, at most %d registers, %d with stack or local memory\n", n, maxreg, bad
    exit (bad > 0 || n == 0)
}
