#define _GNU_SOURCE
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
__attribute__((target("clflushopt"))) static void flush(const char*p,size_t n){for(size_t i=0;i<n;i+=64)_mm_clflushopt((void*)(p+i));_mm_mfence();}
int main(void){
  size_t n=(size_t)256<<20;
  char*a=mmap(0,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  madvise(a,n,MADV_HUGEPAGE); memset(a,1,n);
  volatile long s=0;
  for(int rep=0;rep<5;++rep){
    double t0=now(); flush(a,n); double t1=now();
    /* stream-read it (as a call would) */
    for(size_t i=0;i<n;i+=64) s+=a[i];
    double t2=now();
    memset(a,rep,n); double t3=now(); flush(a,n); double t4=now();
    printf("flush after read %.2f ms (clean), read %.2f ms, memset %.2f ms, flush after write %.2f ms\n",(t1-t0)*1e3,(t2-t1)*1e3,(t3-t2)*1e3,(t4-t3)*1e3);
  }
  return 0;}
