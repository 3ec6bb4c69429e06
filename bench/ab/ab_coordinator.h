/* `opcost ab`: two builds compared in lockstep rounds. Each side is its
 * own build's opcost, started as workers (bench/ab/ab_worker.h), two
 * processes a side by default (opcost_ab_ctx says why);
 * this process, the coordinator, makes every point's input sets once in
 * shared memory, has both sides prepare, verify (against the C double
 * reference), calibrate and warm up every selected path and variant on
 * them, then runs rounds (bench/measure/rounds.h) in which every member of
 * both sides, and the bandwidth probe run here, takes one sample in a
 * shuffled order, one at a time: the sides never run at once and always
 * on the same physical pages. Both sides of a pair take the same number of
 * calls per sample (the base's calibration). Each new row's ratio is
 * against its base twin; after the last point the verdicts are corrected
 * for the number of pairs (false discovery rate, Benjamini-Hochberg). */
#ifndef OPCOST_AB_H
#define OPCOST_AB_H

#include "ab_sides.h"
#include "pipeline.h"

/* The measurer of opcost_pipeline_run for an A/B run (alpha: the
 * significance of the verdicts, adjusted for the false discovery rate). */
opcost_point_measurer opcost_ab_measurer(opcost_ab_ctx *ctx);

#endif
