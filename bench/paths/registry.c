/* The table of benchmark paths, in the order they are listed. */
#include "registry.h"

#include <string.h>

extern const opcost_path opcost_path_kernel;
extern const opcost_path opcost_path_kernel_e2e;
extern const opcost_path opcost_path_eager_cpp;
extern const opcost_path opcost_path_reference;
extern const opcost_path opcost_path_native;
extern const opcost_path opcost_path_eager_python;
extern const opcost_path opcost_path_reference_python;
extern const opcost_path opcost_path_compiled_python;
extern const opcost_path opcost_path_compiled_python_reference;
extern const opcost_path opcost_path_compiled_python_decomposed;
extern const opcost_path opcost_path_compiled_aoti;
extern const opcost_path opcost_path_cuda_graph;
extern const opcost_path opcost_path_add_kernel;
extern const opcost_path opcost_path_torch_add_cpp;
extern const opcost_path opcost_path_torch_add_python;
extern const opcost_path opcost_path_distributed;

static const opcost_path *const paths[] = {
    &opcost_path_kernel,
    &opcost_path_kernel_e2e,
    &opcost_path_eager_cpp,
    &opcost_path_reference,
    &opcost_path_native,
    &opcost_path_eager_python,
    &opcost_path_reference_python,
    &opcost_path_compiled_python,
    &opcost_path_compiled_python_reference,
    &opcost_path_compiled_python_decomposed,
    &opcost_path_compiled_aoti,
    &opcost_path_cuda_graph,
    &opcost_path_add_kernel,
    &opcost_path_torch_add_cpp,
    &opcost_path_torch_add_python,
    &opcost_path_distributed,
};

size_t opcost_path_count(void)
{
    return sizeof paths / sizeof paths[0];
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
