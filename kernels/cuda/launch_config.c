/* Launch configuration of the CUDA kernels (see launch_config.h). */
#include "launch_config.h"

#include <stdio.h>

rowops_cuda_device rowops_cuda_device_sm80(int sm_count)
{
    rowops_cuda_device d = {sm_count, 2048, 32, 65536, 167936, 166912};
    return d;
}

rowops_cuda_device rowops_cuda_device_sm90(int sm_count)
{
    rowops_cuda_device d = {sm_count, 2048, 32, 65536, 233472, 232448};
    return d;
}

int rowops_collapse_rows(const int64_t *sizes, const int64_t *strides, int ndim,
                         int64_t *out_sizes, int64_t *out_strides)
{
    int m = 0;
    for (int d = 0; d < ndim; ++d) {
        if (sizes[d] == 1)
            continue;
        /* out[m - 1] is the outer neighbour of d: merge it into d */
        if (m > 0 && out_strides[m - 1] == strides[d] * sizes[d]) {
            out_sizes[m - 1] *= sizes[d];
            out_strides[m - 1] = strides[d];
            continue;
        }
        out_sizes[m] = sizes[d];
        out_strides[m] = strides[d];
        ++m;
    }
    if (m == 0) {
        out_sizes[0] = 1;
        out_strides[0] = 0;
        m = 1;
    }
    return m;
}

/* Largest v (a power of two <= vmax) with `value` divisible by v * unit. */
static int fit_vec(int v, int64_t value, int64_t unit)
{
    while (v > 1 && value % ((int64_t)v * unit) != 0)
        v /= 2;
    return v;
}

static int tensor_vec(int v, const rowops_tensor *t)
{
    const int64_t es = (int64_t)rowops_dtype_size(t->dtype);
    v = fit_vec(v, (int64_t)(uintptr_t)t->data, es);
    for (int d = 0; d < t->rank - 1; ++d)
        if (t->sizes[d] > 1)
            v = fit_vec(v, t->strides[d] * es, es);
    return v;
}

int rowops_cuda_vector_elems(const rowops_call *c)
{
    const int64_t es = (int64_t)rowops_dtype_size(c->x.dtype);
    const int64_t n = c->x.sizes[c->x.rank - 1];
    const rowops_tensor *rows[4] = {&c->x, &c->out, &c->residual,
                                    &c->residual_out};
    const int nrows = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM ? 4 : 2;
    for (int i = 0; i < nrows; ++i)
        if ((uintptr_t)rows[i]->data % (uintptr_t)es)
            return 0;
    int v = fit_vec((int)(16 / es), n, 1);
    for (int i = 0; i < nrows; ++i)
        v = tensor_vec(v, rows[i]);
    if (c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        const int64_t ws = (int64_t)rowops_dtype_size(c->weight.dtype);
        const uintptr_t addr = (uintptr_t)c->weight.data;
        if (addr % (uintptr_t)ws)
            return 0;
        /* loaded in chunks of min(16, v * ws) bytes */
        while (v > 1 && addr % (uintptr_t)(v * ws < 16 ? v * ws : 16))
            v /= 2;
    }
    return v;
}

int rowops_cuda_blocks_per_sm(const rowops_cuda_device *dev,
                              rowops_cuda_kernel_attr attr, unsigned threads,
                              size_t smem)
{
    if (threads == 0 || threads > 1024 || attr.regs > 255)
        return 0;
    const int warps = (int)((threads + 31) / 32);
    /* registers are allocated per warp in units of 256 */
    const int per_warp = (attr.regs * 32 + 255) / 256 * 256;
    const int64_t regs = (int64_t)per_warp * warps;
    const int64_t block_smem = (int64_t)attr.static_smem + (int64_t)smem;
    if (regs > dev->regs_per_sm || attr.static_smem > 48 * 1024 ||
        block_smem > dev->smem_per_block_optin)
        return 0;
    int64_t n = dev->max_threads_per_sm / (int64_t)(warps * 32);
    if (regs > 0 && dev->regs_per_sm / regs < n)
        n = dev->regs_per_sm / regs;
    /* every block also holds 1 KiB of shared memory for the system */
    const int64_t by_smem = dev->smem_per_sm / (block_smem + 1024);
    if (by_smem < n)
        n = by_smem;
    if (dev->max_blocks_per_sm < n)
        n = dev->max_blocks_per_sm;
    return (int)n;
}

static int64_t pow2_at_least(int64_t v)
{
    int64_t p = 1;
    while (p < v)
        p *= 2;
    return p;
}

static unsigned grid_for(const rowops_cuda_device *dev,
                         rowops_cuda_kernel_attr attr, unsigned threads,
                         size_t smem, int64_t work_items)
{
    int per_sm = rowops_cuda_blocks_per_sm(dev, attr, threads, smem);
    if (per_sm < 1)
        per_sm = 1; /* cannot launch: the launch reports it */
    int64_t resident = (int64_t)dev->sm_count * per_sm;
    if (resident < 1)
        resident = 1;
    int64_t g = work_items < resident ? work_items : resident;
    return (unsigned)(g < 1 ? 1 : g);
}

rowops_cuda_launch rowops_cuda_fast_launch(const rowops_cuda_device *dev,
                                           rowops_cuda_kernel_attr attr,
                                           rowops_dtype dtype, int64_t n,
                                           int vec, int64_t rows)
{
    rowops_cuda_launch l = {0};
    const int64_t es = (int64_t)rowops_dtype_size(dtype);
    const int64_t items = ROWOPS_CUDA_ITEMS(es, (int64_t)vec); /* per slab */
    const int64_t nvec = n / vec;
    int64_t g = pow2_at_least((nvec + items - 1) / items);
    if (g > ROWOPS_CUDA_FAST_THREADS)
        g = ROWOPS_CUDA_FAST_THREADS;
    l.kind = ROWOPS_CUDA_FAST_KERNEL;
    l.threads = ROWOPS_CUDA_FAST_THREADS;
    l.group = (int)g;
    l.vec = vec;
    l.slabs = (int)((nvec + g * items - 1) / (g * items));
    if (l.slabs < 1)
        l.slabs = 1;
    l.smem = l.slabs > 1 ? (size_t)(n * es) : 0;
    l.rows_per_block = ROWOPS_CUDA_FAST_THREADS / g;
    l.grid = grid_for(dev, attr, l.threads, l.smem,
                      (rows + l.rows_per_block - 1) / l.rows_per_block);
    return l;
}

rowops_cuda_launch rowops_cuda_tile_launch(const rowops_cuda_device *dev,
                                           rowops_cuda_kernel_attr attr,
                                           rowops_cuda_kernel_kind kind,
                                           int64_t n, int64_t rows,
                                           int rows_fast)
{
    rowops_cuda_launch l = {0};
    int64_t tr = ROWOPS_CUDA_TILE_MAX_ROWS;
    if (!rows_fast && n > 0) {
        tr = ROWOPS_CUDA_TILE_ELEMS / pow2_at_least(n);
        tr = tr < 1 ? 1 : (tr > ROWOPS_CUDA_TILE_MAX_ROWS ? 32 : tr);
    }
    l.kind = kind;
    l.threads = ROWOPS_CUDA_TILE_THREADS;
    l.group = (int)tr;
    l.slabs = 1;
    l.vec = 1;
    l.rows_per_block = tr;
    l.grid = grid_for(dev, attr, l.threads, 0, (rows + tr - 1) / tr);
    return l;
}

rowops_cuda_launch rowops_cuda_dweight_launch(int64_t n)
{
    rowops_cuda_launch l = {0};
    l.kind = ROWOPS_CUDA_DWEIGHT_KERNEL;
    l.threads = ROWOPS_CUDA_FINISH_THREADS;
    const int64_t g = (n + l.threads - 1) / l.threads;
    l.grid = (unsigned)(g < 1 ? 1 : g);
    l.group = 1;
    l.slabs = 1;
    l.vec = 1;
    return l;
}

static const char *short_name(rowops_dtype dt)
{
    switch (dt) {
    case ROWOPS_F32: return "f32";
    case ROWOPS_F16: return "f16";
    case ROWOPS_BF16: return "bf16";
    case ROWOPS_F64: return "f64";
    default: return "unknown";
    }
}

const char *rowops_cuda_kernel_name(rowops_cuda_kernel_kind kind, rowops_op op,
                                    rowops_dtype dtype,
                                    rowops_dtype weight_dtype, int vec,
                                    char *buf, size_t len)
{
    const int fused = op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const char *o = fused ? "fused" : "rms";
    char w[16] = "";
    if (fused)
        snprintf(w, sizeof w, "_w%s", short_name(weight_dtype));
    switch (kind) {
    case ROWOPS_CUDA_FAST_KERNEL:
        snprintf(buf, len, "rowops_fast_%s_%s%s_v%d", o, short_name(dtype), w,
                 vec * (int)rowops_dtype_size(dtype));
        break;
    case ROWOPS_CUDA_STRIDED_KERNEL:
        snprintf(buf, len, "rowops_strided_%s_%s%s", o, short_name(dtype), w);
        break;
    case ROWOPS_CUDA_BACKWARD_KERNEL:
        snprintf(buf, len, "rowops_backward_%s_%s%s", o, short_name(dtype), w);
        break;
    case ROWOPS_CUDA_DWEIGHT_KERNEL:
        snprintf(buf, len, "rowops_dweight_%s_w%s",
                 short_name(rowops_acc_dtype(dtype)), short_name(weight_dtype));
        break;
    }
    return buf;
}
