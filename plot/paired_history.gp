# Paired nightly history: each night's commit against its base, measured
# in the same rounds (opcost ab), chained into one index per series (1 =
# the chain's first base), with the chained 95 % interval as error bars;
# nights a gate called slower in red, unsure ones as open circles,
# incomplete ones (a point not paired: no verdict) as open diamonds. One
# panel per (op, dtype, layout) of one distribution.
#
# Data: per panel, one block per series (path or path[variant]):
#   columns run index lo hi verdict when
#   (run: 0-based index in time order; verdict: same, faster, slower,
#   unsure, none or incomplete (drawn at its base's index); when: "MM-DD HH:MM", the x tic label: data, never
#   code)
# Parameters (besides those in common.gp):
#   npanels, pfirst, pcount   as in history.gp
#   ptitles   the panels' titles, one word each
#   nruns     how many runs (the x range)
d = ARG0; i = strlen(d)
while (i > 0 && d[i:i] ne "/") { i = i - 1 }
load (i > 0 ? d[1:i] : "")."common.gp"

stats datafile using 1 nooutput
if (!exists("pfirst")) { pfirst = "0"; pcount = sprintf("%d", STATS_blocks) }
if (!exists("nruns")) nruns = int(STATS_max) + 1
red = "lc rgb '#e00000'"
is(v, w) = (strcol(5) eq w) ? column(2) : NaN

do for [fmt in formats] {
    eval begin(fmt, cols == 1 ? 1000 : 700 * cols, 480 * rows + 60)
    set border; set ytics; set autoscale; set grid xtics ytics lc rgb "#dddddd"
    set xtics rotate by 35 right
    set xlabel "night (UTC start time)"
    set ylabel "cost against the first base (chained paired ratios)"
    set xrange [-0.5:nruns - 0.5]
    set key outside right top spacing 1.1 samplen 2
    if (fmt eq "table") { eval exact }
    if (fmt ne "table") {
        if (npanels > 1) { set multiplot layout rows, cols title heading font ",12" } \
        else { set title heading }
    }
    do for [p = 1:npanels] {
        first = word(pfirst, p) + 0
        last = first + word(pcount, p) - 1
        if (npanels > 1) { set title word(ptitles, p) }
        plot for [s = first:last] datafile index s using 1:2:3:4:xticlabels(6) \
                with yerrorlines lt lt_of(s) title columnheader(1), \
            for [s = first:last] datafile index s using 1:(is(0, "slower")) \
                with points pt 7 ps 1.8 @red notitle, \
            for [s = first:last] datafile index s using 1:(is(0, "unsure")) \
                with points pt 6 ps 1.8 lc rgb "#606060" notitle, \
            for [s = first:last] datafile index s using 1:(is(0, "incomplete")) \
                with points pt 12 ps 2.2 lc rgb "#c07000" notitle
    }
    if (fmt ne "table" && npanels > 1) { unset multiplot }
    eval end(fmt)
}
