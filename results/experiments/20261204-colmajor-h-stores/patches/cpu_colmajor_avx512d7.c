#define DECOMP 6
#define HNT 0
#define HPW 1
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d7
#include "cpu_colmajor_avx512.c"
