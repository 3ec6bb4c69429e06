/* A GPU's SM clock and why it is not higher (NVML's clock event, formerly
 * throttle, reasons), recorded per point of a GPU run. NVML is the
 * driver's libnvidia-ml.so.1, loaded at run time: without a driver every
 * call fails with one message,
 *   nvml unavailable: <stage>: <message>
 * and nothing else happens. No NVML header is needed to build. */
#ifndef OPCOST_NVML_CLOCK_H
#define OPCOST_NVML_CLOCK_H

#include <stddef.h>
#include <stdint.h>

typedef struct opcost_nvml opcost_nvml;

typedef struct opcost_gpu_clock {
    unsigned sm_mhz;
    int reasons_known; /* 0: the device does not report reasons */
    uint64_t reasons;  /* NVML's bitmask (opcost_nvml_reasons_text) */
} opcost_gpu_clock;

/* Loads library (NULL: libnvidia-ml.so.1) and initializes NVML. 0, or -1
 * with err set and nothing left loaded. */
int opcost_nvml_open(opcost_nvml **n, const char *library, char *err,
                     size_t len);

/* The clock of device index (NVML's order, 0 first). 0, or -1 with err
 * set. */
int opcost_nvml_read(opcost_nvml *n, unsigned index, opcost_gpu_clock *c,
                     char *err, size_t len);

/* Shuts NVML down. NULL: no-op. */
void opcost_nvml_close(opcost_nvml *n);

/* The reasons as short names joined with '+', in bit order: none,
 * gpu_idle, app_clocks, sw_power_cap, hw_slowdown, sync_boost,
 * sw_thermal, hw_thermal, hw_power_brake, display_clocks; bits NVML may
 * add later as one 0x... term. snprintf's contract: returns the length
 * of the whole text, writes at most len bytes. */
int opcost_nvml_reasons_text(uint64_t reasons, char *buf, size_t len);

#endif
