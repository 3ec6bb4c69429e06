/* `opcost run`: the options parsed, the device settled, the engine's run
 * (bench/measure/pipeline.h) with the console as its hooks. */
#include "run.h"
#include "pipeline.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

static void on_started(void *ctx, const opcost_plan *plan,
                       const opcost_hostinfo *host,
                       const opcost_ceiling *ceiling, const run_device *dev,
                       size_t points, const char *out_path)
{
    (void)ctx;
    opcost_report_header(stdout, plan, host, ceiling,
                         dev->cuda ? &dev->gpu : NULL, dev->pinning, dev->code,
                         points, out_path);
}

static void on_progress(void *ctx, size_t done, size_t total, double elapsed,
                        double left)
{
    (void)ctx;
    opcost_report_progress(stderr, done, total, elapsed, left);
    if (done == total && isatty(fileno(stderr)))
        fputc('\n', stderr);
}

static void on_message(void *ctx, int is_error, const char *text)
{
    (void)ctx;
    (void)is_error;
    /* a progress line may be open on a terminal: start a new one */
    fprintf(stderr, "%sopcost run: %s\n", isatty(fileno(stderr)) ? "\n" : "",
            text);
}

static void on_settled(void *ctx, const opcost_run_settled *s)
{
    (void)ctx;
    opcost_report_settled(stdout, s);
}

static void on_finished(void *ctx, const opcost_result *rows, size_t n,
                        const char *out_path, double seconds)
{
    (void)ctx;
    opcost_report_summary(stdout, rows, n);
    printf("\n%zu rows written to %s (%.1f s)\n", n, out_path, seconds);
}

int opcost_run(const opcost_plan *given)
{
    static const opcost_run_hooks console = {
        NULL, on_started, on_progress, on_message, on_settled, on_finished};
    char err[2048];
    opcost_plan settled = *given;
    run_device dev;
    if (opcost_find_device(&settled, &dev, &console, err, sizeof err)) {
        fprintf(stderr, "opcost run: %s\n", err);
        return 2;
    }
    if (dev.cuda)
        opcost_config_set_device(&settled, 1);
    const int rc = opcost_pipeline_run(&settled, &dev, &console, NULL);
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
