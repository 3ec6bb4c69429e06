/* throwaway experiment: h staged in a per-thread scratch of 4096 KiB */
#define COLMAJOR_SCRATCH 1
#define SCRATCH_BYTES ((int64_t)2048 << 10)
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_x_scratch_l3
#include "cpu_colmajor_avx512.c"
