/* The paired probe's device copy, one launch for one or two pairs
 * (probe_copy.cu). */
#ifndef OPCOST_PROBE_COPY_H
#define OPCOST_PROBE_COPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies bytes from src[k] to dst[k] for k < pairs (1 or 2) on stream (a
 * cudaStream_t). bytes a multiple of 8 and every pointer 16-byte aligned,
 * else cudaErrorInvalidValue; returns the launch's cudaError_t. */
int opcost_cuda_copy_pairs(void *const dst[2], const void *const src[2],
                           int pairs, size_t bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif
