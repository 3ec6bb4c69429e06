/* The op table (op_table.def) as data: names and each op's tensors. */
#include "rowops.h"

#include <stddef.h>
#include <string.h>

static const rowops_op_info ops[ROWOPS_OP_COUNT] = {
#define ROWOPS_OP(id, name_, row_inputs_, weighted_, row_outputs_, fused_)     \
    [ROWOPS_OP_##id] = {                                                       \
        .name = name_,                                                         \
        .row_inputs = row_inputs_,                                             \
        .weighted = weighted_,                                                 \
        .row_outputs = row_outputs_,                                           \
        .fused = fused_,                                                       \
        .tensor_args = row_inputs_ + weighted_,                                \
    },
#include "op_table.def"
#undef ROWOPS_OP
};

const rowops_op_info *rowops_op_info_of(rowops_op op)
{
    return (unsigned)op < ROWOPS_OP_COUNT ? &ops[op] : NULL;
}

const char *rowops_op_name(rowops_op op)
{
    const rowops_op_info *o = rowops_op_info_of(op);
    return o ? o->name : "unknown";
}

int rowops_op_from_name(const char *name, rowops_op *op)
{
    for (int i = 0; i < ROWOPS_OP_COUNT; ++i)
        if (strcmp(name, ops[i].name) == 0) {
            *op = (rowops_op)i;
            return 0;
        }
    return -1;
}
