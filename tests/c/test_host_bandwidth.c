#define _POSIX_C_SOURCE 200809L /* setenv */
/* The full DRAM bandwidth a machine showed in earlier runs: remembered
 * per thread count, the best of the last days recalled, older figures and
 * other machines' left out, a missing file read as none. */
#include "c_samples.h"
#include "c_tempdir.h"
#include "host_bandwidth.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
    /* hostile files at the path: a link to /dev/zero, a directory; a
     * recall reads none of them as a figure, a remember neither hangs
     * nor writes through the link */
    C_CHECK(remove(path) == 0 && symlink("/dev/zero", path) == 0);
    C_EXPECT(opcost_host_bandwidth_recall(2) == 0, "/dev/zero read as %g",
             opcost_host_bandwidth_recall(2));
    opcost_host_bandwidth_remember(2, 100.0);
    struct stat st;
    C_EXPECT(lstat(path, &st) == 0 && S_ISLNK(st.st_mode),
             "the link to /dev/zero was replaced or written through");
    C_CHECK(remove(path) == 0 && mkdir(path, 0755) == 0);
    C_EXPECT(opcost_host_bandwidth_recall(2) == 0, "a directory read as %g",
             opcost_host_bandwidth_recall(2));
    opcost_host_bandwidth_remember(2, 100.0);
    C_CHECK(rmdir(path) == 0);
    /* quotes, commas and a long line: only this machine's own lines count */
    f = fopen(path, "w");
    C_CHECK(f);
    fprintf(f, "\"%s\",2,900,%lld\n%s,2,\"950\",%lld\n", key,
            (long long)time(NULL), key, (long long)time(NULL));
    for (int i = 0; i < 1000; ++i)
        fputc('x', f);
    fprintf(f, ",2,990,%lld\n%s,2,77.5,%lld\n", (long long)time(NULL), key,
            (long long)time(NULL));
    fclose(f);
    C_EXPECT(opcost_host_bandwidth_recall(2) == 77.5,
             "quoted, malformed or overlong lines counted: %g",
             opcost_host_bandwidth_recall(2));
    return c_report("test_host_bandwidth");
}
