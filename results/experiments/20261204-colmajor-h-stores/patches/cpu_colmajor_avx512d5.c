#define DECOMP 5
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d5
#include "cpu_colmajor_avx512.c"
