/* The console's model section (report_model.c). */
#ifndef OPCOST_REPORT_MODEL_H
#define OPCOST_REPORT_MODEL_H

#include "row.h"

#include <stdio.h>

/* Whether path is a model path (model-<norm>-<mode>). */
int opcost_report_is_model(const char *path);

/* Per distribution and dtype with timed model rows: the norm's share of
 * the stack's call (as shipped, with rowops), what the rowops stack, the
 * torch stack and (compiled) the decomposed one cost against the stack as
 * shipped in the same mode, rowops against torch and against decomposed,
 * weighted over the timed shapes with intervals; then compiled rowops
 * against compiled decomposed at every timed B. */
void opcost_report_models(FILE *f, const opcost_result *rows, size_t n);

#endif
