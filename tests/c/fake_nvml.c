/* A stand-in for the driver's libnvidia-ml.so.1 in test_nvml_clock: one
 * device (index 0) at a fixed SM clock with fixed clock event reasons;
 * fake_nvml_fail_init makes nvmlInit_v2 fail as without a driver. */
#include <stddef.h>

static int fail_init, initialized;

void fake_nvml_fail_init(int fail)
{
    fail_init = fail;
}
int fake_nvml_initialized(void)
{
    return initialized;
}

const char *nvmlErrorString(int r)
{
    return r == 2 ? "Invalid Argument" : r == 9 ? "Driver Not Loaded" : "?";
}

int nvmlInit_v2(void)
{
    if (fail_init)
        return 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
    ++initialized;
    return 0;
}

int nvmlShutdown(void)
{
    --initialized;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **dev)
{
    static int device;
    if (index != 0)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = &device;
    return 0;
}

int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
    (void)dev;
    *mhz = type == 1 ? 1755 : 0; /* NVML_CLOCK_SM */
    return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *r)
{
    (void)dev;
    *r = 0x4 | 0x20; /* sw_power_cap, sw_thermal */
    return 0;
}
