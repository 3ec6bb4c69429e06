/* The console's account of a run's time (report_budget.h). */
#include "report_budget.h"

#include <string.h>

/* Appends ", text" (or text first) to a list. */
static void item(char *list, size_t cap, const char *text)
{
    const size_t used = strlen(list);
    if (used < cap)
        snprintf(list + used, cap - used, "%s%s", used ? "; " : "", text);
}

void opcost_report_budget(FILE *f, const opcost_budget_summary *s)
{
    const opcost_point_cost *o = &s->op, *m = &s->model;
    const double total = s->start_s + s->pilot_s + o->total_s + m->total_s +
                         s->replicates_s + s->end_s;
    if (s->budget_s > 0)
        fprintf(f, "time: %.0f s of the %.0f s budget (--time-budget)", total,
                s->budget_s);
    else
        fprintf(f, "time: %.0f s (no --time-budget: nothing cut)", total);
    fprintf(f,
            ": start %.1f s; points %.1f s (the op's: setup %.1f, compiles "
            "%.1f, rounds %.1f, held for full bandwidth %.1f, attribution "
            "%.1f",
            s->start_s, o->total_s + m->total_s, o->setup_s, o->compile_s,
            o->rounds_s, o->held_s, o->after_s);
    if (m->total_s > 0 || s->pilot_s > 0)
        fprintf(f,
                "; the model stacks': pilots %.1f, setup %.1f, compiles %.1f, "
                "rounds %.1f, evidence %.1f",
                s->pilot_s, m->setup_s, m->compile_s, m->rounds_s, m->after_s);
    fprintf(f, "); replicates %.1f s; end %.1f s; the longest point %.1f s\n",
            s->replicates_s, s->end_s, s->longest_s);
    if (s->budget_s <= 0)
        return;
    char cut[1024] = "", one[256];
    if (s->cut_points) {
        snprintf(one, sizeof one,
                 "%zu of %zu points (every row skipped, note budget:)",
                 s->cut_points, s->points);
        item(cut, sizeof cut, one);
    }
    if (s->model_cut) {
        snprintf(one, sizeof one,
                 "the model rows of %zu of %zu points with model stacks",
                 s->model_cut, s->model_points);
        item(cut, sizeof cut, one);
    }
    if (s->model_narrow) {
        snprintf(one, sizeof one,
                 "%zu model points timed at a narrower model (their notes "
                 "say which)",
                 s->model_narrow);
        item(cut, sizeof cut, one);
    }
    if (s->replicates_run < s->replicates_wanted) {
        snprintf(one, sizeof one, "replicates %zu of %zu", s->replicates_run,
                 s->replicates_wanted);
        item(cut, sizeof cut, one);
    }
    if (s->hold_cut)
        item(cut, sizeof cut, "the full-bandwidth hold at some points");
    if (s->scaled_points) {
        snprintf(one, sizeof one,
                 "rounds below their budget at %zu points (down to x%.2f)",
                 s->scaled_points, s->min_scale);
        item(cut, sizeof cut, one);
    }
    fprintf(f, "cut for the budget: %s\n", cut[0] ? cut : "nothing");
}
