/* Cache sizes the kernels and the eligibility function plan with. */
#ifndef ROWOPS_CPU_CACHE_H
#define ROWOPS_CPU_CACHE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROWOPS_LLC_FALLBACK_BYTES ((size_t)32 << 20)

/* Bytes of the last-level cache of cpu0, and where the figure came from
 * into source (may be NULL): sysfs, else sysconf, else the fallback. */
size_t rowops_cpu_llc_bytes(char *source, size_t len);

/* Bytes of cpu0's data or unified cache of one level (1, 2, ...) from
 * sysfs; 0 when sysfs does not say. */
size_t rowops_cpu_cache_level_bytes(int level);

/* rowops_cpu_llc_bytes, detected once per process (the kernels' hot
 * path). */
size_t rowops_cpu_llc_bytes_cached(void);

#ifdef __cplusplus
}
#endif

#endif
