/* bench/tracers/nvtx_ranges.c through NVTX's own tool interface: with
 * NVTX_INJECTION64_PATH naming tests/c/nvtx_inject.c's library (ctest
 * sets it), the ranges of a small run reach the tool in the opcost
 * domain, levels as named categories, registered strings resolved to
 * their names; then the module's own check counts each kind of misuse
 * while keeping NVTX balanced. Usage: test_nvtx_ranges LOG (the file
 * $OPCOST_NVTX_LOG names). */
#include "c_samples.h"
#include "nvtx_ranges.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The log's lines from byte from on, after the tid column, joined with
 * '|'; returns where the log ends. */
static long read_log(const char *path, long from, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f)
        fseek(f, from, SEEK_SET);
    char line[512];
    size_t used = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *rest = strchr(line, '\t');
        used += (size_t)snprintf(out + used, used < len ? len - used : 0,
                                 "%s%s", used ? "|" : "", rest ? rest + 1 : "");
    }
    const long end = f ? ftell(f) : from;
    if (f)
        fclose(f);
    return end;
}

int main(int argc, char **argv)
{
    if (argc != 2 || !getenv("NVTX_INJECTION64_PATH")) {
        fprintf(stderr, "usage: NVTX_INJECTION64_PATH=TOOL OPCOST_NVTX_LOG=LOG "
                        "test_nvtx_ranges LOG\n");
        return 2;
    }
    remove(argv[1]); /* before the first NVTX call opens it */
    opcost_nvtx_push(OPCOST_NVTX_RUN, "run");
    opcost_nvtx_push(OPCOST_NVTX_DISTRIBUTION, "edges");
    opcost_nvtx_pushf(OPCOST_NVTX_SHAPE, "B=%d N=%d", 16, 4096);
    opcost_nvtx_push_path("kernel", "auto");
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "calibrate");
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "convert");
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "repetition");
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    opcost_nvtx_pop(OPCOST_NVTX_PATH);
    opcost_nvtx_push_path("kernel", "avx2");
    opcost_nvtx_pop(OPCOST_NVTX_PATH);
    opcost_nvtx_pop(OPCOST_NVTX_SHAPE);
    opcost_nvtx_pop(OPCOST_NVTX_DISTRIBUTION);
    opcost_nvtx_pop(OPCOST_NVTX_RUN);
    C_CHECK(opcost_nvtx_depth() == 0 && opcost_nvtx_mismatches() == 0);
    char log[4096];
    const long end = read_log(argv[1], 0, log, sizeof log);
    const char *want =
        "domain\topcost\topcost|category\topcost\t1\trun|"
        "category\topcost\t2\tdistribution|category\topcost\t3\tshape|"
        "category\topcost\t4\tpath|category\topcost\t5\tphase|"
        "push\topcost\t1\trun|push\topcost\t2\tedges|"
        "push\topcost\t3\tB=16 N=4096|push\topcost\t4\tkernel|"
        "push\topcost\t5\tcalibrate|pop\topcost|push\topcost\t5\tconvert|"
        "push\topcost\t5\trepetition|pop\topcost|pop\topcost|pop\topcost|"
        "push\topcost\t4\tkernel/avx2|pop\topcost|pop\topcost|pop\topcost|"
        "pop\topcost";
    C_EXPECT_STR(log, want, "the tool's log");

    /* misuse: each counted once, NVTX kept balanced */
    opcost_nvtx_pop(OPCOST_NVTX_PHASE); /* nothing open: not popped */
    C_CHECK(opcost_nvtx_mismatches() == 1);
    opcost_nvtx_push_path("kernel", NULL);
    opcost_nvtx_push(OPCOST_NVTX_RUN, "run"); /* run inside a path */
    C_CHECK(opcost_nvtx_mismatches() == 2 && opcost_nvtx_depth() == 2);
    opcost_nvtx_pop(OPCOST_NVTX_RUN);
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "verify");
    opcost_nvtx_pop(OPCOST_NVTX_PATH); /* closes the phase */
    C_CHECK(opcost_nvtx_mismatches() == 3 && opcost_nvtx_depth() == 1);
    opcost_nvtx_pop(OPCOST_NVTX_PATH); /* the path: no mismatch */
    C_CHECK(opcost_nvtx_mismatches() == 3 && opcost_nvtx_depth() == 0);
    read_log(argv[1], end, log, sizeof log);
    C_EXPECT_STR(log,
                 "push\topcost\t4\tkernel|push\topcost\t1\trun|pop\topcost|"
                 "push\topcost\t5\tverify|pop\topcost|pop\topcost",
                 "misuse keeps NVTX balanced");
    return c_report("test_nvtx_ranges");
}
