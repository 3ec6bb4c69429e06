#include "scope_kind.h"

#include <string.h>

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int listed(const char *op, const char *const *names)
{
    for (; *names; ++names)
        if (!strcmp(op, *names))
            return 1;
    return 0;
}

static const char *const conversions[] = {
    "copy_",     "copy",       "_copy_from", "_copy_from_and_resize",
    "clone",     "contiguous", "to",         "_to_copy",
    "_to_dense", NULL};

static const char *const allocations[] = {
    "empty",     "empty_strided",     "empty_like",
    "new_empty", "new_empty_strided", "resize_",
    NULL};

/* Ops that only make a new view or read metadata. */
static const char *const views[] = {"view",
                                    "_unsafe_view",
                                    "as_strided",
                                    "_reshape_alias",
                                    "t",
                                    "transpose",
                                    "permute",
                                    "expand",
                                    "expand_as",
                                    "reshape",
                                    "slice",
                                    "select",
                                    "narrow",
                                    "unsqueeze",
                                    "squeeze",
                                    "flatten",
                                    "unflatten",
                                    "detach",
                                    "alias",
                                    "lift_fresh",
                                    "split",
                                    "split_with_sizes",
                                    "chunk",
                                    "unbind",
                                    "size",
                                    "stride",
                                    "numel",
                                    "dim",
                                    "resolve_conj",
                                    "resolve_neg",
                                    "view_as",
                                    "_fw_primal",
                                    NULL};

opcost_event_kind opcost_scope_kind(const char *name, int flags)
{
    if (!name)
        return OPCOST_EVENT_HOST_API;
    if (starts(name, "rowops::kernel::"))
        return OPCOST_EVENT_KERNEL_OURS;
    if (starts(name, "rowops::"))
        return OPCOST_EVENT_HOST_API;
    if (starts(name, "aten::")) {
        const char *op = name + 6;
        if (listed(op, conversions))
            return OPCOST_EVENT_CONVERSION;
        if (listed(op, allocations))
            return OPCOST_EVENT_ALLOCATION;
        if (listed(op, views))
            return OPCOST_EVENT_HOST_API;
    }
    if (starts(name, "c10d::") || starts(name, "_c10d_functional::"))
        return OPCOST_EVENT_HOST_API;
    if (strstr(name, "cpp_fused") || starts(name, "triton_") ||
        strstr(name, "_triton_"))
        return OPCOST_EVENT_KERNEL_OTHER;
    if (flags & OPCOST_SCOPE_OP)
        return flags & OPCOST_SCOPE_COMPOSITE ? OPCOST_EVENT_HOST_API
                                              : OPCOST_EVENT_KERNEL_OTHER;
    return OPCOST_EVENT_HOST_API;
}
