/* The CUDA launch configuration (kernels/cuda/launch_config.c) as plain C:
 * row collapsing, the vector-width rule, and the fast kernel's launch for
 * every eligible N of every dtype and vector width, the tile kernels' for
 * every N up to 2^17, with the invariants the kernels rely on. */
#include "c_samples.h"
#include "cuda/launch_config.h"

#include <stdio.h>
#include <string.h>

static int64_t pow2_ge(int64_t v)
{
    int64_t p = 1;
    while (p < v)
        p *= 2;
    return p;
}

/* Collapsed row offsets equal the descriptor's for every row. */
static void check_collapse(const char *what, const rowops_tensor *t)
{
    int64_t sizes[ROWOPS_MAX_RANK], strides[ROWOPS_MAX_RANK];
    const int lead = t->rank - 1;
    const int m =
        rowops_collapse_rows(t->sizes, t->strides, lead, sizes, strides);
    C_EXPECT(m >= 1 && m <= (lead > 0 ? lead : 1), "%s: %d dims from %d", what,
             m, lead);
    const int64_t rows = rowops_tensor_rows(t);
    int bad = 0;
    for (int64_t row = 0; row < rows && !bad; ++row) {
        const int64_t want = rowops_tensor_row_offset(t, row);
        const int64_t got = rowops_index_offset(sizes, strides, m, row);
        if (got != want) {
            bad = 1;
            C_EXPECT(0, "%s: row %lld at %lld, want %lld", what, (long long)row,
                     (long long)got, (long long)want);
        }
    }
    ++c_checks;
}

static void collapse_tests(void)
{
    for (int layout = 0; layout < C_LAYOUT_COUNT; ++layout) {
        c_sample s;
        if (c_sample_make(&s, ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F32,
                          ROWOPS_F32, (c_layout)layout, 6, 5, 0, 1) != 0) {
            C_EXPECT(0, "sample %s", c_layout_name((c_layout)layout));
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "collapse %s x",
                 c_layout_name((c_layout)layout));
        check_collapse(what, &s.call.x);
        snprintf(what, sizeof what, "collapse %s out",
                 c_layout_name((c_layout)layout));
        check_collapse(what, &s.call.out);
        c_sample_free(&s);
    }
    /* row-major and row-sliced leading dims become one multiply */
    rowops_tensor t;
    memset(&t, 0, sizeof t);
    t.rank = 4;
    int64_t sz[4] = {3, 1, 4, 7}, st[4] = {4 * 9, 99, 9, 1};
    memcpy(t.sizes, sz, sizeof sz);
    memcpy(t.strides, st, sizeof st);
    int64_t cs[ROWOPS_MAX_RANK], cst[ROWOPS_MAX_RANK];
    C_CHECK(rowops_collapse_rows(t.sizes, t.strides, 3, cs, cst) == 1);
    C_CHECK(cs[0] == 12 && cst[0] == 9);
    check_collapse("row-sliced 4-d", &t);
    /* leading dims swapped: two dims stay */
    int64_t sw[4] = {9, 1, 3 * 9, 1};
    memcpy(t.strides, sw, sizeof sw);
    C_CHECK(rowops_collapse_rows(t.sizes, t.strides, 3, cs, cst) == 2);
    check_collapse("swapped 4-d", &t);
    /* nothing left: one row */
    int64_t one[2] = {1, 1};
    C_CHECK(rowops_collapse_rows(one, one, 1, cs, cst) == 1 && cs[0] == 1 &&
            cst[0] == 0);
    C_CHECK(rowops_collapse_rows(one, one, 0, cs, cst) == 1 && cs[0] == 1);
}

/* A fused call over [B, N], every tensor contiguous at 256-byte aligned
 * addresses, the weight of dtype wdt. */
static rowops_call call_of(rowops_dtype dt, rowops_dtype wdt, int64_t B,
                           int64_t N)
{
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
    rowops_tensor *ts[4] = {&c.x, &c.residual, &c.out, &c.residual_out};
    for (int i = 0; i < 4; ++i) {
        ts[i]->data = (void *)(uintptr_t)(0x100000u * (unsigned)(i + 1));
        ts[i]->dtype = dt;
        ts[i]->device = ROWOPS_DEVICE_CUDA;
        ts[i]->rank = 2;
        ts[i]->sizes[0] = B;
        ts[i]->sizes[1] = N;
        ts[i]->strides[0] = N;
        ts[i]->strides[1] = 1;
    }
    c.weight.data = (void *)(uintptr_t)0x900000u;
    c.weight.dtype = wdt;
    c.weight.rank = 1;
    c.weight.sizes[0] = N;
    c.weight.strides[0] = 1;
    return c;
}

static void vector_tests(void)
{
    static const struct {
        const char *what;
        rowops_dtype dt, wdt;
        int64_t n, x_offset_bytes, row_stride, w_offset_bytes;
        int want;
    } rows[] = {
        {"bf16 N=4096", ROWOPS_BF16, ROWOPS_BF16, 4096, 0, 0, 0, 8},
        {"bf16 N=4100 (4 | N)", ROWOPS_BF16, ROWOPS_BF16, 4100, 0, 0, 0, 4},
        {"bf16 N=4098 (2 | N)", ROWOPS_BF16, ROWOPS_BF16, 4098, 0, 0, 0, 2},
        {"bf16 N=4097 (odd)", ROWOPS_BF16, ROWOPS_BF16, 4097, 0, 0, 0, 1},
        {"bf16 N=128 (QK-norm)", ROWOPS_BF16, ROWOPS_BF16, 128, 0, 0, 0, 8},
        {"f32 N=4096", ROWOPS_F32, ROWOPS_F32, 4096, 0, 0, 0, 4},
        {"f32 N=4098", ROWOPS_F32, ROWOPS_F32, 4098, 0, 0, 0, 2},
        {"f32 N=33", ROWOPS_F32, ROWOPS_F32, 33, 0, 0, 0, 1},
        {"f32 x 8 bytes off", ROWOPS_F32, ROWOPS_F32, 64, 8, 0, 0, 2},
        {"bf16 x one element off", ROWOPS_BF16, ROWOPS_BF16, 64, 2, 0, 0, 1},
        {"f16 x 4 bytes off", ROWOPS_F16, ROWOPS_F16, 64, 4, 0, 0, 2},
        {"bf16 row stride N + 4", ROWOPS_BF16, ROWOPS_BF16, 64, 0, 68, 0, 4},
        {"bf16 row stride N + 1", ROWOPS_BF16, ROWOPS_BF16, 64, 0, 65, 0, 1},
        {"bf16 row stride N + 8", ROWOPS_BF16, ROWOPS_BF16, 64, 0, 72, 0, 8},
        {"f32 weight beside bf16, 16-byte aligned", ROWOPS_BF16, ROWOPS_F32, 64,
         0, 0, 16, 8},
        {"f32 weight 8 bytes off beside bf16", ROWOPS_BF16, ROWOPS_F32, 64, 0,
         0, 8, 2},
        {"f32 weight 4 bytes off beside bf16", ROWOPS_BF16, ROWOPS_F32, 64, 0,
         0, 4, 1},
        {"bf16 weight 2 bytes off", ROWOPS_BF16, ROWOPS_BF16, 64, 0, 0, 2, 1},
        {"bf16 weight one byte off", ROWOPS_BF16, ROWOPS_BF16, 64, 0, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        rowops_call c = call_of(rows[i].dt, rows[i].wdt, 4, rows[i].n);
        c.x.data = (char *)c.x.data + rows[i].x_offset_bytes;
        c.weight.data = (char *)c.weight.data + rows[i].w_offset_bytes;
        if (rows[i].row_stride)
            c.residual.strides[0] = rows[i].row_stride;
        const int got = rowops_cuda_vector_elems(&c);
        C_EXPECT(got == rows[i].want, "%s: vector %d, want %d", rows[i].what,
                 got, rows[i].want);
    }
    /* a single row is exempt from the row-stride rule */
    rowops_call c = call_of(ROWOPS_BF16, ROWOPS_BF16, 1, 64);
    c.x.strides[0] = 12345;
    C_CHECK(rowops_cuda_vector_elems(&c) == 8);
    /* rms_norm_rows ignores residual, residual_out and weight */
    c = call_of(ROWOPS_F16, ROWOPS_F16, 4, 64);
    c.op = ROWOPS_OP_RMS_NORM_ROWS;
    c.weight.data = (void *)(uintptr_t)1;
    c.residual.data = (void *)(uintptr_t)2;
    C_CHECK(rowops_cuda_vector_elems(&c) == 8);
}

static void occupancy_tests(void)
{
    const rowops_cuda_device a = rowops_cuda_device_sm80(108);
    const rowops_cuda_device h = rowops_cuda_device_sm90(132);
    const rowops_cuda_kernel_attr r64 = {64, 256}, r65 = {65, 256};
    const rowops_cuda_kernel_attr r128 = {128, 128}, r255 = {255, 0};
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r64, 512, 0) == 2);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r65, 512, 0) == 1);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r128, 512, 0) == 1);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r128, 1024, 0) == 0);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r255, 256, 0) == 1);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r64, 1025, 0) == 0);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r64, 256, 0) == 4);
    /* shared memory: 128 KiB fits both, 170 KiB only sm_90 */
    C_CHECK(rowops_cuda_blocks_per_sm(&a, r64, 512, 131072) == 1);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r64, 512, 131072) == 1);
    C_CHECK(rowops_cuda_blocks_per_sm(&a, r64, 512, 170 * 1024) == 0);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r64, 512, 170 * 1024) == 1);
    C_CHECK(rowops_cuda_blocks_per_sm(&h, r64, 512, 60 * 1024) == 2);
    const rowops_cuda_kernel_attr big_static = {32, 49 * 1024};
    C_CHECK(rowops_cuda_blocks_per_sm(&h, big_static, 256, 0) == 0);
}

/* Every eligible N of every dtype, with every vector width that divides
 * it: every element is owned by exactly one (thread, slab, item) position,
 * the row is held in registers exactly when it fits one slab of the block,
 * and the grid covers the rows. */
static void fast_tests(void)
{
    const rowops_cuda_device h = rowops_cuda_device_sm90(132);
    const rowops_cuda_kernel_attr attr = {64, 256};
    const rowops_dtype dts[3] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16};
    const int64_t threads = ROWOPS_CUDA_FAST_THREADS;
    long configs = 0, bad = 0;
    for (int d = 0; d < 3; ++d) {
        const int64_t es = (int64_t)rowops_dtype_size(dts[d]);
        const int64_t limit = rowops_one_pass_limit(dts[d]);
        for (int64_t n = 1; n <= limit; ++n) {
            for (int vec = 1; vec * es <= 16; vec *= 2) {
                if (n % vec)
                    break;
                const int64_t rows = n % 7 == 0 ? 1000003 : 1 + n % 5;
                const rowops_cuda_launch l =
                    rowops_cuda_fast_launch(&h, attr, dts[d], n, vec, rows);
                const int64_t items = ROWOPS_CUDA_ITEMS(es, (int64_t)vec);
                const int64_t per_slab = (int64_t)l.group * items * vec;
                const int64_t per_sm =
                    rowops_cuda_blocks_per_sm(&h, attr, l.threads, l.smem);
                const int64_t blocks =
                    (rows + l.rows_per_block - 1) / l.rows_per_block;
                int ok = l.threads == threads && l.vec == vec && l.group >= 1 &&
                         l.group <= threads && (l.group & (l.group - 1)) == 0 &&
                         l.rows_per_block * l.group == threads &&
                         items * vec * es <= ROWOPS_CUDA_SLAB_BYTES &&
                         per_slab * l.slabs >= n &&
                         per_slab * (l.slabs - 1) < n;
                if (l.slabs == 1) /* smallest group that holds the row */
                    ok =
                        ok && l.smem == 0 && (l.group == 1 || per_slab / 2 < n);
                else /* staged: one row per block, all of it */
                    ok = ok && l.group == threads && l.rows_per_block == 1 &&
                         l.smem == (size_t)(n * es) &&
                         l.smem <= ROWOPS_ONE_PASS_BYTES;
                ok = ok && per_sm >= 1 && l.grid >= 1 &&
                     (int64_t)l.grid <= blocks &&
                     (int64_t)l.grid <= h.sm_count * per_sm &&
                     ((int64_t)l.grid == blocks ||
                      (int64_t)l.grid == h.sm_count * per_sm);
                ++configs;
                if (!ok && bad++ < 10)
                    C_EXPECT(0,
                             "%s N=%lld vec %d: group %d slabs %d smem %zu "
                             "rows/block %lld grid %u",
                             rowops_dtype_name(dts[d]), (long long)n, vec,
                             l.group, l.slabs, l.smem,
                             (long long)l.rows_per_block, l.grid);
            }
        }
    }
    C_EXPECT(bad == 0, "%ld of %ld fast launches break an invariant", bad,
             configs);
    printf("fast launch: %ld (dtype, N, vector) configurations checked\n",
           configs);

    /* the shapes the issue names */
    rowops_cuda_launch l =
        rowops_cuda_fast_launch(&h, attr, ROWOPS_BF16, 128, 8, 65536);
    C_EXPECT(l.group == 8 && l.rows_per_block == 64 && l.slabs == 1,
             "QK-norm N=128 bf16: %d threads per row, %lld rows per block",
             l.group, (long long)l.rows_per_block);
    C_EXPECT(l.grid == 264, "QK-norm grid %u (more rows than the grid)",
             l.grid);
    l = rowops_cuda_fast_launch(&h, attr, ROWOPS_BF16, 4096, 8, 16384);
    C_EXPECT(l.group == 256 && l.slabs == 1 && l.rows_per_block == 2,
             "N=4096 bf16: group %d slabs %d", l.group, l.slabs);
    l = rowops_cuda_fast_launch(&h, attr, ROWOPS_BF16, 8192, 8, 1);
    C_EXPECT(l.group == 512 && l.slabs == 1 && l.grid == 1,
             "N=8192 bf16: group %d slabs %d grid %u", l.group, l.slabs,
             l.grid);
    l = rowops_cuda_fast_launch(&h, attr, ROWOPS_BF16, 65536, 8, 2048);
    C_EXPECT(l.group == 512 && l.slabs == 8 && l.smem == 131072 &&
                 l.grid == 132,
             "N=65536 bf16: group %d slabs %d smem %zu grid %u", l.group,
             l.slabs, l.smem, l.grid);
    l = rowops_cuda_fast_launch(&h, attr, ROWOPS_F32, 32768, 4, 4096);
    C_EXPECT(l.slabs == 8 && l.smem == 131072, "N=32768 f32: slabs %d",
             l.slabs);
    l = rowops_cuda_fast_launch(&h, attr, ROWOPS_BF16, 33, 1, 7);
    C_EXPECT(l.group == 16 && l.slabs == 1, "N=33 bf16 scalar: group %d",
             l.group);
}

static void tile_tests(void)
{
    const rowops_cuda_device a = rowops_cuda_device_sm80(108);
    const rowops_cuda_kernel_attr attr = {48, 9536};
    long bad = 0;
    for (int64_t n = 0; n <= (1 << 17); ++n) {
        for (int rows_fast = 0; rows_fast < 2; ++rows_fast) {
            const int64_t rows = 1 + n % 97;
            const rowops_cuda_launch l = rowops_cuda_tile_launch(
                &a, attr, ROWOPS_CUDA_STRIDED_KERNEL, n, rows, rows_fast);
            const int64_t tr = l.group;
            const int64_t want_tr =
                rows_fast || n == 0
                    ? 32
                    : (ROWOPS_CUDA_TILE_ELEMS / pow2_ge(n) < 1
                           ? 1
                           : (ROWOPS_CUDA_TILE_ELEMS / pow2_ge(n) > 32
                                  ? 32
                                  : ROWOPS_CUDA_TILE_ELEMS / pow2_ge(n)));
            const int ok =
                l.threads == ROWOPS_CUDA_TILE_THREADS && tr == want_tr &&
                (tr & (tr - 1)) == 0 && l.rows_per_block == tr && l.smem == 0 &&
                l.grid >= 1 && (int64_t)l.grid <= (rows + tr - 1) / tr;
            if (!ok && bad++ < 10)
                C_EXPECT(0, "tile N=%lld rows_fast %d: tr %lld grid %u",
                         (long long)n, rows_fast, (long long)tr, l.grid);
        }
    }
    C_EXPECT(bad == 0, "%ld tile launches break an invariant", bad);
    rowops_cuda_launch l = rowops_cuda_tile_launch(
        &a, attr, ROWOPS_CUDA_BACKWARD_KERNEL, 4096, 1 << 20, 0);
    C_EXPECT(l.group == 1 &&
                 l.grid == 108u * (unsigned)rowops_cuda_blocks_per_sm(
                                      &a, attr, ROWOPS_CUDA_TILE_THREADS, 0),
             "backward row-major N=4096: tr %d grid %u", l.group, l.grid);
    l = rowops_cuda_dweight_launch(4097);
    C_CHECK(l.threads == ROWOPS_CUDA_FINISH_THREADS && l.grid == 17);
    l = rowops_cuda_dweight_launch(0);
    C_CHECK(l.grid == 1);
}

static void name_tests(void)
{
    char buf[96];
    C_EXPECT_STR(rowops_cuda_kernel_name(
                     ROWOPS_CUDA_FAST_KERNEL, ROWOPS_OP_FUSED_ADD_RMS_NORM,
                     ROWOPS_BF16, ROWOPS_F32, 8, buf, sizeof buf),
                 "rowops_fast_fused_bf16_wf32_v16", "fast fused");
    C_EXPECT_STR(rowops_cuda_kernel_name(ROWOPS_CUDA_FAST_KERNEL,
                                         ROWOPS_OP_RMS_NORM_ROWS, ROWOPS_F32,
                                         ROWOPS_F32, 1, buf, sizeof buf),
                 "rowops_fast_rms_f32_v4", "fast rms");
    C_EXPECT_STR(rowops_cuda_kernel_name(
                     ROWOPS_CUDA_STRIDED_KERNEL, ROWOPS_OP_FUSED_ADD_RMS_NORM,
                     ROWOPS_F64, ROWOPS_F32, 1, buf, sizeof buf),
                 "rowops_strided_fused_f64_wf32", "strided");
    C_EXPECT_STR(rowops_cuda_kernel_name(ROWOPS_CUDA_BACKWARD_KERNEL,
                                         ROWOPS_OP_RMS_NORM_ROWS, ROWOPS_F16,
                                         ROWOPS_F16, 1, buf, sizeof buf),
                 "rowops_backward_rms_f16", "backward");
    C_EXPECT_STR(rowops_cuda_kernel_name(
                     ROWOPS_CUDA_DWEIGHT_KERNEL, ROWOPS_OP_FUSED_ADD_RMS_NORM,
                     ROWOPS_BF16, ROWOPS_BF16, 1, buf, sizeof buf),
                 "rowops_dweight_f32_wbf16", "dweight");
}

int main(void)
{
    collapse_tests();
    vector_tests();
    occupancy_tests();
    fast_tests();
    tile_tests();
    name_tests();
    return c_report("test_launch_config");
}
