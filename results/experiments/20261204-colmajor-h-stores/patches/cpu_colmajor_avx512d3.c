#define DECOMP 3
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d3
#include "cpu_colmajor_avx512.c"
