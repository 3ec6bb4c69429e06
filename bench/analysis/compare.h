/* `opcost compare`: statistically sound comparison of two runs, or of two
 * kernel variants within one run. */
#ifndef OPCOST_COMPARE_H
#define OPCOST_COMPARE_H

/* argv[0] is "compare". Exit status: 0 no significant regression, 1 a
 * regression, 2 bad input. */
int opcost_compare_main(int argc, char **argv);

#endif
