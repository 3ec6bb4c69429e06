/* The NVML clock reader: the reasons bitmask as text; the driver's NVML
 * on this machine (absent: one clean message; present, on a GPU machine:
 * device 0 reports a clock); and a fake NVML (tests/c/fake_nvml.c) for
 * the reading path and its failures. Usage: test_nvml_clock FAKE_LIBRARY */
#include "c_samples.h"
#include "nvml_clock.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void text(uint64_t reasons, const char *want)
{
    char buf[256];
    const int n = opcost_nvml_reasons_text(reasons, buf, sizeof buf);
    C_EXPECT_STR(buf, want, "reasons %#llx", (unsigned long long)reasons);
    C_EXPECT(n == (int)strlen(want), "%#llx: length %d",
             (unsigned long long)reasons, n);
}

static void reasons(void)
{
    text(0, "none");
    text(0x1, "gpu_idle");
    text(0x4, "sw_power_cap");
    text(0x8 | 0x4 | 0x20, "sw_power_cap+hw_slowdown+sw_thermal");
    text(0x1ff, "gpu_idle+app_clocks+sw_power_cap+hw_slowdown+sync_boost+"
                "sw_thermal+hw_thermal+hw_power_brake+display_clocks");
    text(0x1000, "0x1000");
    text(0x1 | 0x3000, "gpu_idle+0x3000");
    /* too small a buffer: cut, terminated, the full length returned */
    char small[5];
    C_CHECK(opcost_nvml_reasons_text(0x4 | 0x8, small, sizeof small) == 24);
    C_EXPECT_STR(small, "sw_p", "cut");
    C_CHECK(opcost_nvml_reasons_text(0x4, NULL, 0) == 12);
}

static void driver(void)
{
    opcost_nvml *n = (opcost_nvml *)1;
    char err[512] = "";
    if (opcost_nvml_open(&n, NULL, err, sizeof err) == 0) {
        /* a GPU machine: device 0 must answer */
        opcost_gpu_clock c;
        const int rc = opcost_nvml_read(n, 0, &c, err, sizeof err);
        char r[256];
        opcost_nvml_reasons_text(c.reasons, r, sizeof r);
        printf("NVML: device 0 at %u MHz, reasons %s\n", c.sm_mhz,
               c.reasons_known ? r : "(not reported)");
        C_EXPECT(rc == 0 && c.sm_mhz > 0, "device 0: %s", err);
        opcost_nvml_close(n);
        return;
    }
    printf("%s\n", err);
    C_CHECK(n == NULL);
    const char *want = "nvml unavailable: load libnvidia-ml.so.1: ";
    C_EXPECT(strncmp(err, want, strlen(want)) == 0 &&
                 strlen(err) > strlen(want),
             "no driver: '%s'", err);
    opcost_nvml_close(NULL);
}

static void fake(const char *lib)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    void (*fail_init)(int) = NULL;
    int (*initialized)(void) = NULL;
    void *p = h ? dlsym(h, "fake_nvml_fail_init") : NULL;
    memcpy(&fail_init, &p, sizeof p);
    p = h ? dlsym(h, "fake_nvml_initialized") : NULL;
    memcpy(&initialized, &p, sizeof p);
    C_EXPECT(fail_init && initialized, "cannot use %s", lib);
    if (!fail_init || !initialized)
        return;
    opcost_nvml *n = NULL;
    char err[512] = "";
    C_EXPECT(opcost_nvml_open(&n, lib, err, sizeof err) == 0, "open: %s", err);
    if (!n)
        return;
    opcost_gpu_clock c;
    C_EXPECT(opcost_nvml_read(n, 0, &c, err, sizeof err) == 0, "read: %s", err);
    char r[256];
    opcost_nvml_reasons_text(c.reasons, r, sizeof r);
    C_EXPECT(c.sm_mhz == 1755 && c.reasons_known, "%u MHz, known %d", c.sm_mhz,
             c.reasons_known);
    C_EXPECT_STR(r, "sw_power_cap+sw_thermal", "fake reasons");
    C_CHECK(opcost_nvml_read(n, 3, &c, err, sizeof err) == -1);
    C_EXPECT_STR(err, "nvml unavailable: device 3: Invalid Argument",
                 "no device 3");
    opcost_nvml_close(n);
    C_CHECK(initialized() == 0); /* shut down */

    fail_init(1);
    n = (opcost_nvml *)1;
    C_CHECK(opcost_nvml_open(&n, lib, err, sizeof err) == -1 && n == NULL);
    C_EXPECT_STR(err, "nvml unavailable: nvmlInit_v2: Driver Not Loaded",
                 "init fails");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_nvml_clock FAKE_LIBRARY\n");
        return 2;
    }
    reasons();
    driver();
    fake(argv[1]);
    return c_report("test_nvml_clock");
}
