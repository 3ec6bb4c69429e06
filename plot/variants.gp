# Kernel variants against a baseline variant: per shape, the ratio of the
# variant's median to the baseline's (below 1 = faster than the baseline) with 95% whiskers, against the shape dimension that varies in
# each panel (log x); one panel per (dtype, layout).
#
# Data: per panel, one block per variant: columns x ratio lo hi B N
# Parameters (besides those in common.gp):
#   npanels, pfirst, pcount, ptitle<p>, xlabel<p>, keys, keylts  as in
#             latency.gp
#   baseline  the baseline variant's name
#   whiskers  how the whiskers were computed (shown with the key)
#   ytitle    the y axis' title (default: median / median of the baseline)
d = ARG0; i = strlen(d)
while (i > 0 && d[i:i] ne "/") { i = i - 1 }
load (i > 0 ? d[1:i] : "")."common.gp"

stats datafile using 2 nooutput
if (!exists("pfirst")) { pfirst = "0"; pcount = sprintf("%d", STATS_blocks) }
if (!exists("baseline")) baseline = "the baseline"
if (!exists("whiskers")) whiskers = "95% interval"
pvalue(name, p, default) = exists(sprintf("%s%d", name, p)) ? value(sprintf("%s%d", name, p)) : default

do for [fmt in formats] {
    eval begin(fmt, cols == 1 ? 1000 : 700 * cols, 480 * rows + 90)
    set border; set xtics; set ytics; set autoscale; set grid xtics ytics mxtics mytics lc rgb "#dddddd"
    set logscale x
    set format x "%g"
    set format y "%g"
    set ylabel (exists("ytitle") ? ytitle : sprintf("median / median of %s (< 1: faster)", baseline))
    set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#808080"
    # ratios sit near 1: hug the data, linear y
    set autoscale yfix
    set offsets graph 0.03, graph 0.03, graph 0.1, graph 0.1
    if (keyed) { unset key } else { set key outside right top spacing 1.1 samplen 2 }
    if (fmt eq "table") { eval exact }
    if (fmt ne "table") {
        if (npanels > 1) { set multiplot layout rows, cols title heading."\nwhiskers: ".whiskers font ",12" } \
        else { set title heading."\nwhiskers: ".whiskers }
    }
    do for [p = 1:npanels] {
        first = word(pfirst, p) + 0
        last = first + word(pcount, p) - 1
        if (npanels > 1) { set title pvalue("ptitle", p, "") }
        set xlabel pvalue("xlabel", p, "x")
        set xrange [*:*]
        stats datafile index first:last using 1 nooutput
        if (STATS_min == STATS_max) { set xrange [STATS_min / 3.0 : STATS_max * 3.0] }
        # the table of yerrorlines omits the whiskers; yerrorbars keeps them
        eval sprintf("plot for [s = first:last] datafile index s \
            using 1:2:3:4 with %s lt lt_of(s) title columnheader(1)", \
            (fmt eq "table") ? "yerrorbars" : "yerrorlines")
    }
    if (fmt ne "table" && keyed) { eval key_cell }
    if (fmt ne "table" && npanels > 1) { unset multiplot }
    eval end(fmt)
}
