/* The plan settled for its device: what the command line left to the
 * device (default paths, variants, sample length) and the baseline, which
 * depends on them. The paths the build has come with the plan
 * (plan->all_paths), so the engine needs nothing of bench/paths. */
#include "plan.h"
#include "batch.h"

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

/* The selected path or variant of that name; NULL: none. */
static const opcost_path *selected_path(const opcost_plan *plan,
                                        const char *name)
{
    for (int i = 0; i < plan->npaths; ++i)
        if (strcmp(plan->paths[i]->name, name) == 0)
            return plan->paths[i];
    return NULL;
}

static const opcost_variant *selected_variant(const opcost_plan *plan,
                                              const char *name)
{
    for (int i = 0; i < plan->nvariants; ++i)
        if (strcmp(plan->variants[i]->name, name) == 0)
            return plan->variants[i];
    return NULL;
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
    for (size_t i = 0; i < plan->nall_paths; ++i) {
        const opcost_path *p = plan->all_paths[i];
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
        const opcost_path *ref = selected_path(plan, "reference");
        const opcost_path *p = ref ? ref : plan->npaths ? plan->paths[0] : NULL;
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
    const opcost_path *p = selected_path(plan, path);
    if (!p)
        return bad_baseline(
            err, len, "must name one of the selected paths (--paths)", name);
    const opcost_variant *v = slash ? selected_variant(plan, slash + 1)
                              : p->takes_variants ? first_variant(plan)
                                                  : &opcost_variant_auto;
    if (slash && (!v || !p->takes_variants))
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
