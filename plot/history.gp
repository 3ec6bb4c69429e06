# Nightly history: per run, each path's expected cost per call over a
# distribution (sum freq * median_us / sum freq, only where every row of
# the group was ok), across runs in start-time order (log y); regressions
# that gates.csv flags as red points labelled with path, ratio and Holm p.
# One panel per (op, dtype, layout) of one distribution.
#
# Data: per panel, one block per series (path or path[variant]):
#   columns run expected_us run_id   (run: 0-based index in time order)
# then, when the panel has regressions, one block:
#   columns run expected_us label
# Parameters (besides those in common.gp):
#   npanels, pfirst, pcount, ptitle<p>, keys, keylts  as in latency.gp
#             (pcount counts the series blocks only)
#   preg      per panel, the regression block's index or -1
#   ntics, runtic<i>, runticx<i>  the x tics: label (a run's start time,
#             else its id) and x of each; labels are data, never code
#   nruns     how many runs (the x range)
d = ARG0; i = strlen(d)
while (i > 0 && d[i:i] ne "/") { i = i - 1 }
load (i > 0 ? d[1:i] : "")."common.gp"

stats datafile using 1 nooutput
if (!exists("pfirst")) { pfirst = "0"; pcount = sprintf("%d", STATS_blocks); preg = "-1" }
if (!exists("nruns")) nruns = int(STATS_max) + 1
pvalue(name, p, default) = exists(sprintf("%s%d", name, p)) ? value(sprintf("%s%d", name, p)) : default
regressions = 0
do for [p = 1:npanels] { if (word(preg, p) + 0 >= 0) { regressions = 1 } }
red = "lc rgb '#e00000'"
if (keyed && regressions) { key_cell = key_cell . \
    ", NaN with points pt 7 ps 1.8 ".red." title 'regression (gates.csv)'" }

do for [fmt in formats] {
    eval begin(fmt, cols == 1 ? 1000 : 700 * cols, 480 * rows + 60)
    set border; set xtics; set ytics; set autoscale; set grid xtics ytics mytics lc rgb "#dddddd"
    set logscale y
    set format y "%g"
    set xlabel "run (UTC start time)"
    set ylabel "expected cost per call (µs, freq-weighted)"
    set xrange [-0.5:nruns - 0.5]
    set xtics rotate by 35 right
    if (exists("ntics") && ntics > 0) {
        set xtics (value("runtic0") value("runticx0"))
        do for [i = 1:ntics - 1] {
            set xtics add (value(sprintf("runtic%d", i)) value(sprintf("runticx%d", i)))
        }
    }
    if (keyed) { unset key } else { set key outside right top spacing 1.1 samplen 2 }
    if (fmt eq "table") { eval exact }
    if (fmt ne "table") {
        if (npanels > 1) { set multiplot layout rows, cols title heading font ",12" } \
        else { set title heading }
    }
    do for [p = 1:npanels] {
        first = word(pfirst, p) + 0
        last = first + word(pcount, p) - 1
        reg = word(preg, p) + 0
        if (npanels > 1) { set title pvalue("ptitle", p, "") }
        if (reg >= 0) {
            eval "plot for [s = first:last] datafile index s using 1:2 " . \
                "with linespoints lt lt_of(s) title columnheader(1), " . \
                "datafile index reg using 1:2 with points pt 7 ps 1.8 ".red. \
                " title 'regression (gates.csv)', " . \
                "datafile index reg using 1:2:3 with labels offset 0, 1.2 " . \
                "tc rgb '#e00000' notitle"
        } else {
            plot for [s = first:last] datafile index s using 1:2 \
                with linespoints lt lt_of(s) title columnheader(1)
        }
    }
    if (fmt ne "table" && keyed) { eval key_cell }
    if (fmt ne "table" && npanels > 1) { unset multiplot }
    eval end(fmt)
}
