/* `opcost run`: the options parsed, the device settled, the engine's run
 * (bench/measure/pipeline.h) with the console as its hooks. */
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

int opcost_run(const opcost_plan *given)
{
    opcost_console console = {"opcost run", summarize, NULL};
    const opcost_run_hooks hooks = opcost_console_hooks(&console);
    char err[2048];
    opcost_plan settled = *given;
    run_device dev;
    if (opcost_find_device(&settled, &dev, &hooks, err, sizeof err)) {
        fprintf(stderr, "opcost run: %s\n", err);
        return 2;
    }
    if (dev.cuda)
        opcost_config_set_device(&settled, 1);
    const int rc = opcost_pipeline_run(&settled, &dev, &hooks, NULL);
    opcost_close_device(&dev);
    return rc;
}

int opcost_run_main(int argc, char **argv)
{
    opcost_plan cfg;
    char err[1024];
    const int rc = opcost_config_parse(&cfg, argc, argv, err, sizeof err);
    if (rc > 0)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "opcost run: %s\n", err);
        return 2;
    }
    return opcost_run(&cfg);
}
