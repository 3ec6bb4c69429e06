#include "outputs.h"
#include "validate.h"

#include <ATen/ATen.h>

namespace rowops
{

at::Tensor empty_output(const at::Tensor &x)
{
    return at::empty_symint(
        x.sym_sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor empty_rstd(const at::Tensor &x)
{
    return at::empty_symint(
        x.sym_sizes().slice(0, x.dim() - 1),
        x.options().dtype(accumulation_dtype(x.scalar_type())));
}

} // namespace rowops
