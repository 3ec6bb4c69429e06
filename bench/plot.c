/* `opcost plot`: placeholder until the plots land. */
#include "plot.h"

#include <stdio.h>

int opcost_plot_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "opcost plot: not built yet\n");
    return 2;
}
