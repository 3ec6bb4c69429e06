/* Run-time CPU feature detection, with an override so tests can pretend a
 * feature is missing. */
#ifndef ROWOPS_CPU_FEATURES_H
#define ROWOPS_CPU_FEATURES_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    ROWOPS_CPU_AVX2 = 1u << 0,
    ROWOPS_CPU_FMA = 1u << 1,
    ROWOPS_CPU_F16C = 1u << 2,
    ROWOPS_CPU_AVX512F = 1u << 3,
    ROWOPS_CPU_AVX512BW = 1u << 4,
    /* Not an instruction set: the core runs 512-bit operations as two
     * 256-bit halves (AMD family 25, Zen 4, with AVX-512). Within the
     * cache the AVX2 kernel is then as fast or faster in 16-bit floats and
     * float32 (docs/dispatch.md). An override may set it on any CPU: it
     * only moves a choice between kernels the CPU can run. */
    ROWOPS_CPU_AVX512_HALF_RATE = 1u << 5,
    /* Not an instruction set either: the streaming kernels were measured
     * faster with their inputs prefetched non-temporally (AMD family 26,
     * Zen 5: kernels/cpu_fast_pipeline.h, prefetch_nta). Unmeasured on
     * the other host classes (Zen 4, AVX2-only EPYCs), which keep the L2
     * prefetch; ROWOPS_CPU_CAPABILITY=avx2 removes it with AVX-512, as an
     * AVX2-only host lacks it. Like the rate, an override may set it. */
    ROWOPS_CPU_PREFETCH_NTA = 1u << 6
};

/* The properties above: an override takes them as given. */
#define ROWOPS_CPU_PROPERTIES                                                  \
    (ROWOPS_CPU_AVX512_HALF_RATE | ROWOPS_CPU_PREFETCH_NTA)

/* What the fast AVX2 kernel needs. */
#define ROWOPS_CPU_FAST_FEATURES                                               \
    (ROWOPS_CPU_AVX2 | ROWOPS_CPU_FMA | ROWOPS_CPU_F16C)

/* What the fast AVX-512 kernel needs. */
#define ROWOPS_CPU_FAST512_FEATURES                                            \
    (ROWOPS_CPU_FAST_FEATURES | ROWOPS_CPU_AVX512F | ROWOPS_CPU_AVX512BW)

/* The features the kernels use: the detected ones within the capability
 * (below), or the override if one is set. */
unsigned rowops_cpu_features(void);

/* ROWOPS_CPU_CAPABILITY, read once, caps the features the kernels use, as
 * ATEN_CPU_CAPABILITY caps ATen's: "avx512" (all that are detected),
 * "avx2" (no AVX-512: the kernels and choices of an AVX2-only host),
 * "default" (no AVX2 either: the portable and strided kernels). Unset or
 * empty: no cap. Another value is not applied: the library warns once on
 * stderr, and opcost refuses to run (rowops_cpu_capability_parse). */
#define ROWOPS_CPU_CAPABILITY_ENV "ROWOPS_CPU_CAPABILITY"
/* The names it takes, for messages. */
#define ROWOPS_CPU_CAPABILITY_NAMES "avx512, avx2 or default"

/* 0 and *keep = the features value keeps (all for NULL or ""), or -1 where
 * value is not one of the names above. */
int rowops_cpu_capability_parse(const char *value, unsigned *keep);

/* The capability in effect: the variable's value, or NULL when it is
 * unset, empty or not applied. */
const char *rowops_cpu_capability(void);

/* The hardware's features, ignoring any override. */
unsigned rowops_cpu_features_detected(void);

/* mask >= 0 replaces the detected features (tests); -1 restores detection.
 * Returns the previous override (-1 if none). A mask can only remove
 * instruction sets the hardware has: requesting more is clipped
 * (ROWOPS_CPU_PROPERTIES are taken as given). */
int rowops_cpu_features_override(int mask);

/* "AVX2+FMA+F16C" style text for a feature mask (static buffer per call
 * site is the caller's: writes into buf). */
const char *rowops_cpu_features_text(unsigned mask, char *buf, unsigned len);

#ifdef __cplusplus
}
#endif

#endif
