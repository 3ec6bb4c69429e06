/* Launch configuration of the CUDA kernels, as plain C: which kernel
 * instantiation a call runs, its block and grid, its shared memory. No CUDA
 * header is needed, so the choice is unit-tested on any machine
 * (tests/c/test_launch_config.c) and the resource test
 * (tests/c/test_cuda_resources.c) checks every block size it can return
 * against what ptxas reported for that kernel.
 *
 * The kernels (kernels/cuda/\*.cu) are extern "C" functions whose names this
 * file spells (rowops_cuda_kernel_name), each compiled with
 * __launch_bounds__ equal to the block size returned here. */
#ifndef ROWOPS_CUDA_LAUNCH_CONFIG_H
#define ROWOPS_CUDA_LAUNCH_CONFIG_H

#include "../rowops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Block sizes; each is the __launch_bounds__ of its kernels. */
#define ROWOPS_CUDA_FAST_THREADS 512
#define ROWOPS_CUDA_TILE_THREADS 256
#define ROWOPS_CUDA_FINISH_THREADS 256
/* Fast kernel: each thread holds, per slab, ITEMS vectors of each tensor:
 * 32 bytes (two 16-byte vectors), at most 4 vectors when they are
 * narrower (each vector is an address to keep). */
#define ROWOPS_CUDA_SLAB_BYTES 32
#define ROWOPS_CUDA_MAX_ITEMS 4
#define ROWOPS_CUDA_ITEMS(elem_size, vec)                                      \
    (ROWOPS_CUDA_SLAB_BYTES / ((elem_size) * (vec)) > ROWOPS_CUDA_MAX_ITEMS    \
         ? ROWOPS_CUDA_MAX_ITEMS                                               \
         : ROWOPS_CUDA_SLAB_BYTES / ((elem_size) * (vec)))
/* Tile kernels (strided forward, backward): elements per tile, so each of
 * the 256 threads moves 4 per tensor per tile; a tile is TR rows by
 * 1024 / TR columns, TR a power of two in [1, 32]. */
#define ROWOPS_CUDA_TILE_ELEMS 1024
#define ROWOPS_CUDA_TILE_MAX_ROWS 32

typedef enum rowops_cuda_kernel_kind {
    ROWOPS_CUDA_FAST_KERNEL = 0,    /* forward, row on chip */
    ROWOPS_CUDA_STRIDED_KERNEL = 1, /* forward, any strides, two passes */
    ROWOPS_CUDA_BACKWARD_KERNEL = 2,
    ROWOPS_CUDA_DWEIGHT_KERNEL = 3 /* stage 2 of the weight gradient */
} rowops_cuda_kernel_kind;

/* What the occupancy arithmetic needs to know about a device (from
 * cudaDeviceProp on the GPU; the values of sm_80/sm_90 in the tests). */
typedef struct rowops_cuda_device {
    int sm_count;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int regs_per_sm;
    int smem_per_sm;          /* bytes of shared memory per multiprocessor */
    int smem_per_block_optin; /* most a block can have after opting in */
} rowops_cuda_device;

/* sm_80 (A100) and sm_90 (H100/H200) limits with a given SM count. */
rowops_cuda_device rowops_cuda_device_sm80(int sm_count);
rowops_cuda_device rowops_cuda_device_sm90(int sm_count);

/* A kernel's resources as ptxas (or cudaFuncGetAttributes) reports them. */
typedef struct rowops_cuda_kernel_attr {
    int regs;        /* registers per thread */
    int static_smem; /* bytes */
} rowops_cuda_kernel_attr;

typedef struct rowops_cuda_launch {
    rowops_cuda_kernel_kind kind;
    unsigned threads; /* block size: equals the kernel's __launch_bounds__ */
    unsigned grid;    /* blocks (the kernels loop over the rest) */
    int group;        /* fast: threads per row (a power of two <= threads);
                         tile kernels: rows per tile (TR) */
    int slabs;        /* fast: passes over the row per thread (1: row held in
                         registers; > 1: h staged in shared memory) */
    int vec;          /* fast: elements per vector access */
    size_t smem;      /* dynamic shared memory bytes */
    int64_t rows_per_block; /* rows one block handles per iteration */
} rowops_cuda_launch;

/* Collapses leading dimensions for row addressing: drops size-1 dims and
 * merges d into d + 1 where stride[d] == stride[d + 1] * size[d + 1], so
 * that the row offset of a row-major (or row-sliced) tensor is one
 * multiply. Returns the new count (>= 1; a single size-1 dim of stride 0
 * when nothing is left). Offsets are unchanged for every row index. */
int rowops_collapse_rows(const int64_t *sizes, const int64_t *strides, int ndim,
                         int64_t *out_sizes, int64_t *out_strides);

/* The fast kernel's vector width in elements for a call (FlashInfer's gcd
 * rule): the largest power of two v <= 16 bytes / sizeof(dtype) dividing N,
 * every data pointer (in elements; the weight's to min(16, v * its size)
 * bytes) and every leading stride of more than one row. 1 when only
 * element alignment holds; 0 when some pointer is not even aligned to its
 * element (never with torch tensors). Reads descriptors only. */
int rowops_cuda_vector_elems(const rowops_call *call);

/* Blocks of `threads` with `smem` dynamic bytes that fit one SM at once
 * (0: the block cannot launch). */
int rowops_cuda_blocks_per_sm(const rowops_cuda_device *dev,
                              rowops_cuda_kernel_attr attr, unsigned threads,
                              size_t smem);

/* Forward fast kernel for op over `rows` rows of N elements of dtype with
 * vector width vec (rowops_cuda_vector_elems). */
rowops_cuda_launch rowops_cuda_fast_launch(const rowops_cuda_device *dev,
                                           rowops_cuda_kernel_attr attr,
                                           rowops_dtype dtype, int64_t n,
                                           int vec, int64_t rows);

/* Tile kernels (strided forward, backward): rows_fast says whether some
 * input is read along rows (a transposed view), which takes 32-row tiles. */
rowops_cuda_launch rowops_cuda_tile_launch(const rowops_cuda_device *dev,
                                           rowops_cuda_kernel_attr attr,
                                           rowops_cuda_kernel_kind kind,
                                           int64_t n, int64_t rows,
                                           int rows_fast);

/* Stage 2 of the weight gradient: one thread per column. */
rowops_cuda_launch rowops_cuda_dweight_launch(int64_t n);

/* The kernel's symbol: rowops_fast_<op>_<dtype>[_w<wdtype>]_v<vec bytes>,
 * rowops_strided_<op>_<dtype>[_w<wdtype>],
 * rowops_backward_<op>_<dtype>[_w<wdtype>], rowops_dweight_<acc>_w<wdtype>
 * (op: rms or fused; the weight dtype for the fused op only; vec ignored
 * but by the fast kernel). Returns buf. */
const char *rowops_cuda_kernel_name(rowops_cuda_kernel_kind kind, rowops_op op,
                                    rowops_dtype dtype,
                                    rowops_dtype weight_dtype, int vec,
                                    char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
