#include "rowops_tensor.h"

size_t rowops_dtype_size(rowops_dtype dtype)
{
    switch (dtype) {
    case ROWOPS_F32: return 4;
    case ROWOPS_F16: return 2;
    case ROWOPS_BF16: return 2;
    case ROWOPS_F64: return 8;
    default: return 0;
    }
}

const char *rowops_dtype_name(rowops_dtype dtype)
{
    switch (dtype) {
    case ROWOPS_F32: return "float32";
    case ROWOPS_F16: return "float16";
    case ROWOPS_BF16: return "bfloat16";
    case ROWOPS_F64: return "float64";
    default: return "unknown";
    }
}

int64_t rowops_tensor_rows(const rowops_tensor *t)
{
    int64_t rows = 1;
    for (int d = 0; d + 1 < t->rank && d < ROWOPS_MAX_RANK; ++d)
        rows *= t->sizes[d];
    return rows;
}

int64_t rowops_index_offset(const int64_t *sizes, const int64_t *strides,
                            int ndim, int64_t index)
{
    int64_t offset = 0;
    for (int d = ndim - 1; d >= 0; --d) {
        const int64_t size = sizes[d];
        offset += (index % size) * strides[d];
        index /= size;
    }
    return offset;
}

int64_t rowops_tensor_row_offset(const rowops_tensor *t, int64_t row)
{
    return rowops_index_offset(t->sizes, t->strides, t->rank - 1, row);
}

void *rowops_tensor_row_ptr(const rowops_tensor *t, int64_t row)
{
    return (char *)t->data + rowops_tensor_row_offset(t, row) *
                                 (int64_t)rowops_dtype_size(t->dtype);
}

void *rowops_tensor_index_ptr(const rowops_tensor *t, int64_t index)
{
    return (char *)t->data +
           rowops_index_offset(t->sizes, t->strides, t->rank, index) *
               (int64_t)rowops_dtype_size(t->dtype);
}
