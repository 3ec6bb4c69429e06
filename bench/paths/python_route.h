/* Shared by the paths that run the op as a Python user does, in the
 * embedded interpreter (eager-python, reference-python, compiled-python*):
 * a opcost_bench.Runner holds the callable and one argument tuple per
 * input set (views of the driver's memory); run() is one
 * PyObject_Call(fn, args[set]) from C, the result kept until the next call
 * replaces it. */
#ifndef OPCOST_PYTHON_ROUTE_H
#define OPCOST_PYTHON_ROUTE_H

#include "path.h"
#include "python_embed.h"

int opcost_python_prepare(opcost_path_run *r, char *why, size_t len);
/* The same with the Runner of another name (a kernel variant called from
 * Python, e.g. "triton") and, when calls is not NULL, each set's inputs
 * from calls[set] instead of the workload's. */
int opcost_python_prepare_calls(opcost_path_run *r, const char *runner,
                                const rowops_call *calls, char *why,
                                size_t len);
/* A path whose Runner was made elsewhere (the model paths): its state
 * holds runner (the reference is taken, also on failure), whose fn, args,
 * compile_ms and compiled_first are Runner's. 0, or -1 with why. */
int opcost_python_adopt(opcost_path_run *r, opcost_pyobj *runner, char *why,
                        size_t len);
/* The path's Runner and set's last result (borrowed; NULL: none). */
opcost_pyobj *opcost_python_runner(const opcost_path_run *r);
opcost_pyobj *opcost_python_last(const opcost_path_run *r, int set);
int opcost_python_run(opcost_path_run *r, int set, char *err, size_t len);
int opcost_python_verify(opcost_path_run *r, int set, char *why, size_t len);
/* A call's result (a tensor or a tuple of them) as outputs to verify:
 * (out, residual_out, rstd) or (y, rstd), or h alone when h_only. 0; 1
 * with why if the result has another form; -1 on a Python error. */
int opcost_python_outputs(opcost_pyobj *result, int h_only, opcost_outputs *o,
                          char *why, size_t len);
void opcost_python_release(opcost_path_run *r);
double opcost_python_compile_ms(opcost_path_run *r);
void opcost_python_annotate(opcost_path_run *r, char *note, size_t len);

/* Defines a path of this family: one line per path file. */
#define OPCOST_PYTHON_PATH(ident, path_name, text)                             \
    OPCOST_PYTHON_PATH_OF(ident, path_name, text, 0)

/* The same, saying whether it is a calibration path (run only when named).
 */
#define OPCOST_PYTHON_PATH_OF(ident, path_name, text, is_calibration)          \
    const opcost_path ident = {                                                \
        .name = path_name,                                                     \
        .description = text,                                                   \
        .devices =                                                             \
            (is_calibration) ? OPCOST_ON_CPU : OPCOST_ON_CPU | OPCOST_ON_CUDA, \
        .takes_variants = 0,                                                   \
        .needs_torch = 1,                                                      \
        .calibration = is_calibration,                                         \
        .named_only = is_calibration,                                          \
        .prepare = opcost_python_prepare,                                      \
        .run = opcost_python_run,                                              \
        .verify = opcost_python_verify,                                        \
        .convert = NULL,                                                       \
        .release = opcost_python_release,                                      \
        .compile_ms = opcost_python_compile_ms,                                \
        .annotate = opcost_python_annotate,                                    \
    }

#endif
