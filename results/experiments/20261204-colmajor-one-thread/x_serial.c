/* throwaway experiment: the AVX-512 tiles on one thread whatever the split */
#include "rowops.h"
#include "rowops_tensor.h"
void rowops_cpu_colmajor_x_serial(const rowops_call *c, int64_t row_begin,
                                  int64_t row_end)
{
    (void)row_end;
    if (row_begin == 0)
        rowops_cpu_colmajor_avx512(c, 0, c->x.sizes[0]);
}
void rowops_cpu_colmajor_x_serial2(const rowops_call *c, int64_t row_begin,
                                   int64_t row_end)
{
    (void)row_end;
    if (row_begin == 0)
        rowops_cpu_colmajor_avx2(c, 0, c->x.sizes[0]);
}
