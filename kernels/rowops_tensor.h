/* The one tensor descriptor that crosses every C boundary in rowops.
 *
 * A descriptor names memory; it never owns it. `data` points at element
 * [0, ..., 0] (any storage offset is already applied), sizes and strides are
 * counted in elements, and no layout is assumed: strides may be zero
 * (expand), negative-free but otherwise arbitrary (transposed, row stride
 * larger than the row, misaligned offsets). */
#ifndef ROWOPS_TENSOR_H
#define ROWOPS_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Tensors of higher rank are not describable; the eligibility function sends
 * them to the reference implementation. */
#define ROWOPS_MAX_RANK 8

typedef enum rowops_dtype {
    ROWOPS_F32 = 0,
    ROWOPS_F16 = 1,
    ROWOPS_BF16 = 2,
    ROWOPS_F64 = 3,
    ROWOPS_DTYPE_COUNT
} rowops_dtype;

typedef enum rowops_device {
    ROWOPS_DEVICE_CPU = 0,
    ROWOPS_DEVICE_CUDA = 1,
    ROWOPS_DEVICE_OTHER = 2
} rowops_device;

typedef struct rowops_tensor {
    void *data;
    rowops_dtype dtype;
    rowops_device device;
    int rank; /* may exceed ROWOPS_MAX_RANK; then sizes/strides are unset */
    int64_t sizes[ROWOPS_MAX_RANK];
    int64_t strides[ROWOPS_MAX_RANK];
} rowops_tensor;

size_t rowops_dtype_size(rowops_dtype dtype);
const char *rowops_dtype_name(rowops_dtype dtype);

/* Number of rows: the product of every size but the last (1 for rank 1). */
int64_t rowops_tensor_rows(const rowops_tensor *t);

/* Element offset of row `row` (row-major over the leading dimensions). */
int64_t rowops_tensor_row_offset(const rowops_tensor *t, int64_t row);

/* Address of row `row`'s first element. */
void *rowops_tensor_row_ptr(const rowops_tensor *t, int64_t row);

/* Element offset of linear index `index` over all `ndim` leading dims. */
int64_t rowops_index_offset(const int64_t *sizes, const int64_t *strides,
                            int ndim, int64_t index);

/* Address of t's element at linear index `index` over all its dimensions
 * (a row's rstd: rstd has the leading dimensions of x). */
void *rowops_tensor_index_ptr(const rowops_tensor *t, int64_t index);

#ifdef __cplusplus
}
#endif

#endif
