/* `opcost run`: the options parsed (config.h), the plan settled and its
 * device found by the engine, the engine's run (bench/measure/pipeline.h)
 * with the console as its hooks. */
#include "run.h"
#include "console.h"
#include "pipeline.h"
#include "report.h"

#include <stdio.h>

static void summarize(void *ctx, const opcost_result *rows, size_t n)
{
    (void)ctx;
    opcost_report_summary(stdout, rows, n);
}

int opcost_run(const opcost_plan *asked)
{
    opcost_console console = {"opcost run", summarize, NULL};
    const opcost_run_hooks hooks = opcost_console_hooks(&console);
    char err[2048];
    opcost_plan plan = *asked;
    run_device dev;
    if (opcost_plan_settle(&plan, plan.cuda, err, sizeof err) ||
        opcost_find_device(&plan, &dev, &hooks, err, sizeof err)) {
        fprintf(stderr, "opcost run: %s\n", err);
        return 2;
    }
    const int rc = opcost_pipeline_run(&plan, &dev, &hooks, NULL);
    opcost_close_device(&dev);
    return rc;
}

int opcost_run_main(int argc, char **argv)
{
    opcost_plan plan;
    char err[1024];
    const int rc = opcost_config_parse(&plan, argc, argv, err, sizeof err);
    if (rc > 0)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "opcost run: %s\n", err);
        return 2;
    }
    return opcost_run(&plan);
}
