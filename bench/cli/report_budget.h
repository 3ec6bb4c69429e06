/* The console's account of a run's time (report.c prints it when the run
 * settles): what each part cost, and what its time budget cut
 * (bench/measure/budget.h). */
#ifndef OPCOST_REPORT_BUDGET_H
#define OPCOST_REPORT_BUDGET_H

#include "budget.h"

#include <stdio.h>

void opcost_report_budget(FILE *f, const opcost_budget_summary *s);

#endif
