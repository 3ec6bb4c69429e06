#define _POSIX_C_SOURCE 200809L /* setenv */
/* The full DRAM bandwidth a machine showed in earlier runs: remembered
 * per thread count, the best of the last days recalled, older figures and
 * other machines' left out, a missing file read as none. */
#include "c_samples.h"
#include "c_tempdir.h"
#include "host_bandwidth.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(void)
{
    const char *dir = c_tempdir("opcost_test_host_bw");
    setenv("OPCOST_CACHE", dir, 1);
    C_EXPECT(opcost_host_bandwidth_recall(2) == 0, "nothing remembered yet");
    opcost_host_bandwidth_remember(2, 100.0);
    opcost_host_bandwidth_remember(2, 110.5);
    opcost_host_bandwidth_remember(2, 57.0); /* a run in the slow state */
    opcost_host_bandwidth_remember(1, 48.0);
    opcost_host_bandwidth_remember(2, -1); /* not a figure: not kept */
    C_EXPECT(opcost_host_bandwidth_recall(2) == 110.5, "2 threads: %g",
             opcost_host_bandwidth_recall(2));
    C_EXPECT(opcost_host_bandwidth_recall(1) == 48.0, "1 thread: %g",
             opcost_host_bandwidth_recall(1));
    C_EXPECT(opcost_host_bandwidth_recall(4) == 0, "4 threads: %g",
             opcost_host_bandwidth_recall(4));
    /* a figure older than the window, and another machine's, do not count */
    char path[4096];
    snprintf(path, sizeof path, "%s/host-bandwidth.csv", dir);
    FILE *f = fopen(path, "a");
    C_CHECK(f);
    fprintf(f, "another-machine,2,500.0,%lld\n", (long long)time(NULL));
    fclose(f);
    C_EXPECT(opcost_host_bandwidth_recall(2) == 110.5,
             "another machine's figure counted: %g",
             opcost_host_bandwidth_recall(2));
    char key[256] = "";
    f = fopen(path, "r");
    C_CHECK(f && fscanf(f, "%255[^,]", key) == 1);
    fclose(f);
    f = fopen(path, "a");
    C_CHECK(f);
    fprintf(f, "%s,2,400.0,%lld\n", key,
            (long long)time(NULL) - (OPCOST_HOST_BW_DAYS + 1) * 86400LL);
    fprintf(f, "garbage line\n");
    fclose(f);
    C_EXPECT(opcost_host_bandwidth_recall(2) == 110.5,
             "a figure past the window counted: %g",
             opcost_host_bandwidth_recall(2));
    return c_report("test_host_bandwidth");
}
