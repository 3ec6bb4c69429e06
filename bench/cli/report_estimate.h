/* A results row's paired ratio as an estimate for combining rows: what
 * the summary's expected cost (report.c) and the model section
 * (report_model.c) both weigh. */
#ifndef OPCOST_REPORT_ESTIMATE_H
#define OPCOST_REPORT_ESTIMATE_H

#include "paired.h"
#include "row.h"

/* The row's ratio with its 95 % half-width read back as a normal
 * interval's; n = 0 when it has none. */
opcost_paired opcost_report_row_estimate(const opcost_result *x);

#endif
