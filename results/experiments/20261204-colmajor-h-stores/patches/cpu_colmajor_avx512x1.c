/* EXPERIMENT: column split across 2 threads with a spin barrier */
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512_base1
#define rowops_cpu_colmajor_avx512_plan rowops_cpu_colmajor_avx512_plan1
#include "cpu_colmajor_avx512.c"
#include <stdatomic.h>

static float xsums[2][8192];
static _Atomic int xarrive;
static _Atomic int xgen;

static void xbarrier(void)
{
    const int g = atomic_load(&xgen);
    if (atomic_fetch_add(&xarrive, 1) == 1) {
        atomic_store(&xarrive, 0);
        atomic_fetch_add(&xgen, 1);
    } else
        while (atomic_load(&xgen) == g)
            _mm_pause();
}

void rowops_cpu_colmajor_avx512x1(const rowops_call *c, int64_t row_begin,
                                  int64_t row_end);
void rowops_cpu_colmajor_avx512x1(const rowops_call *c, int64_t row_begin,
                                  int64_t row_end)
{
    const int64_t B = c->x.sizes[0];
    if (row_begin == 0 && row_end == B) {
        rowops_cpu_colmajor_avx512_base1(c, row_begin, row_end);
        return;
    }
    const int me = row_begin == 0 ? 0 : 1;
    const rowops_dtype dt = c->x.dtype;
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const int64_t es = (int64_t)rowops_dtype_size(dt);
    const int64_t n = c->x.sizes[1];
    const int64_t half = (n / 2 + 511) / 512 * 512;
    const int64_t c0 = me ? half : 0, c1 = me ? n : half;
    rowops_tensor ht = fused ? c->residual_out : c->out;
    ht.data = (char *)ht.data + c0 * ht.strides[1] * es;
    tile_ctx k;
    k.cs = c->x.strides[1] * es;
    k.x = (const char *)c->x.data + c0 * k.cs;
    k.r = fused ? (const char *)c->residual.data + c0 * k.cs : NULL;
    k.n = c1 - c0;
    k.ht = &ht;
    if (dt == ROWOPS_BF16)
        pass1_bf16(&k, 0, (int)B, 0, k.n, xsums[me], NULL, 0);
    else if (dt == ROWOPS_F16)
        pass1_f16(&k, 0, (int)B, 0, k.n, xsums[me], NULL, 0);
    else
        pass1_f32(&k, 0, (int)B, 0, k.n, xsums[me], NULL, 0);
    xbarrier();
    const rowops_tensor *hh = fused ? &c->residual_out : &c->out;
    const void *w = fused ? c->weight.data : NULL;
    const int w_f32 = fused && c->weight.dtype == ROWOPS_F32;
    const int nt_o = fused && B * n * es >= STREAM_MIN_BYTES;
    for (int64_t row = row_begin; row < row_end; ++row)
        colmajor_row_out(rowops_tensor_row_ptr(hh, row), w, w_f32,
                         rowops_tensor_row_ptr(&c->out, row), n,
                         (float)((double)xsums[0][row] + (double)xsums[1][row]),
                         (float)c->eps, (float *)rowops_tensor_index_ptr(&c->rstd, row),
                         dt, nt_o, 0);
    if (nt_o)
        _mm_sfence();
    xbarrier(); /* xsums reused by the next call */
}
