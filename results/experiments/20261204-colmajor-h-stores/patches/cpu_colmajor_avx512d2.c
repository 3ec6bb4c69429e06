#define DECOMP 2
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d2
#include "cpu_colmajor_avx512.c"
