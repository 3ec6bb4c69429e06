/* The build's code on 2 MiB pages (bench/measure/code_pages.h): this
 * program's read-only segments moved where the kernel gives transparent
 * huge pages, its code still running, the same bytes at the same
 * addresses; a second call moves nothing again; re-placed onto other
 * physical pages, the code still runs; a library linked with
 * 4 KiB alignment refused by name and left running; a directory that does
 * not exist refused. Where the kernel has no transparent huge pages the
 * move must say so, and the test says SKIP for what it could not check. */
#define _GNU_SOURCE
#include "c_samples.h"
#include "code_pages.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef CODE_PAGES_LIB
#error "CODE_PAGES_LIB: the 4 KiB-aligned library's path"
#endif

static int thp_possible(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    return strstr(line, "[always]") || strstr(line, "[madvise]");
}

/* The mapping holding p: anonymous (no file behind it), and its huge
 * pages in bytes. */
static void mapping_of(uintptr_t p, int *anonymous, size_t *huge)
{
    *anonymous = 0;
    *huge = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return;
    char line[4200];
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        int at = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %n", &a, &b,
                   &at) >= 2 &&
            at > 0) {
            if (in)
                break;
            in = p >= a && p < b;
            if (in)
                *anonymous = line[at] == '\n' || line[at] == '\0';
        } else if (in) {
            size_t kb;
            if (sscanf(line, "AnonHugePages: %zu kB", &kb) == 1)
                *huge = kb * 1024;
        }
    }
    fclose(f);
}

/* The physical frame of the page holding p; 0 where pagemap hides it. */
static uint64_t frame_of(uintptr_t p)
{
    FILE *f = fopen("/proc/self/pagemap", "rb");
    uint64_t e = 0;
    if (f) {
        if (fseek(f, (long)(p / 4096 * 8), SEEK_SET) != 0 ||
            fread(&e, sizeof e, 1, f) != 1)
            e = 0;
        fclose(f);
    }
    return (e >> 63) ? e & ((1ull << 55) - 1) : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static int sum_to(int n)
{
    int s = 0;
    for (int i = 1; i <= n; ++i)
        s += i;
    return s;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

int main(void)
{
    int (*volatile fn)(int) = sum_to;
    const uintptr_t code = (uintptr_t)fn;
    unsigned char before[64];
    memcpy(before, (const void *)code, sizeof before);

    opcost_code_pages cp;
    const int rc = opcost_code_to_huge_pages(NULL, &cp);
    C_EXPECT(cp.objects == 1,
             "objects %d: only this program is in its "
             "directory before the library is opened",
             cp.objects);
    C_EXPECT(cp.segments >= 2, "segments %d: headers, code, read-only data",
             cp.segments);
    C_EXPECT(fn(100) == 5050, "the code runs after the move");
    C_EXPECT(memcmp(before, (const void *)code, sizeof before) == 0,
             "the same bytes at the same address");
    int v[5] = {5, 3, 4, 1, 2};
    qsort(v, 5, sizeof *v, cmp_int); /* a call back into moved code */
    C_EXPECT(v[0] == 1 && v[4] == 5, "a callback into moved code runs");
    int anonymous;
    size_t huge;
    mapping_of(code, &anonymous, &huge);
    if (thp_possible() && rc == 0) {
        C_EXPECT(cp.moved == cp.segments && cp.bytes > 0 && !cp.why[0],
                 "moved %d of %d (%s)", cp.moved, cp.segments, cp.why);
        C_EXPECT(anonymous && huge >= ((size_t)2 << 20),
                 "the code's mapping: anonymous %d, %zu bytes on huge pages",
                 anonymous, huge);
        opcost_code_pages again;
        C_EXPECT(opcost_code_to_huge_pages(NULL, &again) == 0 &&
                     again.moved == cp.moved && again.bytes == cp.bytes,
                 "a second call counts what the first moved: %d, %s",
                 again.moved, again.why);
        C_EXPECT(fn(10) == 55, "the code runs after the second call");
        /* placed anew: the same bytes, still on huge pages, and (where
         * pagemap shows frames: root) other physical pages */
        uint64_t rng = 42, frames[9];
        int distinct = 0, shown = 0;
        frames[0] = frame_of(code);
        const double t0 = now_s();
        for (int k = 1; k < 9; ++k) {
            C_EXPECT(opcost_code_replace(&rng) == 1,
                     "re-placement %d moves the one code segment", k);
            C_EXPECT(fn(100) == 5050 &&
                         memcmp(before, (const void *)code, sizeof before) == 0,
                     "the code runs, unchanged, after re-placement %d", k);
            frames[k] = frame_of(code);
            shown += frames[k] != 0;
            int seen = 0;
            for (int j = 0; j < k; ++j)
                seen |= frames[j] == frames[k];
            distinct += !seen;
        }
        printf("8 re-placements of the code: %.2f ms each\n",
               (now_s() - t0) / 8 * 1e3);
        mapping_of(code, &anonymous, &huge);
        C_EXPECT(anonymous && huge >= ((size_t)2 << 20),
                 "re-placed code on huge pages: %zu bytes", huge);
        if (shown == 8)
            C_EXPECT(distinct >= 2, "8 re-placements used %d other frames",
                     distinct);
        else
            printf("SKIP the re-placed frames: /proc/self/pagemap shows no "
                   "frame numbers to this user\n");
    } else if (thp_possible()) {
        /* THP on, but none free: the move must say why, code untouched */
        C_EXPECT(cp.why[0] != '\0', "a refusal names its reason");
        C_EXPECT(!anonymous, "code left in its file when refused");
        printf("SKIP the moved code's mapping: %s\n", cp.why);
    } else {
        C_EXPECT(rc == -1 && strstr(cp.why, "4 KiB pages") != NULL,
                 "no THP: refused with the reason, got %d (%s)", rc, cp.why);
        C_EXPECT(!anonymous, "code left in its file when refused");
        printf("SKIP the moved code's mapping: the kernel has no "
               "transparent huge pages\n");
    }

    /* a library of the same directory linked with 4 KiB alignment */
    void *lib = dlopen(CODE_PAGES_LIB, RTLD_NOW);
    C_EXPECT(lib != NULL, "dlopen %s: %s", CODE_PAGES_LIB, dlerror());
    if (lib) {
        int (*answer)(int) = (int (*)(int))dlsym(lib, "code_pages_lib_answer");
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", CODE_PAGES_LIB);
        *strrchr(dir, '/') = '\0';
        opcost_code_pages lc;
        C_EXPECT(opcost_code_to_huge_pages(dir, &lc) == -1,
                 "a 4 KiB-aligned library is not all on huge pages");
        C_EXPECT(lc.objects == 2, "objects %d: the program and the library",
                 lc.objects);
        C_EXPECT(strstr(lc.why, "libcode_pages_4k.so: ") == lc.why,
                 "the refusal names the library: %s", lc.why);
        C_EXPECT(answer && answer(7) == 42, "the library still runs");
        dlclose(lib);
    }

    opcost_code_pages none;
    C_EXPECT(opcost_code_to_huge_pages("/no/such/dir", &none) == -1 &&
                 strstr(none.why, "/no/such/dir") != NULL,
             "a missing directory is named: %s", none.why);
    return c_report("test_code_pages");
}
