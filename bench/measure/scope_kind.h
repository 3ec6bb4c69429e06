/* What a profiler scope's name says it did: the event kind of a
 * RecordFunction scope in the attribution pass (bench/tracers/events.h). Pure,
 * torch-free, so the rules are unit-tested. */
#ifndef OPCOST_SCOPE_KIND_H
#define OPCOST_SCOPE_KIND_H

#include "events.h"

/* What the tracer knows of a scope besides its name. */
enum {
    OPCOST_SCOPE_OP = 1,        /* a dispatcher operator */
    OPCOST_SCOPE_COMPOSITE = 2, /* CompositeImplicitAutograd: decomposes */
};

/* flags: OPCOST_SCOPE_*. The rules, first match wins:
 *   "rowops::kernel::*"                   our kernel
 *   "rowops::*"                            framework (our op's own code)
 *   aten copies, casts, contiguous, clone  conversion
 *   aten allocations (empty*, resize_)     allocation
 *   aten views and metadata                framework (no data moves)
 *   collectives (c10d::, _c10d_functional::) framework
 *   Inductor kernels (cpp_fused*, triton_*) another compute kernel
 *   any other operator: a composite is framework (its own time is the
 *   dispatch of the ops it calls), any other is compute (its own time, the
 *   ops it calls aside, is its kernel)
 *   anything else (user scopes, compiled regions)  framework */
opcost_event_kind opcost_scope_kind(const char *name, int flags);

#endif
