# Median latency per path against the shape dimension that varies in each
# panel (log-log); one panel per (dtype, layout) of one distribution and op.
#
# Data: per panel, one block per series (path, or path[variant]):
#   columns x median_us B N
# Parameters (besides those in common.gp):
#   npanels   panels (default 1, all blocks in it)
#   pfirst    first block of each panel, space-separated (0-based)
#   pcount    blocks in each panel, space-separated
#   ptitle<p>, xlabel<p>  panel p's title and x-axis label (1-based p)
#   keys, keylts  the shared key of a multiplot (common.gp)
d = ARG0; i = strlen(d)
while (i > 0 && d[i:i] ne "/") { i = i - 1 }
load (i > 0 ? d[1:i] : "")."common.gp"

stats datafile using 2 nooutput
if (!exists("pfirst")) { pfirst = "0"; pcount = sprintf("%d", STATS_blocks) }
pvalue(name, p, default) = exists(sprintf("%s%d", name, p)) ? value(sprintf("%s%d", name, p)) : default

do for [fmt in formats] {
    eval begin(fmt, cols == 1 ? 1000 : 640 * cols, 480 * rows + 60)
    set border; set xtics; set ytics; set autoscale; set grid xtics ytics mxtics mytics lc rgb "#dddddd"
    set logscale xy
    set format x "%g"
    set format y "%g"
    set ylabel "median latency per call (µs)"
    if (keyed) { unset key } else { set key outside right top spacing 1.1 samplen 2 }
    if (fmt eq "table") { eval exact }
    if (fmt ne "table") {
        if (npanels > 1) { set multiplot layout rows, cols title heading font ",12" } \
        else { set title heading }
    }
    do for [p = 1:npanels] {
        first = word(pfirst, p) + 0
        last = first + word(pcount, p) - 1
        if (npanels > 1) { set title pvalue("ptitle", p, "") }
        set xlabel pvalue("xlabel", p, "x")
        # one shape in the panel: a decade around it, not an empty range
        set xrange [*:*]
        stats datafile index first:last using 1 nooutput
        if (STATS_min == STATS_max) { set xrange [STATS_min / 3.0 : STATS_max * 3.0] }
        plot for [s = first:last] datafile index s using 1:2 \
            with linespoints lt lt_of(s) title columnheader(1)
    }
    if (fmt ne "table" && keyed) { eval key_cell }
    if (fmt ne "table" && npanels > 1) { unset multiplot }
    eval end(fmt)
}
