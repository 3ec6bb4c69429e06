#define DECOMP 4
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d4
#include "cpu_colmajor_avx512.c"
