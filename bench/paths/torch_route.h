/* Shared by the paths that reach PyTorch through the bridge (eager-cpp,
 * reference, native): every set's inputs wrapped once as tensors in their
 * original layout, one call per run, the outputs held until the next call
 * replaces them (as a model frees the previous activation). */
#ifndef OPCOST_TORCH_ROUTE_H
#define OPCOST_TORCH_ROUTE_H

#include "path.h"
#include "rowops_bridge.h"

/* The torch.add calibration route (h alone, fused op only). */
static inline int opcost_torch_route_is_add(rowops_bridge_route route)
{
    return route == ROWOPS_BRIDGE_TORCH_ADD;
}

int opcost_torch_prepare(opcost_path_run *r, rowops_bridge_route route,
                         char *why, size_t len);
int opcost_torch_run(opcost_path_run *r, int set, char *err, size_t len);
int opcost_torch_verify(opcost_path_run *r, int set, char *why, size_t len);
/* x.contiguous() of the set's x (a copy of x's shape, dtype and layout):
 * the conversion an unfused path makes of h or x when they are not
 * contiguous. 1 when the layout needs none. */
int opcost_torch_convert_x(opcost_path_run *r, int set, char *err, size_t len);
void opcost_torch_release(opcost_path_run *r);

/* Defines a path of this family reaching torch through `route`, with its
 * conversion hook (or NULL): one line per path file. Calibration paths
 * (the torch.add route) are run only when named. */
#define OPCOST_TORCH_PATH(ident, path_name, route, convert_fn, text)           \
    static int prepare_##ident(opcost_path_run *r, char *why, size_t len)      \
    {                                                                          \
        return opcost_torch_prepare(r, route, why, len);                       \
    }                                                                          \
    const opcost_path ident = {                                                \
        .name = path_name,                                                     \
        .description = text,                                                   \
        .devices = (route) == ROWOPS_BRIDGE_TORCH_ADD                          \
                       ? OPCOST_ON_CPU                                         \
                       : OPCOST_ON_CPU | OPCOST_ON_CUDA,                       \
        .takes_variants = 0,                                                   \
        .needs_torch = 1,                                                      \
        .calibration = (route) == ROWOPS_BRIDGE_TORCH_ADD,                     \
        .named_only = (route) == ROWOPS_BRIDGE_TORCH_ADD,                      \
        .prepare = prepare_##ident,                                            \
        .run = opcost_torch_run,                                               \
        .verify = opcost_torch_verify,                                         \
        .convert = convert_fn,                                                 \
        .release = opcost_torch_release,                                       \
    }

#endif
