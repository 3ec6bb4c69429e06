/* `opcost plot RESULTS.csv [--out DIR]`: gnuplot figures of a run. */
#ifndef OPCOST_PLOT_H
#define OPCOST_PLOT_H

/* argv[0] is "plot". Returns the exit status (0, 1 failure, 2 usage). */
int opcost_plot_main(int argc, char **argv);

#endif
