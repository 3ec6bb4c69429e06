#define DECOMP 1
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d1
#include "cpu_colmajor_avx512.c"
