/* `opcost compare`: statistically sound comparison of two runs, or of two
 * kernel variants within one run. */
#ifndef OPCOST_COMPARE_H
#define OPCOST_COMPARE_H

#include <stddef.h>

/* argv[0] is "compare". Exit status: 0 no significant regression, 1 a
 * regression, 2 bad input. */
int opcost_compare_main(int argc, char **argv);

/* Slots of the key tables (pairing and grouping) the last
 * opcost_compare_main visited: the work that must stay linear in the
 * rows, counted so a test can check it without timing it. */
size_t opcost_compare_key_probes(void);

#endif
