/* The plan settled for its device: what the command line left to the
 * device (default paths, variants, sample length) and the baseline, which
 * depends on them. Built with the paths (bench/driver.cmake): the default
 * paths and the baseline's names come from their registry. */
#include "plan.h"
#include "batch.h"
#include "registry.h"
#include "variants.h"

#include <stdio.h>
#include <string.h>

int opcost_plan_path_runs(const opcost_plan *plan, const opcost_path *p)
{
    return (p->devices & (plan->cuda ? OPCOST_ON_CUDA : OPCOST_ON_CPU)) != 0;
}

int opcost_plan_variant_runs(const opcost_plan *plan, const opcost_variant *v)
{
    return v == &opcost_variant_auto || v->cuda == plan->cuda;
}

static int path_selected(const opcost_plan *plan, const opcost_path *p)
{
    for (int i = 0; i < plan->npaths; ++i)
        if (plan->paths[i] == p)
            return 1;
    return 0;
}

static int variant_selected(const opcost_plan *plan, const opcost_variant *v)
{
    for (int i = 0; i < plan->nvariants; ++i)
        if (plan->variants[i] == v)
            return 1;
    return 0;
}

/* The first selected variant that runs on the plan's device. */
static const opcost_variant *first_variant(const opcost_plan *plan)
{
    for (int i = 0; i < plan->nvariants; ++i)
        if (opcost_plan_variant_runs(plan, plan->variants[i]))
            return plan->variants[i];
    return plan->variants[0];
}

/* Without --paths: every path of the device but those run only when named;
 * a quick run is CI-sized: a model stack and a peer's library load are
 * not. */
static void select_default_paths(opcost_plan *plan)
{
    plan->npaths = 0;
    for (size_t i = 0; i < opcost_path_count(); ++i) {
        const opcost_path *p = opcost_path_at(i);
        if (!p->named_only && !((p->model || p->peer) && plan->quick) &&
            opcost_plan_path_runs(plan, p) &&
            plan->npaths < OPCOST_MAX_SELECTED)
            plan->paths[plan->npaths++] = p;
    }
}

static int bad_baseline(char *err, size_t len, const char *rule,
                        const char *name)
{
    snprintf(err, len, "--baseline: %s, got '%s'", rule, name);
    return -1;
}

/* The member every path is paired with: --baseline PATH[/VARIANT] among
 * the selected paths and variants, else reference where it is selected,
 * else the first selected path (with its first variant). */
static int settle_baseline(opcost_plan *plan, char *err, size_t len)
{
    const char *name = plan->baseline_name;
    plan->baseline_path = NULL;
    plan->baseline_variant = &opcost_variant_auto;
    if (!name) {
        const opcost_path *ref = opcost_path_find("reference");
        const opcost_path *p = path_selected(plan, ref) ? ref
                               : plan->npaths           ? plan->paths[0]
                                                        : NULL;
        plan->baseline_path = p;
        if (p && p->takes_variants)
            plan->baseline_variant = first_variant(plan);
        return 0;
    }
    char path[128];
    const char *slash = strchr(name, '/');
    const size_t n = slash ? (size_t)(slash - name) : strlen(name);
    if (n >= sizeof path)
        return bad_baseline(err, len, "must be PATH or PATH/VARIANT", name);
    memcpy(path, name, n);
    path[n] = '\0';
    const opcost_path *p = opcost_path_find(path);
    if (!p || !path_selected(plan, p))
        return bad_baseline(
            err, len, "must name one of the selected paths (--paths)", name);
    const opcost_variant *v = slash ? opcost_variant_find(slash + 1)
                              : p->takes_variants ? first_variant(plan)
                                                  : &opcost_variant_auto;
    if (slash && (!v || !p->takes_variants || !variant_selected(plan, v)))
        return bad_baseline(err, len,
                            "VARIANT must be one of the selected variants of "
                            "a path that takes variants (--variants)",
                            name);
    plan->baseline_path = p;
    plan->baseline_variant = v;
    return 0;
}

int opcost_plan_settle(opcost_plan *plan, int cuda, char *err, size_t len)
{
    plan->cuda = cuda;
    if (!plan->sample_us_given)
        plan->target_sample_us =
            cuda ? OPCOST_SAMPLE_US_GPU : OPCOST_SAMPLE_US_CPU;
    if (plan->paths_default)
        select_default_paths(plan);
    if (plan->nvariants == 0)
        plan->variants[plan->nvariants++] = &opcost_variant_auto;
    return settle_baseline(plan, err, len);
}
