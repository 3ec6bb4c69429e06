# Achieved bandwidth as a fraction of the run's own ceiling (frac_of_peak:
# bytes / median / ceiling_gbps) against the bytes a call moves (log x),
# one point per shape, one series per path.
#
# Data: one block per series: columns bytes frac_of_peak B N
# Parameters (besides those in common.gp):
#   ceiling   the ceiling in GB/s, for the y = 1 line's label (optional)
d = ARG0; i = strlen(d)
while (i > 0 && d[i:i] ne "/") { i = i - 1 }
load (i > 0 ? d[1:i] : "")."common.gp"

stats datafile using 2 nooutput
nblocks = exists("lts") ? words(lts) : STATS_blocks
ymax = STATS_max > 1 ? STATS_max * 1.08 : 1.08
ceiling_label = exists("ceiling") ? \
    sprintf("in-run ceiling = 1 (%.1f GB/s, best STREAM-style probe)", ceiling) : \
    "in-run ceiling = 1"

set logscale x
set format x "%.0s%cB"
set grid xtics ytics mxtics lc rgb "#dddddd"
set xlabel "bytes moved per call (inputs read + outputs written; log scale)"
set ylabel "achieved bandwidth / in-run ceiling (frac_of_peak)"
set yrange [0:ymax]
set key outside right top spacing 1.1 samplen 2
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#808080"
set label 1 ceiling_label at graph 0.02, first 1 offset 0, 0.7 tc rgb "#606060"

do for [fmt in formats] {
    eval begin(fmt, 1100, 650)
    if (fmt eq "table") { eval exact }
    if (fmt ne "table") { set title heading }
    plot for [s = 0:nblocks - 1] datafile index s using 1:2 \
        with points lt lt_of(s) title columnheader(1)
    eval end(fmt)
}
