/* `opcost ab`'s verdicts, after the last point: each new row's interval
 * joined with what the two sides' processes differ by beyond the rounds
 * (measured between the processes of a side where each has two or more,
 * the contrasts the coordinator kept; else the scatter of the path's
 * ratios over B), then its verdict with the p-values adjusted over every pair
 * of the run for the false discovery rate (Benjamini-Hochberg). */
#ifndef OPCOST_AB_VERDICTS_H
#define OPCOST_AB_VERDICTS_H

#include "ab_contrast.h"
#include "run_context.h"

/* What the verdicts weigh besides the rows: set by the coordinator from
 * its run (opcost_ab_ctx), by the tests from their own. */
typedef struct opcost_ab_evidence {
    int processes;           /* a side's: 1 .. OPCOST_AB_MAX_PROCESSES */
    double threshold, alpha; /* the verdicts' band and significance */
    const opcost_ab_contrast *contrasts; /* the run's, any point order */
    size_t ncontrasts;
} opcost_ab_evidence;

void opcost_ab_verdicts(const opcost_ab_evidence *ab, run_out *out);

#endif
