# Shared set-up of the opcost plot scripts, loaded by each of them from
# its own directory: text, series colours, the image terminals and the
# parameters every script takes.
#
# Parameters (gnuplot -e "name='value'; ..." before the script):
#   datafile  the data file: whitespace-separated blocks, one per series,
#             each opened by comment lines naming the columns and a header
#             line whose first word is the series' title (required)
#   out       output path without extension: writes out.png and out.svg
#             (required unless table is set)
#   title     the figure's title; run: a second title line (run, device)
#   table     when set, the plotted points go to this file as gnuplot
#             `set table` text instead of images (what the tests read)
#   lts       linetype of each block, space-separated (default 1 2 3 ...),
#             so a path keeps its colour across figures and panels

set encoding utf8
# each block's first line is its header: titles come from it, stats and
# plot never read it as data
set datafile columnheaders

# Twelve distinguishable colours (Tableau 10 plus two), each with its own
# point type, so eleven paths stay apart in print as on screen.
set linetype 1 lc rgb "#1f77b4" lw 1.5 pt 7 ps 0.8
set linetype 2 lc rgb "#ff7f0e" lw 1.5 pt 5 ps 0.8
set linetype 3 lc rgb "#2ca02c" lw 1.5 pt 9 ps 0.9
set linetype 4 lc rgb "#d62728" lw 1.5 pt 11 ps 0.9
set linetype 5 lc rgb "#9467bd" lw 1.5 pt 13 ps 0.9
set linetype 6 lc rgb "#8c564b" lw 1.5 pt 15 ps 0.9
set linetype 7 lc rgb "#e377c2" lw 1.5 pt 6 ps 0.8
set linetype 8 lc rgb "#7f7f7f" lw 1.5 pt 4 ps 0.8
set linetype 9 lc rgb "#bcbd22" lw 1.5 pt 8 ps 0.9
set linetype 10 lc rgb "#17becf" lw 1.5 pt 10 ps 0.9
set linetype 11 lc rgb "#000000" lw 1.5 pt 12 ps 0.9
set linetype 12 lc rgb "#aec7e8" lw 1.5 pt 14 ps 0.9
set linetype cycle 12

if (!exists("datafile")) {
    print "usage: gnuplot -e \"datafile='F.dat'; out='STEM'; title='T'\" SCRIPT.gp"
    exit status 2
}
if (!exists("out") && !exists("table")) {
    print "set out='STEM' (writes STEM.png and STEM.svg) or table='FILE'"
    exit status 2
}
if (!exists("title")) title = ""
if (!exists("run")) run = ""
heading = (run eq "") ? title : title."\n".run
# the formats the loop in each script renders
formats = exists("table") ? "table" : "png svg"

# pngcairo (antialiased) where this gnuplot has it, else the libgd png.
# Underscores in op and path names stay literal: no enhanced text.
pngterm = strstrt(GPVAL_TERMINALS, "pngcairo") > 0 ? \
    "pngcairo font 'Sans,10' noenhanced" : "png noenhanced"
term(fmt, w, h) = (fmt eq "png") ? \
    sprintf("set terminal %s size %d,%d", pngterm, w, h) : \
    sprintf("set terminal svg size %d,%d dynamic font 'Sans,10' noenhanced background '#ffffff'", w, h)
# begin(fmt)/end(fmt): the commands that open and close one rendering
begin(fmt, w, h) = (fmt eq "table") ? "set table table" : \
    term(fmt, w, h)."; set output out.'.".fmt."'"
end(fmt) = (fmt eq "table") ? "unset table" : "unset output"
# a table holds the plotted numbers, not the tic labels' rounding
exact = "set format x '%.10g'; set format y '%.10g'"

# the linetype of block i (0-based)
lt_of(i) = exists("lts") ? word(lts, i + 1) + 0 : i + 1

# Multiplots (npanels panels) share one key: a cell of its own listing
# every series of the figure once, from keys (titles) and keylts
# (linetypes), both space-separated; the grid has cols x rows cells.
# key_cell unsets what a panel sets: set the panels up in each pass.
if (!exists("npanels")) npanels = 1
keyed = npanels > 1 && exists("keys") && exists("keylts")
cells = npanels + keyed
cols = cells == 1 ? 1 : (cells == 3 ? 3 : (cells <= 4 ? 2 : 3))
rows = int((cells + cols - 1) / cols)
key_cell = "unset border; unset xtics; unset ytics; unset xlabel; unset ylabel; " . \
    "unset title; unset grid; unset logscale; unset arrow; unset label; " . \
    "set xrange [0:1]; set yrange [0:1]; set key center center vertical " . \
    "spacing 1.3 samplen 3 noautotitle; " . \
    "plot for [k = 1:words(keys)] NaN with linespoints " . \
    "lt (word(keylts, k) + 0) title word(keys, k)"
