/* The CUPTI tracer on a machine without a usable driver (this one): open
 * fails with exactly one message, cupti unavailable: <stage>: <CUPTI's
 * message>, the stage one the tracer names, no tracer returned; a second
 * open says the same (nothing half-done in between); the library stays
 * usable for the buffer walk; close(NULL) is harmless. Where CUPTI does
 * open (a GPU machine) there is nothing to test here: exit 77, skipped. */
#include "c_samples.h"
#include "cupti_tracer.h"

#include <cupti.h>
#include <stdio.h>
#include <string.h>

/* "cupti unavailable: <stage>: <message>" with a stage the tracer has. */
static void expect_form(const char *err)
{
    static const char *const stages[] = {
        "load ", "cuptiGetVersion: ", "register callbacks: ", "enable ", NULL};
    const char *prefix = "cupti unavailable: ";
    C_EXPECT(strncmp(err, prefix, strlen(prefix)) == 0, "prefix: '%s'", err);
    const char *stage = err + strlen(prefix);
    int known = 0;
    for (int i = 0; stages[i]; ++i)
        known |= strncmp(stage, stages[i], strlen(stages[i])) == 0;
    C_EXPECT(known, "unknown stage: '%s'", err);
    const char *sep = strstr(stage, ": ");
    C_EXPECT(sep && sep[2] != '\0', "no message: '%s'", err);
    if (strncmp(stage, "enable ", 7) == 0 || strncmp(stage, "register", 8) == 0)
        C_EXPECT(sep && strncmp(sep + 2, "CUPTI_ERROR_", 12) == 0,
                 "not CUPTI's message: '%s'", err);
}

int main(void)
{
    opcost_cupti *t = (opcost_cupti *)1;
    char first[512] = "", second[512] = "";
    if (opcost_cupti_open(&t, NULL, first, sizeof first) == 0) {
        char what[256];
        opcost_cupti_describe(t, what, sizeof what);
        printf("CUPTI opens here (%s): the unavailable path is not "
               "reachable\n",
               what);
        opcost_cupti_close(t);
        return 77;
    }
    printf("%s\n", first);
    C_CHECK(t == NULL);
    expect_form(first);
    t = (opcost_cupti *)1;
    C_CHECK(opcost_cupti_open(&t, NULL, second, sizeof second) == -1);
    C_CHECK(t == NULL);
    C_EXPECT_STR(second, first, "second open");
    /* refusing to trace must not break reading: walk one record */
    if (strncmp(first, "cupti unavailable: load ", 24) != 0) {
        _Alignas(8) uint8_t buf[sizeof(CUpti_ActivityAPI)] = {0};
        CUpti_ActivityAPI r = {.kind = CUPTI_ACTIVITY_KIND_RUNTIME,
                               .cbid =
                                   CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                               .start = 10,
                               .end = 20};
        memcpy(buf, &r, sizeof r);
        opcost_event_log log = {0};
        opcost_cupti_calls calls = {0};
        char err[512] = "";
        C_EXPECT(opcost_cupti_walk(buf, sizeof buf, 0, &log, &calls, err,
                                   sizeof err) == 0 &&
                     log.n == 1 && log.ev[0].kind == OPCOST_EVENT_ALLOCATION,
                 "walk after a failed open: %s", err);
        opcost_event_log_free(&log);
        opcost_cupti_calls_free(&calls);
    }
    opcost_cupti_close(NULL);
    return c_report("test_cupti_unavailable");
}
