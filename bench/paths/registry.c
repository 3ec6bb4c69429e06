/* The table of benchmark paths, in the order they are listed. */
#include "registry.h"

#include <string.h>

/* Every path, one line each, in the order they are listed: the path's
 * file defines the opcost_path named here. */
#define OPCOST_PATHS(X)                                                        \
    X(opcost_path_kernel)                                                      \
    X(opcost_path_kernel_e2e)                                                  \
    X(opcost_path_eager_cpp)                                                   \
    X(opcost_path_reference)                                                   \
    X(opcost_path_native)                                                      \
    X(opcost_path_eager_python)                                                \
    X(opcost_path_reference_python)                                            \
    X(opcost_path_compiled_python)                                             \
    X(opcost_path_compiled_python_reference)                                   \
    X(opcost_path_compiled_python_decomposed)                                  \
    X(opcost_path_compiled_aoti)                                               \
    X(opcost_path_peer_vllm)                                                   \
    X(opcost_path_peer_zentorch)                                               \
    X(opcost_path_eager_python_inplace)                                        \
    X(opcost_path_peer_vllm_inplace)                                           \
    X(opcost_path_peer_zentorch_inplace)                                       \
    X(opcost_path_peer_flashinfer)                                             \
    X(opcost_path_peer_liger)                                                  \
    X(opcost_path_peer_quack)                                                  \
    X(opcost_path_peer_apex)                                                   \
    X(opcost_path_model_shipped_eager)                                         \
    X(opcost_path_model_rowops_eager)                                          \
    X(opcost_path_model_torch_eager)                                           \
    X(opcost_path_model_vllm_eager)                                            \
    X(opcost_path_model_shipped_compiled)                                      \
    X(opcost_path_model_rowops_compiled)                                       \
    X(opcost_path_model_torch_compiled)                                        \
    X(opcost_path_model_decomposed_compiled)                                   \
    X(opcost_path_model_shipped_aoti)                                          \
    X(opcost_path_model_rowops_aoti)                                           \
    X(opcost_path_model_torch_aoti)                                            \
    X(opcost_path_cuda_graph)                                                  \
    X(opcost_path_add_kernel)                                                  \
    X(opcost_path_torch_add_cpp)                                               \
    X(opcost_path_torch_add_python)                                            \
    X(opcost_path_distributed)

#define DECLARE(sym) extern const opcost_path sym;
OPCOST_PATHS(DECLARE)
#undef DECLARE

static const opcost_path *const paths[] = {
#define ENTRY(sym) &sym,
    OPCOST_PATHS(ENTRY)
#undef ENTRY
};

size_t opcost_path_count(void)
{
    return sizeof paths / sizeof paths[0];
}

const opcost_path *const *opcost_path_table(void)
{
    return paths;
}

const opcost_path *opcost_path_at(size_t i)
{
    return i < opcost_path_count() ? paths[i] : NULL;
}

const opcost_path *opcost_path_find(const char *name)
{
    for (size_t i = 0; i < opcost_path_count(); ++i)
        if (strcmp(paths[i]->name, name) == 0)
            return paths[i];
    return NULL;
}
