/* NVML clock reader (nvml_clock.h). NVML's C ABI is stable: the few
 * types and values used are declared here, as in nvml.h. */
#include "nvml_clock.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SONAME "libnvidia-ml.so.1"
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_CLOCK_SM 1

typedef int nvml_return;
typedef struct nvml_device *nvml_device;

struct opcost_nvml {
    void *handle;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*device_by_index)(unsigned, nvml_device *);
    nvml_return (*clock_info)(nvml_device, int, unsigned *);
    nvml_return (*reasons)(nvml_device, unsigned long long *);
};

/* nvml.h's nvmlClocksEventReason* (ThrottleReason* before CUDA 12.2). */
static const struct {
    uint64_t bit;
    const char *name;
} reason_names[] = {
    {0x1, "gpu_idle"},    {0x2, "app_clocks"},      {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"}, {0x10, "sync_boost"},     {0x20, "sw_thermal"},
    {0x40, "hw_thermal"}, {0x80, "hw_power_brake"}, {0x100, "display_clocks"},
};

int opcost_nvml_reasons_text(uint64_t reasons, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (reasons == 0)
        return snprintf(buf, len, "none");
    size_t n = 0; /* the whole text's length, written or not */
    uint64_t rest = reasons;
    for (size_t i = 0; i < sizeof reason_names / sizeof reason_names[0]; ++i) {
        if (!(reasons & reason_names[i].bit))
            continue;
        rest &= ~reason_names[i].bit;
        const int w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
                               "%s%s", n ? "+" : "", reason_names[i].name);
        n += (size_t)w;
    }
    if (rest)
        n += (size_t)snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
                              "%s%#" PRIx64, n ? "+" : "", rest);
    return (int)n;
}

static const char *message(const opcost_nvml *n, nvml_return r)
{
    const char *s = n->error_string ? n->error_string(r) : NULL;
    return s ? s : "unknown NVML error";
}

static int load_sym(opcost_nvml *n, void *field, size_t size, const char *sym,
                    char *err, size_t len)
{
    void *p = dlsym(n->handle, sym);
    if (!p) {
        snprintf(err, len, "nvml unavailable: load %s: symbol not found", sym);
        return -1;
    }
    memcpy(field, &p, size); /* as POSIX dlsym intends */
    return 0;
}

/* The library stays loaded: a driver library may keep threads. */
static void unload(opcost_nvml *n)
{
    free(n);
}

int opcost_nvml_open(opcost_nvml **out, const char *library, char *err,
                     size_t len)
{
    *out = NULL;
    opcost_nvml *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(err, len, "nvml unavailable: open: out of memory");
        return -1;
    }
    const char *name = library ? library : NVML_SONAME;
    n->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!n->handle) {
        const char *why = dlerror();
        snprintf(err, len, "nvml unavailable: load %s: %s", name,
                 why ? why : "cannot load");
        unload(n);
        return -1;
    }
#define SYM(field, sym)                                                        \
    if (load_sym(n, &n->field, sizeof n->field, sym, err, len)) {              \
        unload(n);                                                             \
        return -1;                                                             \
    }
    SYM(error_string, "nvmlErrorString")
    SYM(init, "nvmlInit_v2")
    SYM(shutdown, "nvmlShutdown")
    SYM(device_by_index, "nvmlDeviceGetHandleByIndex_v2")
    SYM(clock_info, "nvmlDeviceGetClockInfo")
#undef SYM
    /* renamed in NVML 12.2; drivers keep the old name too */
    void *p = dlsym(n->handle, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!p)
        p = dlsym(n->handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
    memcpy(&n->reasons, &p, sizeof p);
    const nvml_return r = n->init();
    if (r != NVML_SUCCESS) {
        snprintf(err, len, "nvml unavailable: nvmlInit_v2: %s", message(n, r));
        unload(n);
        return -1;
    }
    *out = n;
    return 0;
}

int opcost_nvml_read(opcost_nvml *n, unsigned index, opcost_gpu_clock *c,
                     char *err, size_t len)
{
    memset(c, 0, sizeof *c);
    nvml_device dev;
    nvml_return r = n->device_by_index(index, &dev);
    if (r != NVML_SUCCESS) {
        snprintf(err, len, "nvml unavailable: device %u: %s", index,
                 message(n, r));
        return -1;
    }
    r = n->clock_info(dev, NVML_CLOCK_SM, &c->sm_mhz);
    if (r != NVML_SUCCESS) {
        snprintf(err, len, "nvml unavailable: SM clock of device %u: %s", index,
                 message(n, r));
        return -1;
    }
    unsigned long long mask = 0;
    r = n->reasons ? n->reasons(dev, &mask) : NVML_ERROR_NOT_SUPPORTED;
    if (r == NVML_SUCCESS) {
        c->reasons_known = 1;
        c->reasons = mask;
    } else if (r != NVML_ERROR_NOT_SUPPORTED) {
        snprintf(err, len,
                 "nvml unavailable: clock event reasons of device %u: %s",
                 index, message(n, r));
        return -1;
    }
    return 0;
}

void opcost_nvml_close(opcost_nvml *n)
{
    if (!n)
        return;
    n->shutdown();
    unload(n);
}
