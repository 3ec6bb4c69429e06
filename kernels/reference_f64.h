#ifndef ROWOPS_REFERENCE_F64_H
#define ROWOPS_REFERENCE_F64_H

#include "rowops.h"

/* See reference_f64.c. residual_out may be NULL for rms_norm_rows. */
void rowops_reference_f64(const rowops_call *call, double *out,
                          double *residual_out, double *rstd);

#endif
