/* madvise(MADV_HUGEPAGE) is Linux-specific: beyond _POSIX_C_SOURCE */
#define _DEFAULT_SOURCE
#include "buffer.h"

#include <stdlib.h>
#include <sys/mman.h>

#define ALIGN 64

/* With 4 KiB pages the physical frames, and with them the cache sets a
 * buffer maps to, differ from process to process, a difference between
 * runs that repetitions within one run never see; and the probe on 4 KiB
 * pages lost to kernels on huge pages (rows bfloat16 streamed, 2 threads
 * on the Zen 4 host of 2026-12-01: copy_nt 45-49 GB/s against the
 * kernels' 50-55). */
void *opcost_buffer_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    void *p = NULL;
    if (bytes < huge)
        return aligned_alloc(ALIGN, (bytes + ALIGN - 1) / ALIGN * ALIGN);
    if (posix_memalign(&p, huge, (bytes + huge - 1) / huge * huge))
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
    return p;
}
