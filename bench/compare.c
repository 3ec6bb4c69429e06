#include "compare.h"

#include <stdio.h>

int opcost_compare_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "opcost compare: not built yet\n");
    return 2;
}
