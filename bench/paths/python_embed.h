/* The CPython interpreter embedded in the driver, for the paths a Python
 * user takes (eager-python, reference-python, compiled-python*) and for
 * building AOTInductor packages. Started once, on first use, from the
 * environment's interpreter (OPCOST_PYTHON_EXECUTABLE, or $OPCOST_PYTHON),
 * so its site-packages, torch included, are the ones the build used; torch
 * is imported once per run. The calling thread holds the GIL throughout. */
#ifndef OPCOST_PYTHON_EMBED_H
#define OPCOST_PYTHON_EMBED_H

#include "rowops.h"

#include <stddef.h>

/* The PyObject behind the opaque pointers below. */
typedef struct _object opcost_pyobj;

/* Starts the interpreter and imports opcost_bench. 0, or -1 with err. */
int opcost_python_start(char *err, size_t errlen);

/* opcost_bench (borrowed), NULL before a successful start. */
opcost_pyobj *opcost_python_bench_module(void);

/* The pending Python exception as "Type: message" into err; -1. */
int opcost_python_error(char *err, size_t errlen);

/* Runs a statement in opcost_bench's namespace (tests). */
int opcost_python_exec(const char *code, char *err, size_t errlen);

/* (address, dtype, sizes, strides, device) of a descriptor, the tuple
 * opcost_bench takes and returns; NULL with a Python error. */
opcost_pyobj *opcost_python_tensor_spec(const rowops_tensor *t);

/* Such a tuple back into a descriptor (CPU or CUDA); -1 if it is not one. */
int opcost_python_tensor_from_spec(opcost_pyobj *spec, rowops_tensor *t);

#endif
