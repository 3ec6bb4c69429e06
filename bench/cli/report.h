/* Console output of `opcost run`; printers only format. */
#ifndef OPCOST_REPORT_H
#define OPCOST_REPORT_H

#include "ceiling.h"
#include "hostinfo.h"
#include "paired.h"
#include "pipeline.h"
#include "plan.h"
#include "row.h"
#include "rowops_bridge.h"

#include <stdio.h>

/* The plan, the timer's resolution and the ceiling, first. */
/* gpu: the device of a --device cuda run, NULL on the CPU. */
void opcost_report_header(FILE *f, const opcost_plan *plan,
                          const opcost_hostinfo *host,
                          const opcost_ceiling *ceiling,
                          const rowops_bridge_cuda_device *gpu,
                          const char *pinning, const char *code, size_t points,
                          const char *out_path);

/* One progress line (on a terminal rewritten in place): points done, the
 * run's seconds so far and the estimate of those left (budget.h: from
 * what the points so far cost, compiles and model stacks included). */
void opcost_report_progress(FILE *f, size_t done, size_t total,
                            double elapsed_s, double left_s);

/* After the points: the ceilings' drift over the run (CPU) and the
 * run-to-run noise (when points were measured again). */
void opcost_report_settled(FILE *f, const opcost_run_settled *s);

/* Per distribution and (op, dtype, layout): each path's expected cost per
 * call (shapes weighted by freq), per token, and its speedup against
 * reference and native; then the rows that were not timed. */
void opcost_report_summary(FILE *f, const opcost_result *rows, size_t n);

#endif
