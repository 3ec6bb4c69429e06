/* Shared by the model paths (model-<norm>-<mode>): the op inside a model,
 * a stack of transformers' LlamaDecoderLayer with the dimensions of the
 * shape set's model (bench/python/opcost_model.py,
 * shapes/models/decoders.csv), run in the embedded interpreter as the
 * Python paths are. One call is
 * one forward of the stack over the point's B tokens (its input: the
 * set's x as [1, B, N]); verified against the stack as shipped in
 * float64; paired with the stack as shipped in the same mode. */
#ifndef OPCOST_MODEL_ROUTE_H
#define OPCOST_MODEL_ROUTE_H

#include "path.h"
#include "python_route.h"

/* The narrower real configuration (shapes/models/decoders.csv) a model
 * path times in place of the set's own model where the run's time budget
 * asks for it (opcost_path_run.model_narrow). */
#define OPCOST_MODEL_NARROW_CONFIG "llama-3.2-1b"

int opcost_model_applies(const opcost_case *c);
int opcost_model_prepare(opcost_path_run *r, char *why, size_t len);
int opcost_model_verify(opcost_path_run *r, int set, char *why, size_t len);
void opcost_model_evidence(opcost_path_run *r, struct opcost_result *row);

/* Defines a model path: one line per path file (_NAMED: run only when
 * named, as the AOTInductor ones, which build a package per norm). */
#define OPCOST_MODEL_PATH(ident, path_name, baseline, text)                    \
    OPCOST_MODEL_PATH_AS(ident, path_name, baseline, text, 0)
#define OPCOST_MODEL_PATH_NAMED(ident, path_name, baseline, text)              \
    OPCOST_MODEL_PATH_AS(ident, path_name, baseline, text, 1)
#define OPCOST_MODEL_PATH_AS(ident, path_name, baseline, text, named)          \
    const opcost_path ident = {                                                \
        .name = path_name,                                                     \
        .description = text,                                                   \
        .devices = OPCOST_ON_CPU | OPCOST_ON_CUDA,                             \
        .named_only = named,                                                   \
        .takes_variants = 0,                                                   \
        .needs_torch = 1,                                                      \
        .model = 1,                                                            \
        .applies = opcost_model_applies,                                       \
        .paired_with = baseline,                                               \
        .prepare = opcost_model_prepare,                                       \
        .run = opcost_python_run,                                              \
        .verify = opcost_model_verify,                                         \
        .convert = NULL,                                                       \
        .release = opcost_python_release,                                      \
        .compile_ms = opcost_python_compile_ms,                                \
        .annotate = opcost_python_annotate,                                    \
        .evidence = opcost_model_evidence,                                     \
    }

#endif
