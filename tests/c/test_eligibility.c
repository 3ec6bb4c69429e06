/* The eligibility function alone, table-driven: one row per condition and
 * side. Descriptors only: the data pointers are made-up addresses, which is
 * fine because rowops_choose never reads data. */
#include "c_samples.h"
#include "cpu_cache.h"
#include "cpu_features.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BASE 0x100000u

static rowops_tensor desc(rowops_dtype dt, uintptr_t addr, int64_t B, int64_t N,
                          int64_t row_stride)
{
    return c_desc2d(dt, addr, B, N, row_stride, 1);
}

/* A fused call, every tensor contiguous and 64-byte aligned. */
static rowops_call base_call(rowops_dtype dt, int64_t B, int64_t N)
{
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
    c.eps = 1e-6;
    c.x = desc(dt, BASE, B, N, N);
    c.residual = desc(dt, BASE * 2, B, N, N);
    c.out = desc(dt, BASE * 3, B, N, N);
    c.residual_out = desc(dt, BASE * 4, B, N, N);
    c.weight = desc(dt, BASE * 5, 1, N, N);
    c.weight.rank = 1;
    c.weight.sizes[0] = N;
    c.weight.strides[0] = 1;
    c.rstd = desc(rowops_acc_dtype(dt), BASE * 6, B, 1, 1);
    c.rstd.rank = 1;
    c.rstd.strides[0] = 1;
    return c;
}

typedef void (*tweak_fn)(rowops_call *);
static void none(rowops_call *c)
{
    (void)c;
}
static void x_col_stride(rowops_call *c)
{
    c->x.strides[1] = 2;
}
static void residual_col_stride(rowops_call *c)
{
    c->residual.strides[1] = 2;
}
static void weight_stride(rowops_call *c)
{
    c->weight.strides[0] = 2;
}
static void out_col_stride(rowops_call *c)
{
    c->out.strides[1] = 2;
}
static void h_col_stride(rowops_call *c)
{
    c->residual_out.strides[1] = 2;
}
static void x_row_n1(rowops_call *c)
{
    c->x.strides[0] = c->x.sizes[1] + 1;
}
static void x_row_n8(rowops_call *c)
{
    c->x.strides[0] = c->x.sizes[1] + 8;
}
static void x_row_0(rowops_call *c)
{
    c->x.strides[0] = 0;
}
static void x_ptr_one_elem(rowops_call *c)
{
    c->x.data = (char *)c->x.data + rowops_dtype_size(c->x.dtype);
}
static void x_ptr_16(rowops_call *c)
{
    c->x.data = (char *)c->x.data + 16;
}
static void weight_ptr_one_elem(rowops_call *c)
{
    c->weight.data = (char *)c->weight.data + rowops_dtype_size(c->x.dtype);
}
static void h_ptr_one_elem(rowops_call *c)
{
    c->residual_out.data =
        (char *)c->residual_out.data + rowops_dtype_size(c->x.dtype);
}
static void single_row_odd_stride(rowops_call *c)
{
    c->x.sizes[0] = c->residual.sizes[0] = c->out.sizes[0] =
        c->residual_out.sizes[0] = c->rstd.sizes[0] = 1;
    c->x.strides[0] = 12345;
}
static void weight_f32(rowops_call *c)
{
    c->weight.dtype = ROWOPS_F32;
}
static void rank9(rowops_call *c)
{
    c->out.rank = 9;
}
static void other_device(rowops_call *c)
{
    c->x.device = ROWOPS_DEVICE_OTHER;
}
static void rms_norm_op(rowops_call *c)
{
    c->op = ROWOPS_OP_RMS_NORM_ROWS;
}
/* fused_add_rms_norm_: the outputs are the inputs */
static void in_place(rowops_call *c)
{
    c->out.data = c->x.data;
    c->residual_out.data = c->residual.data;
}
#ifdef ROWOPS_HAVE_CUDA /* the CUDA rows exist only in CUDA builds */
static void cuda90(rowops_call *c)
{
    c->x.device = c->residual.device = c->out.device = ROWOPS_DEVICE_CUDA;
    c->weight.device = c->residual_out.device = ROWOPS_DEVICE_CUDA;
    c->rstd.device = ROWOPS_DEVICE_CUDA;
    c->cuda_arch = 90;
}
static void cuda75(rowops_call *c)
{
    cuda90(c);
    c->cuda_arch = 75;
}
static void cuda_ptr_16(rowops_call *c)
{
    cuda90(c);
    x_ptr_16(c);
}
static void cuda_ptr_8(rowops_call *c)
{
    cuda90(c);
    c->x.data = (char *)c->x.data + 8;
}
static void cuda_row_n1(rowops_call *c)
{
    cuda90(c);
    x_row_n1(c);
}
static void cuda_x_col_stride(rowops_call *c)
{
    cuda90(c);
    x_col_stride(c);
}
#endif

/* FAST: cpu_fast_avx512 with AVX-512 F+BW, cpu_fast_avx2 with AVX2+FMA+
 * F16C, else portable; FAST_NT its streaming form (portable: itself). On a
 * core that runs 512-bit operations in halves (AMD family 25), FAST is the
 * AVX2 kernel for these small calls but in bfloat16 (rowops.h). */
enum { FAST = -1, FAST_NT = -2 };

static const struct row {
    const char *condition;
    rowops_dtype dtype;
    int64_t B, N;
    tweak_fn tweak;
    int features; /* -1: as detected */
    int want;     /* rowops_impl or FAST */
    const char *reason;
} rows[] = {
    {"dtype float32", ROWOPS_F32, 4, 4096, none, -1, FAST, "float32"},
    /* outputs of 32 GiB fill half of any last-level cache */
    {"outputs beyond the LLC: streaming stores", ROWOPS_F32, 1 << 20, 4096,
     none, -1, FAST_NT, "float32"},
    {"AVX-512 off: the AVX2 kernel", ROWOPS_F32, 4, 4096, none,
     ROWOPS_CPU_FAST_FEATURES, -3, "CPU fast (AVX2)"},
    /* on the AVX2 kernel the fused op streams float32 only (16-bit
     * streaming is unmeasured on AVX2-only hosts); rms_norm_rows any dtype */
    {"AVX-512 off, float32 beyond the LLC: AVX2 streams", ROWOPS_F32, 1 << 20,
     4096, none, ROWOPS_CPU_FAST_FEATURES, -4, "streaming stores"},
    {"AVX-512 off, bfloat16 fused beyond the LLC: ordinary stores", ROWOPS_BF16,
     1 << 20, 4096, none, ROWOPS_CPU_FAST_FEATURES, -3,
     "ordinary stores (the AVX2 kernel streams the fused op in float32 only)"},
    {"AVX-512 off, float16 fused beyond the LLC: ordinary stores", ROWOPS_F16,
     1 << 20, 4096, none, ROWOPS_CPU_FAST_FEATURES, -3,
     "ordinary stores (the AVX2 kernel streams the fused op in float32 only)"},
    /* -5: the AVX-512 kernel streams the fused op in 16 bits too */
    {"bfloat16 fused beyond the LLC: AVX-512 streams", ROWOPS_BF16, 1 << 20,
     4096, none, -1, -5, "streaming stores"},
    /* -6: float16 the same, but on the AVX2 kernel at half rate */
    {"float16 fused beyond the LLC: AVX-512 streams (AVX2 at half rate)",
     ROWOPS_F16, 1 << 20, 4096, none, -1, -6, "streaming stores"},
    {"bfloat16 rms_norm_rows beyond the LLC: streaming", ROWOPS_BF16, 1 << 21,
     4096, rms_norm_op, -1, FAST_NT, "streaming stores"},
    /* -7: the fast kernel of a large call with ordinary stores (AVX-512
     * where the CPU has it, at any rate) */
    {"float32 fused in place beyond the LLC: ordinary stores", ROWOPS_F32,
     1 << 20, 4096, in_place, -1, -7, "in place: the outputs are the lines"},
    {"AVX-512 off, float32 fused in place beyond the LLC: ordinary stores",
     ROWOPS_F32, 1 << 20, 4096, in_place, ROWOPS_CPU_FAST_FEATURES, -3,
     "in place: the outputs are the lines"},
    {"bfloat16 fused in place beyond the LLC: AVX-512 streams", ROWOPS_BF16,
     1 << 20, 4096, in_place, -1, -5, "streaming stores"},
    {"dtype float16", ROWOPS_F16, 4, 4096, none, -1, FAST, "float16"},
    {"dtype bfloat16", ROWOPS_BF16, 4, 4096, none, -1, FAST, "bfloat16"},
    {"dtype float64", ROWOPS_F64, 4, 4096, none, -1, ROWOPS_IMPL_CPU_STRIDED,
     "float64 has no fast kernel"},
    {"weight float32 with float16 x", ROWOPS_F16, 4, 4096, weight_f32, -1, FAST,
     "float16"},
    {"rms_norm_rows", ROWOPS_F32, 4, 4096, rms_norm_op, -1, FAST, "N = 4096"},
    {"N = 1", ROWOPS_F32, 1, 1, none, -1, FAST, "N = 1"},
    {"N = 0", ROWOPS_F32, 4, 0, none, -1, ROWOPS_IMPL_CPU_STRIDED,
     "N = 0 outside"},
    {"N = f32 limit", ROWOPS_F32, 2, 32768, none, -1, FAST, "N = 32768"},
    {"N = f32 limit + 1", ROWOPS_F32, 1, 32769, none, -1,
     ROWOPS_IMPL_CPU_STRIDED, "N = 32769 outside the float32 one-pass"},
    {"N = f16 limit", ROWOPS_F16, 2, 65536, none, -1, FAST, "N = 65536"},
    {"N = f16 limit + 1", ROWOPS_F16, 1, 65537, none, -1,
     ROWOPS_IMPL_CPU_STRIDED, "float16 one-pass range [1, 65536]"},
    {"N = bf16 limit + 1", ROWOPS_BF16, 1, 65537, none, -1,
     ROWOPS_IMPL_CPU_STRIDED, "bfloat16 one-pass range [1, 65536]"},
    {"x last stride 2", ROWOPS_F32, 4, 64, x_col_stride, -1,
     ROWOPS_IMPL_CPU_STRIDED, "x has last-dimension stride 2"},
    {"residual last stride 2", ROWOPS_F32, 4, 64, residual_col_stride, -1,
     ROWOPS_IMPL_CPU_STRIDED, "residual has last-dimension stride 2"},
    {"weight stride 2", ROWOPS_F32, 4, 64, weight_stride, -1,
     ROWOPS_IMPL_CPU_STRIDED, "weight has last-dimension stride 2"},
    {"out last stride 2", ROWOPS_F32, 4, 64, out_col_stride, -1,
     ROWOPS_IMPL_CPU_STRIDED, "out has last-dimension stride 2"},
    {"residual_out last stride 2", ROWOPS_F32, 4, 64, h_col_stride, -1,
     ROWOPS_IMPL_CPU_STRIDED, "residual_out has last-dimension stride 2"},
    {"row stride N", ROWOPS_F32, 4, 64, none, -1, FAST, "aligned"},
    {"row stride N + 1", ROWOPS_F32, 4, 64, x_row_n1, -1,
     ROWOPS_IMPL_CPU_STRIDED, "x stride 65 of dim 0 (260 bytes)"},
    {"row stride N + 8 (32 bytes)", ROWOPS_F32, 4, 64, x_row_n8, -1, FAST,
     "aligned"},
    {"row stride N + 1, float16", ROWOPS_F16, 4, 64, x_row_n1, -1,
     ROWOPS_IMPL_CPU_STRIDED, "(130 bytes) is not a multiple of 32"},
    {"row stride 0 (expand)", ROWOPS_F32, 4, 64, x_row_0, -1,
     ROWOPS_IMPL_CPU_STRIDED, "x row stride 0 < N = 64"},
    {"single row, any row stride", ROWOPS_F32, 1, 64, single_row_odd_stride, -1,
     FAST, "aligned"},
    {"x pointer one element off", ROWOPS_F32, 4, 64, x_ptr_one_elem, -1,
     ROWOPS_IMPL_CPU_STRIDED, "x data pointer is 4 bytes past a 32-byte"},
    {"x pointer one element off, bf16", ROWOPS_BF16, 4, 64, x_ptr_one_elem, -1,
     ROWOPS_IMPL_CPU_STRIDED, "x data pointer is 2 bytes past"},
    {"x pointer 16 bytes off", ROWOPS_F32, 4, 64, x_ptr_16, -1,
     ROWOPS_IMPL_CPU_STRIDED, "16 bytes past a 32-byte boundary"},
    {"weight pointer one element off", ROWOPS_F16, 4, 64, weight_ptr_one_elem,
     -1, ROWOPS_IMPL_CPU_STRIDED, "weight data pointer is 2 bytes past"},
    {"residual_out pointer one element off", ROWOPS_F32, 4, 64, h_ptr_one_elem,
     -1, ROWOPS_IMPL_CPU_STRIDED, "residual_out data pointer is 4 bytes past"},
    {"no CPU features", ROWOPS_F32, 4, 64, none, 0,
     ROWOPS_IMPL_CPU_FAST_PORTABLE, "lacks AVX2+FMA+F16C (has none)"},
    {"no F16C", ROWOPS_F16, 4, 64, none, ROWOPS_CPU_AVX2 | ROWOPS_CPU_FMA,
     ROWOPS_IMPL_CPU_FAST_PORTABLE, "(has AVX2+FMA)"},
    {"rank 9", ROWOPS_F32, 4, 64, rank9, -1, ROWOPS_IMPL_REFERENCE,
     "out has rank 9"},
    {"other device", ROWOPS_F32, 4, 64, other_device, -1, ROWOPS_IMPL_REFERENCE,
     "no rowops kernel"},
#ifdef ROWOPS_HAVE_CUDA
    {"CUDA sm_90", ROWOPS_BF16, 4, 4096, cuda90, -1, ROWOPS_IMPL_CUDA_FAST,
     "16-byte vectors (8 elements), N = 4096 <= 65536, sm_90"},
    {"CUDA sm_75: no kernel built", ROWOPS_BF16, 4, 4096, cuda75, -1,
     ROWOPS_IMPL_REFERENCE, "compute capability 7.5 has no rowops kernel"},
    {"CUDA N = 4098 (f32): 8-byte vectors", ROWOPS_F32, 1, 4098, cuda90, -1,
     ROWOPS_IMPL_CUDA_FAST, "8-byte vectors (2 elements)"},
    {"CUDA N = 4097 (bf16): one element", ROWOPS_BF16, 3, 4097, cuda90, -1,
     ROWOPS_IMPL_CUDA_FAST, "2-byte vectors (1 element),"},
    {"CUDA pointer 16-byte aligned", ROWOPS_F32, 4, 64, cuda_ptr_16, -1,
     ROWOPS_IMPL_CUDA_FAST, "16-byte vectors"},
    {"CUDA pointer 8-byte aligned", ROWOPS_F32, 4, 64, cuda_ptr_8, -1,
     ROWOPS_IMPL_CUDA_FAST, "8-byte vectors (2 elements)"},
    {"CUDA row stride N + 1", ROWOPS_BF16, 4, 64, cuda_row_n1, -1,
     ROWOPS_IMPL_CUDA_FAST, "2-byte vectors"},
    {"CUDA N = f32 limit", ROWOPS_F32, 2, 32768, cuda90, -1,
     ROWOPS_IMPL_CUDA_FAST, "N = 32768 <= 32768"},
    {"CUDA N = f32 limit + 1", ROWOPS_F32, 2, 32769, cuda90, -1,
     ROWOPS_IMPL_CUDA_STRIDED, "N = 32769 outside the float32 one-pass"},
    {"CUDA x last stride 2", ROWOPS_F32, 4, 64, cuda_x_col_stride, -1,
     ROWOPS_IMPL_CUDA_STRIDED, "x has last-dimension stride 2"},
    {"CUDA float64", ROWOPS_F64, 4, 64, cuda90, -1, ROWOPS_IMPL_CUDA_STRIDED,
     "float64 has no fast kernel"},
#endif
};

/* The half-rate rule (rowops.h), with the property forced on and off:
 * only where the CPU has AVX-512 (else there is no choice to move). In the
 * cache the AVX2 kernel but for bfloat16 outputs up to 1 MiB; streaming
 * calls keep the AVX-512 kernel. */
static void check_half_rate(int avx512)
{
    if (!avx512) {
        printf("  half-rate rule: SKIPPED (no AVX-512 here)\n");
        return;
    }
    static const struct {
        rowops_dtype dtype;
        int64_t B; /* N = 4096 */
        rowops_impl half, full;
    } cases[] = {
        {ROWOPS_F32, 4, ROWOPS_IMPL_CPU_FAST_AVX2, ROWOPS_IMPL_CPU_FAST_AVX512},
        {ROWOPS_F16, 64, ROWOPS_IMPL_CPU_FAST_AVX2,
         ROWOPS_IMPL_CPU_FAST_AVX512},
        /* bfloat16 outputs 1 MiB (two of 64 x 4096 x 2 bytes): AVX-512 */
        {ROWOPS_BF16, 64, ROWOPS_IMPL_CPU_FAST_AVX512,
         ROWOPS_IMPL_CPU_FAST_AVX512},
        /* a row more: AVX2 */
        {ROWOPS_BF16, 65, ROWOPS_IMPL_CPU_FAST_AVX2,
         ROWOPS_IMPL_CPU_FAST_AVX512},
        /* outputs of 32 GiB stream, whatever the rate */
        {ROWOPS_F32, 1 << 20, ROWOPS_IMPL_CPU_FAST_AVX512_NT,
         ROWOPS_IMPL_CPU_FAST_AVX512_NT},
        {ROWOPS_BF16, 1 << 20, ROWOPS_IMPL_CPU_FAST_AVX512_NT,
         ROWOPS_IMPL_CPU_FAST_AVX512_NT},
        /* but float16 streams on the AVX2 kernel at half rate */
        {ROWOPS_F16, 1 << 20, ROWOPS_IMPL_CPU_FAST_AVX2_NT,
         ROWOPS_IMPL_CPU_FAST_AVX512_NT},
    };
    const unsigned all =
        rowops_cpu_features_detected() & ~(unsigned)ROWOPS_CPU_PREFETCH_NTA;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int on = 0; on < 2; ++on) {
            rowops_call c = base_call(cases[i].dtype, cases[i].B, 4096);
            rowops_cpu_features_override(
                (int)(on ? all | ROWOPS_CPU_AVX512_HALF_RATE
                         : all & ~(unsigned)ROWOPS_CPU_AVX512_HALF_RATE));
            const rowops_choice got = rowops_choose(&c);
            rowops_cpu_features_override(-1);
            const rowops_impl want = on ? cases[i].half : cases[i].full;
            const int says = strstr(got.reason, "two halves") != NULL;
            const int avx2 = want == ROWOPS_IMPL_CPU_FAST_AVX2 ||
                             want == ROWOPS_IMPL_CPU_FAST_AVX2_NT;
            C_EXPECT(got.impl == want && says == (on && avx2),
                     "half rate %s, %s B = %lld: got %s (%s), want %s",
                     on ? "on" : "off", rowops_dtype_name(cases[i].dtype),
                     (long long)cases[i].B, rowops_impl_name(got.impl),
                     got.reason, rowops_impl_name(want));
            printf("  half rate %-3s %-8s B = %-8lld %-18s %s\n",
                   on ? "on" : "off", rowops_dtype_name(cases[i].dtype),
                   (long long)cases[i].B, rowops_impl_name(got.impl),
                   got.reason);
        }
}

/* The non-temporal prefetch (rowops.h), with the property forced on and
 * off, on AVX-512 and on AVX2 alone: beyond the LLC every streaming call
 * takes the _nta kernel, calls in the cache never stream; without AVX-512
 * the fused op in 16 bits keeps ordinary stores. */
static void check_prefetch_nta(int avx2, int avx512)
{
    if (!avx2) {
        printf("  non-temporal prefetch: SKIPPED (no AVX2 here)\n");
        return;
    }
    enum { NT = 0, NTA = 1, PLAIN = 2 };
    static const struct {
        int rms;
        rowops_dtype dtype;
        int64_t B;                /* N = 4096 */
        int on512, off512, on256; /* the kernel: NT, NTA or PLAIN */
    } cases[] = {
        {0, ROWOPS_F32, 1 << 20, NTA, NT, NTA},
        {0, ROWOPS_BF16, 1 << 20, NTA, NT, PLAIN},
        {0, ROWOPS_F16, 1 << 20, NTA, NT, PLAIN},
        {1, ROWOPS_F32, 1 << 20, NTA, NT, NTA},
        {1, ROWOPS_BF16, 1 << 21, NTA, NT, NTA},
        {1, ROWOPS_F16, 1 << 21, NTA, NT, NTA},
        {0, ROWOPS_F32, 4, PLAIN, PLAIN, PLAIN}, /* in the cache */
    };
    const unsigned all =
        rowops_cpu_features_detected() & ~(unsigned)ROWOPS_CPU_PROPERTIES;
    for (int wide = avx512; wide >= 0; --wide)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
            for (int on = 0; on < 2; ++on) {
                rowops_call c = base_call(cases[i].dtype, cases[i].B, 4096);
                if (cases[i].rms)
                    rms_norm_op(&c);
                const unsigned mask =
                    (wide ? all
                          : all & ~(unsigned)(ROWOPS_CPU_AVX512F |
                                              ROWOPS_CPU_AVX512BW)) |
                    (on ? ROWOPS_CPU_PREFETCH_NTA : 0);
                rowops_cpu_features_override((int)mask);
                const rowops_choice got = rowops_choose(&c);
                rowops_cpu_features_override(-1);
                const int kind = wide ? (on ? cases[i].on512 : cases[i].off512)
                                 : on ? cases[i].on256
                                      : (cases[i].on256 == PLAIN ? PLAIN : NT);
                const rowops_impl want =
                    wide ? (kind == NTA  ? ROWOPS_IMPL_CPU_FAST_AVX512_NTA
                            : kind == NT ? ROWOPS_IMPL_CPU_FAST_AVX512_NT
                                         : ROWOPS_IMPL_CPU_FAST_AVX512)
                         : (kind == NTA  ? ROWOPS_IMPL_CPU_FAST_AVX2_NTA
                            : kind == NT ? ROWOPS_IMPL_CPU_FAST_AVX2_NT
                                         : ROWOPS_IMPL_CPU_FAST_AVX2);
                const int says =
                    strstr(got.reason, "non-temporal prefetch") != NULL;
                C_EXPECT(got.impl == want && says == (kind == NTA),
                         "prefetch property %s, %s %s %s B = %lld: got %s "
                         "(%s), want %s",
                         on ? "on" : "off", wide ? "AVX-512" : "AVX2",
                         cases[i].rms ? "rms_norm_rows" : "fused",
                         rowops_dtype_name(cases[i].dtype),
                         (long long)cases[i].B, rowops_impl_name(got.impl),
                         got.reason, rowops_impl_name(want));
                printf("  nta %-3s %-7s %-5s %-8s B = %-8lld %s\n",
                       on ? "on" : "off", wide ? "AVX-512" : "AVX2",
                       cases[i].rms ? "rows" : "fused",
                       rowops_dtype_name(cases[i].dtype), (long long)cases[i].B,
                       rowops_impl_name(got.impl));
            }
}

/* The threading policy (rowops_cpu_grain): the fused op in place on a
 * transposed input writes rows that interleave in every cache line, so a
 * task takes 64 rows or more there (before, 8 at N = 4096: two threads
 * took float32 B = 10 x6.2 of one thread's time), except in the scalar
 * kernel on 16-bit rows; row-major outputs keep PyTorch's elementwise
 * grain. */
static void check_grain(void)
{
    static const struct {
        rowops_dtype dtype;
        int64_t B, N;
        int transposed;
        rowops_impl impl;
        int64_t want;
    } cases[] = {
        {ROWOPS_F32, 10, 4096, 1, ROWOPS_IMPL_CPU_STRIDED, 64},
        {ROWOPS_F32, 101, 4096, 1, ROWOPS_IMPL_CPU_COLMAJOR_INPLACE, 64},
        {ROWOPS_BF16, 18, 4096, 1, ROWOPS_IMPL_CPU_COLMAJOR_INPLACE, 64},
        {ROWOPS_BF16, 10, 4096, 1, ROWOPS_IMPL_CPU_STRIDED, 8},
        {ROWOPS_F32, 10, 4096, 0, ROWOPS_IMPL_CPU_FAST_AVX2, 8},
        {ROWOPS_F32, 10, 256, 0, ROWOPS_IMPL_CPU_FAST_AVX2, 128},
        {ROWOPS_F32, 10, 256, 1, ROWOPS_IMPL_CPU_STRIDED, 128},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const int64_t B = cases[i].B, N = cases[i].N;
        rowops_call c = base_call(cases[i].dtype, B, N);
        if (cases[i].transposed) {
            rowops_tensor *ts[] = {&c.x, &c.residual, &c.out, &c.residual_out};
            for (int k = 0; k < 4; ++k) {
                ts[k]->strides[0] = 1;
                ts[k]->strides[1] = B;
            }
            in_place(&c);
        }
        const int64_t got = rowops_cpu_grain(&c, cases[i].impl);
        C_EXPECT(got == cases[i].want,
                 "grain of %s %s B = %lld N = %lld under %s: %lld rows, want "
                 "%lld",
                 rowops_dtype_name(cases[i].dtype),
                 cases[i].transposed ? "in place, transposed" : "contiguous",
                 (long long)B, (long long)N, rowops_impl_name(cases[i].impl),
                 (long long)got, (long long)cases[i].want);
    }
}

int main(void)
{
    /* the features the kernels may use: a ROWOPS_CPU_CAPABILITY cap in the
     * environment (a run capped to AVX2) included */
    const unsigned hw = rowops_cpu_features();
    const int avx2 =
        (hw & ROWOPS_CPU_FAST_FEATURES) == ROWOPS_CPU_FAST_FEATURES;
    const int avx512 =
        (hw & ROWOPS_CPU_FAST512_FEATURES) == ROWOPS_CPU_FAST512_FEATURES;
    const int half = (hw & ROWOPS_CPU_AVX512_HALF_RATE) != 0;
    const int fast = avx512 ? ROWOPS_IMPL_CPU_FAST_AVX512
                     : avx2 ? ROWOPS_IMPL_CPU_FAST_AVX2
                            : ROWOPS_IMPL_CPU_FAST_PORTABLE;
    /* a small call's fast kernel in dtype d on this CPU */
#define FAST_OF(d)                                                             \
    (avx512 && half && (d) != ROWOPS_BF16 ? ROWOPS_IMPL_CPU_FAST_AVX2 : fast)
    const int fast_nt = avx512 ? ROWOPS_IMPL_CPU_FAST_AVX512_NT
                        : avx2 ? ROWOPS_IMPL_CPU_FAST_AVX2_NT
                               : ROWOPS_IMPL_CPU_FAST_PORTABLE;
    /* -3: the AVX2 kernel where the CPU has AVX2 (AVX-512 masked off);
     * -4: its streaming form; -5: the streaming AVX-512 kernel where the
     * CPU has AVX-512, else the AVX2 kernel with ordinary stores; -6: as
     * -5, but the streaming AVX2 kernel on a half-rate AVX-512 core */
    const int avx2_only =
        avx2 ? ROWOPS_IMPL_CPU_FAST_AVX2 : ROWOPS_IMPL_CPU_FAST_PORTABLE;
    const int avx2_nt =
        avx2 ? ROWOPS_IMPL_CPU_FAST_AVX2_NT : ROWOPS_IMPL_CPU_FAST_PORTABLE;
    const unsigned plain = hw & ~(unsigned)ROWOPS_CPU_PREFETCH_NTA;
    char feats[64];
    printf("detected CPU features: %s\n",
           rowops_cpu_features_text(hw, feats, sizeof feats));
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const struct row *r = &rows[i];
        rowops_call c = base_call(r->dtype, r->B, r->N);
        r->tweak(&c);
        /* as detected, less the prefetch property (check_prefetch_nta) */
        rowops_cpu_features_override(r->features >= 0 ? r->features
                                                      : (int)plain);
        const rowops_choice got = rowops_choose(&c);
        rowops_cpu_features_override(-1);
        const int want = r->want == FAST      ? FAST_OF(r->dtype)
                         : r->want == FAST_NT ? fast_nt
                         : r->want == -3      ? avx2_only
                         : r->want == -4      ? avx2_nt
                         : r->want == -5      ? (avx512 ? fast_nt : avx2_only)
                         : r->want == -6      ? (avx512 && half ? avx2_nt
                                                 : avx512       ? fast_nt
                                                                : avx2_only)
                         : r->want == -7      ? fast
                                              : r->want;
        /* the reason's text is the AVX kernels' where they are chosen; with
         * no AVX2 (a host without, or ROWOPS_CPU_CAPABILITY=default) the
         * portable kernel's says what the CPU lacks */
        const int capped =
            r->features >= 0 && ((unsigned)r->features & ~hw &
                                 (unsigned)ROWOPS_CPU_FAST_FEATURES) != 0;
        const char *why = r->want <= -3 && !avx2 ? ""
                          : r->want < 0 && !avx2 ? "the CPU lacks"
                          : capped               ? "the CPU lacks"
                          : (r->want == -5 || r->want == -6) && !avx512
                              ? "ordinary stores"
                              : r->reason;
        C_EXPECT(got.impl == (rowops_impl)want &&
                     strstr(got.reason, why) != NULL,
                 "%s: got %s (%s), want %s with '%s'", r->condition,
                 rowops_impl_name(got.impl), got.reason,
                 rowops_impl_name((rowops_impl)want), r->reason);
        printf("  %-40s %-18s %s\n", r->condition, rowops_impl_name(got.impl),
               got.reason);
    }
    /* The streaming boundary: outputs (out + residual_out, float32 N =
     * 4096: 32 KiB a row) at 3/8 of the last-level cache stream, a row
     * fewer do not (before: from 1/2; at 3/8 to 1/2 the ordinary stores
     * measured 7-29 % slower, rowops.h). */
    const double llc = (double)rowops_cpu_llc_bytes_cached();
    const int64_t at = (int64_t)ceil(llc * 3 / 8 / (4096.0 * 4 * 2));
    for (int64_t B = at - 1; B <= at; ++B) {
        rowops_call c = base_call(ROWOPS_F32, B, 4096);
        rowops_cpu_features_override((int)plain);
        const rowops_choice got = rowops_choose(&c);
        rowops_cpu_features_override(-1);
        const int want = B == at ? fast_nt : FAST_OF(ROWOPS_F32);
        C_EXPECT(got.impl == (rowops_impl)want,
                 "B = %lld (outputs %.2f MiB, LLC %.0f MiB): got %s (%s), want "
                 "%s",
                 (long long)B, (double)B * 32768 / 1048576, llc / 1048576,
                 rowops_impl_name(got.impl), got.reason,
                 rowops_impl_name((rowops_impl)want));
        printf("  streaming boundary B = %-16lld %-18s %s\n", (long long)B,
               rowops_impl_name(got.impl), got.reason);
    }
    check_half_rate(avx512);
    check_prefetch_nta(avx2, avx512);
    check_grain();
    return c_report("test_eligibility");
}
