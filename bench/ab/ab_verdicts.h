/* `opcost ab`'s verdicts, after the last point: each new row's interval
 * joined with what the two sides' processes differ by beyond the rounds
 * (measured between the processes of a side where each has two or more,
 * opcost_ab_ctx's contrasts; else the scatter of the path's ratios over
 * B), then its verdict with the p-values adjusted over every pair of the
 * run for the false discovery rate (Benjamini-Hochberg). */
#ifndef OPCOST_AB_VERDICTS_H
#define OPCOST_AB_VERDICTS_H

#include "ab_coordinator.h"
#include "point_rows.h"

void opcost_ab_verdicts(opcost_ab_ctx *ab, run_out *out);

#endif
