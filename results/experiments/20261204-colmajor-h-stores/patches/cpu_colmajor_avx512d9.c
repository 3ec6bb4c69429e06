#define DECOMP 0
#define HNT 1
#define HPW 0
#define rowops_cpu_colmajor_avx512 rowops_cpu_colmajor_avx512d9
#include "cpu_colmajor_avx512.c"
