#include "report_estimate.h"

#include <math.h>

opcost_paired opcost_report_row_estimate(const opcost_result *x)
{
    if (!isfinite(x->ratio) || !isfinite(x->ratio_ci95_rel))
        return (opcost_paired){0};
    /* the row's 95 % half-width, as a normal interval's */
    return (opcost_paired){.n = (size_t)x->rounds,
                           .ratio = x->ratio,
                           .se = log1p(x->ratio_ci95_rel) / 1.96,
                           .df = 1e6};
}
