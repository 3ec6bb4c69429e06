// A registered op's typed dispatcher handle, looked up by name (callers
// keep it in a function-local static: one lookup per process).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

namespace rowops
{

template <typename Signature>
c10::TypedOperatorHandle<Signature> op_handle(const char *name)
{
    return c10::Dispatcher::singleton()
        .findSchemaOrThrow(name, "")
        .template typed<Signature>();
}

} // namespace rowops
