/* What the coordinator (ab_coordinator.h) measures between the processes
 * of the two sides and the verdicts (ab_verdicts.h) weigh: its own header,
 * below both, so the verdicts need nothing of the coordinator. */
#ifndef OPCOST_AB_CONTRAST_H
#define OPCOST_AB_CONTRAST_H

#include <stddef.h>

/* Processes a side may run. */
#define OPCOST_AB_MAX_PROCESSES 8

/* A contrast between the processes of the sides at one point
 * (opcost_members_cross_contrasts), and its standard error: 0 but for
 * what each process's own memory moves. */
typedef struct opcost_ab_contrast {
    size_t new_row; /* the point's new row (its ratio's), in the run's rows */
    double d, se;
} opcost_ab_contrast;

#endif
