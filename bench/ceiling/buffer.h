/* The bench's large buffers: the points' inputs and outputs and the
 * ceiling probe's arrays, allocated alike so that the probe runs on the
 * pages the kernels it bounds run on. */
#ifndef OPCOST_BUFFER_H
#define OPCOST_BUFFER_H

#include <stddef.h>

/* 64-byte aligned; from 2 MiB on 2 MiB-aligned and backed by transparent
 * huge pages where the kernel offers them (madvise mode). free() it. NULL
 * when memory ran out. */
void *opcost_buffer_alloc(size_t bytes);

#endif
