# Where a call's time goes: per path, its median split into kernel, other
# kernels, conversion, launch, dispatch and idle (µs), stacked; one panel
# per shape (the small, medium and large shape of one distribution, dtype,
# layout).
#
# Data: per panel, ncomponents blocks in that order, one per component:
#   columns x ylow yhigh us path
#   x the bar (0 = first path), [ylow, yhigh] the component's segment of
#   the bar (yhigh - ylow = us), path the bar's label
# Parameters (besides those in common.gp):
#   npanels     panels (default 1); panel p uses blocks
#               ncomponents (p-1) .. ncomponents p - 1
#   ncomponents blocks per panel (default 6)
#   ptitle<p>   panel p's title (1-based p)
d = ARG0; i = strlen(d)
while (i > 0 && d[i:i] ne "/") { i = i - 1 }
load (i > 0 ? d[1:i] : "")."common.gp"

if (!exists("npanels")) npanels = 1
if (!exists("ncomponents")) ncomponents = 6
pvalue(name, p, default) = exists(sprintf("%s%d", name, p)) ? value(sprintf("%s%d", name, p)) : default

set style fill solid 0.85 border rgb "#404040"
set grid ytics lc rgb "#cccccc"
set ylabel "time per call (µs; segments sum to the median)"
set xtics rotate by 35 right nomirror
set yrange [0:*]
set offsets 0.6, 0.6, 0, 0

do for [fmt in formats] {
    eval begin(fmt, 620 * npanels, 640)
    # one key for every panel, in a row under the heading
    set key horizontal center top at screen 0.5, screen 1 - 52.0 / 640 samplen 1.5
    set tmargin 6
    if (fmt eq "table") { eval exact }
    if (fmt ne "table") {
        if (npanels > 1) { set multiplot layout 1, npanels title heading font ",12" } \
        else { set title heading }
    }
    do for [p = 1:npanels] {
        if (npanels > 1) { set title pvalue("ptitle", p, "") }
        if (p > 1) { unset key }
        plot for [c = 0:ncomponents - 1] datafile index (ncomponents * (p - 1) + c) \
            using 1:(($2 + $3) / 2):($1 - 0.36):($1 + 0.36):2:3:xtic(5) \
            with boxxyerror lt (c + 1) title columnheader(1)
    }
    if (fmt ne "table" && npanels > 1) { unset multiplot }
    eval end(fmt)
}
