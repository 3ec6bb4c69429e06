#include "plan.h"

int opcost_plan_path_runs(const opcost_plan *plan, const opcost_path *p)
{
    return (p->devices & (plan->cuda ? OPCOST_ON_CUDA : OPCOST_ON_CPU)) != 0;
}

int opcost_plan_variant_runs(const opcost_plan *plan, const opcost_variant *v)
{
    return v == &opcost_variant_auto || v->cuda == plan->cuda;
}
