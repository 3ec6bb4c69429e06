#define DECOMP 6
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d6
#include "cpu_colmajor_avx512.c"
