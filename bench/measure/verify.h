/* Verification of a path's outputs against the C double reference
 * (kernels/reference_f64.c) before it is timed: every element of every
 * output the path produces (on up to 1024 rows of the largest points),
 * within the tolerance of one rounding to the output dtype. A path that fails
 * is reported `wrong` and never timed. */
#ifndef OPCOST_VERIFY_H
#define OPCOST_VERIFY_H

#include "workload.h"

/* The outputs a path produced for one set; a descriptor with data == NULL
 * is an output the path does not produce (the native route has no rstd). */
typedef struct opcost_outputs {
    rowops_tensor out, residual_out, rstd;
} opcost_outputs;

/* Points of more elements are verified on OPCOST_VERIFY_ROWS rows spread
 * evenly, the first and the last included; smaller ones on every row. */
#define OPCOST_VERIFY_ALL_ELEMS ((int64_t)1 << 22)
#define OPCOST_VERIFY_ROWS 1024

/* Relative and absolute tolerance of an output of dtype dt. */
void opcost_tolerance(rowops_dtype dt, double *rtol, double *atol);

/* The reference is computed once per (workload, set) and kept in
 * w->expected for the other paths. 0 when every element matches; 1 with the
 * first mismatch in why
 * ("out[3, 17] = 0.5, expected 0.25 (rtol 1e-2, atol 1e-4)"). */
int opcost_verify_outputs(opcost_workload *w, int set,
                          const opcost_outputs *got, char *why, size_t len);
/* The same within scale times the tolerances (a peer's kernel, which may
 * round less carefully than the contract: wrong only beyond that). */
int opcost_verify_outputs_within(opcost_workload *w, int set,
                                 const opcost_outputs *got, double scale,
                                 char *why, size_t len);

#endif
