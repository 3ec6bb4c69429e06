/* ROWOPS_CPU_CAPABILITY (kernels/cpu_features.h): the names and what each
 * keeps, then, under the value this process was started with (ctest runs
 * it unset and with avx2, default and a name that is not one), the
 * features the kernels see and the kernels rowops_choose picks for a
 * contiguous and a transposed call. Descriptors only: rowops_choose never
 * reads data. */
#include "c_samples.h"
#include "cpu_features.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What avx2 removes: AVX-512 and the host-class properties (the 512-bit
 * rate, the non-temporal prefetch), which an AVX2-only host lacks. */
#define AVX512_BITS                                                            \
    (ROWOPS_CPU_AVX512F | ROWOPS_CPU_AVX512BW | ROWOPS_CPU_PROPERTIES)

static void check_names(void)
{
    static const struct {
        const char *value;
        int ok;
        unsigned keep;
    } cases[] = {
        {NULL, 0, ~0u},
        {"", 0, ~0u},
        {"avx512", 0, ~0u},
        {"avx2", 0, ~(unsigned)AVX512_BITS},
        {"default", 0, ~(unsigned)(AVX512_BITS | ROWOPS_CPU_FAST_FEATURES)},
        {"AVX2", -1, 0}, /* the names are lower case, as ATen's */
        {"avx3", -1, 0},
        {" avx2", -1, 0},
        {"avx2,avx512", -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        unsigned keep = 12345u;
        const int rc = rowops_cpu_capability_parse(cases[i].value, &keep);
        C_EXPECT(rc == cases[i].ok && (rc || keep == cases[i].keep),
                 "'%s': rc %d keep %#x, want rc %d keep %#x",
                 cases[i].value ? cases[i].value : "(unset)", rc, keep,
                 cases[i].ok, cases[i].keep);
    }
}

/* rms_norm_rows of B x N bfloat16, x row-major or transposed (x = t.T). */
static rowops_call rows_call(int64_t B, int64_t N, int transposed)
{
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = ROWOPS_OP_RMS_NORM_ROWS;
    c.eps = 1e-6;
    c.x = transposed ? c_desc2d(ROWOPS_BF16, 1u << 24, B, N, 1, B)
                     : c_desc2d(ROWOPS_BF16, 1u << 24, B, N, N, 1);
    c.out = c_desc2d(ROWOPS_BF16, 2u << 24, B, N, N, 1);
    c.rstd = c_desc2d(ROWOPS_F32, 3u << 24, B, 1, 1, 1);
    c.rstd.rank = 1;
    return c;
}

static void check_effect(void)
{
    const char *env = getenv(ROWOPS_CPU_CAPABILITY_ENV);
    unsigned keep;
    const int valid = rowops_cpu_capability_parse(env, &keep) == 0;
    const unsigned hw = rowops_cpu_features_detected();
    const unsigned have = rowops_cpu_features();
    const char *name = rowops_cpu_capability();
    printf("test_cpu_capability: %s=%s: detected %#x, the kernels see %#x\n",
           ROWOPS_CPU_CAPABILITY_ENV, env ? env : "(unset)", hw, have);
    C_EXPECT(have == (valid ? hw & keep : hw),
             "features %#x, want %#x (detected %#x)", have,
             valid ? hw & keep : hw, hw);
    const int named = valid && env && *env;
    C_EXPECT(named ? name && !strcmp(name, env) : name == NULL,
             "rowops_cpu_capability() = %s", name ? name : "NULL");
    const int wide = (have & ROWOPS_CPU_FAST512_FEATURES) ==
                     ROWOPS_CPU_FAST512_FEATURES,
              fast =
                  (have & ROWOPS_CPU_FAST_FEATURES) == ROWOPS_CPU_FAST_FEATURES;
    /* contiguous, outputs of 8 KiB: the ordinary-store kernel of the
     * widest instruction set the kernels may use */
    rowops_call c = rows_call(2, 2048, 0);
    rowops_choice got = rowops_choose(&c);
    const rowops_impl want = wide   ? ROWOPS_IMPL_CPU_FAST_AVX512
                             : fast ? ROWOPS_IMPL_CPU_FAST_AVX2
                                    : ROWOPS_IMPL_CPU_FAST_PORTABLE;
    C_EXPECT(got.impl == want, "contiguous: %s (%s), want %s",
             rowops_impl_name(got.impl), got.reason, rowops_impl_name(want));
    char tag[64];
    snprintf(tag, sizeof tag, "[%s=%s]", ROWOPS_CPU_CAPABILITY_ENV,
             named ? env : "");
    C_EXPECT((strstr(got.reason, tag) != NULL) == named,
             "contiguous: the reason '%s' and the capability '%s'", got.reason,
             named ? env : "(none)");
    /* transposed, B = 64: a column-major kernel where AVX2 is there (the
     * AVX-512 tiles or the AVX2 ones), else the strided one */
    c = rows_call(64, 4096, 1);
    got = rowops_choose(&c);
    const rowops_kernel_info *k = rowops_kernel_info_of(got.impl);
    if (!fast)
        C_EXPECT(got.impl == ROWOPS_IMPL_CPU_STRIDED, "transposed: %s (%s)",
                 rowops_impl_name(got.impl), got.reason);
    else if (!wide)
        C_EXPECT(got.impl == ROWOPS_IMPL_CPU_COLMAJOR_AVX2,
                 "transposed: %s (%s)", rowops_impl_name(got.impl), got.reason);
    else
        C_EXPECT(k && k->layout == ROWOPS_LAYOUT_COLUMNS, "transposed: %s (%s)",
                 rowops_impl_name(got.impl), got.reason);
}

int main(void)
{
    check_names();
    check_effect();
    return c_report("test_cpu_capability");
}
