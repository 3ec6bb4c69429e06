#include "console.h"
#include "report.h"

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
    const opcost_console *console = ctx;
    (void)is_error;
    /* a progress line may be open on a terminal: start a new one */
    fprintf(stderr, "%s%s: %s\n", isatty(fileno(stderr)) ? "\n" : "",
            console->command, text);
}

static void on_settled(void *ctx, const opcost_run_settled *s)
{
    (void)ctx;
    opcost_report_settled(stdout, s);
}

static void on_finished(void *ctx, const opcost_result *rows, size_t n,
                        const char *out_path, double seconds)
{
    const opcost_console *console = ctx;
    if (console->summarize)
        console->summarize(console->ctx, rows, n);
    printf("\n%zu rows written to %s (%.1f s)\n", n, out_path, seconds);
}

opcost_run_hooks opcost_console_hooks(opcost_console *console)
{
    return (opcost_run_hooks){console,    on_started, on_progress,
                              on_message, on_settled, on_finished};
}
