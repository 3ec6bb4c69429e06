#include "outputs.h"
#include "block_cache.h"
#include "validate.h"

#include <ATen/ATen.h>

namespace rowops
{

at::Tensor empty_output(const at::Tensor &x)
{
    return at::empty_symint(
        x.sym_sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
}

at::Tensor kernel_output(const at::Tensor &x)
{
    if (!x.is_cpu())
        return empty_output(x);
    return empty_cpu_cached(x.sizes(), x.scalar_type());
}

at::Tensor kernel_rstd(const at::Tensor &x)
{
    if (!x.is_cpu())
        return empty_rstd(x);
    return empty_cpu_cached(x.sizes().slice(0, x.dim() - 1),
                            accumulation_dtype(x.scalar_type()));
}

at::Tensor empty_rstd(const at::Tensor &x)
{
    return at::empty_symint(
        x.sym_sizes().slice(0, x.dim() - 1),
        x.options().dtype(accumulation_dtype(x.scalar_type())));
}

} // namespace rowops
