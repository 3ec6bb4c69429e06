#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <omp.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define PF(p) _mm_prefetch((const char*)(p)+4096,_MM_HINT_T1)
__attribute__((target("avx512f"))) static void c512(double*c,const double*a,size_t n){for(size_t i=0;i+8<=n;i+=8){PF(a+i);_mm512_stream_pd(c+i,_mm512_loadu_pd(a+i));}}
__attribute__((target("avx2"))) static void c256(double*c,const double*a,size_t n){for(size_t i=0;i+8<=n;i+=8){PF(a+i);_mm256_stream_pd(c+i,_mm256_loadu_pd(a+i));_mm256_stream_pd(c+i+4,_mm256_loadu_pd(a+i+4));}}
__attribute__((target("avx512f"))) static void a512(double*c,double*d,const double*a,const double*b,size_t n){__m512d s=_mm512_set1_pd(3);for(size_t i=0;i+8<=n;i+=8){PF(a+i);PF(b+i);__m512d h=_mm512_add_pd(_mm512_loadu_pd(a+i),_mm512_loadu_pd(b+i));_mm512_stream_pd(c+i,h);_mm512_stream_pd(d+i,_mm512_mul_pd(s,h));}}
__attribute__((target("avx2"))) static void a256(double*c,double*d,const double*a,const double*b,size_t n){__m256d s=_mm256_set1_pd(3);for(size_t i=0;i+8<=n;i+=4){if(!(i&7)){PF(a+i);PF(b+i);}__m256d h=_mm256_add_pd(_mm256_loadu_pd(a+i),_mm256_loadu_pd(b+i));_mm256_stream_pd(c+i,h);_mm256_stream_pd(d+i,_mm256_mul_pd(s,h));}}
int main(int argc,char**argv){
  size_t n=(size_t)atol(argv[1])<<17; /* MiB -> doubles */
  double *a=aligned_alloc(64,n*8),*b=aligned_alloc(64,n*8),*c=aligned_alloc(64,n*8),*d=aligned_alloc(64,n*8);
  memset(a,0,n*8);memset(b,0,n*8);memset(c,0,n*8);memset(d,0,n*8);
  for(int kind=0;kind<2;kind++){
   double lr[64];int m=0;
   for(int r=0;r<40;r++){
    double t[2];
    for(int w=0;w<2;w++){int ww=(r&1)?1-w:w; double t0=now();
      #pragma omp parallel
      {int nt=omp_get_num_threads(),id=omp_get_thread_num(); size_t lo=n/nt*id&~7ul, hi=(id==nt-1)?n:(n/nt*(id+1)&~7ul);
       if(kind==0){ if(ww==0) c512(c+lo,a+lo,hi-lo); else c256(c+lo,a+lo,hi-lo);} else { if(ww==0) a512(c+lo,d+lo,a+lo,b+lo,hi-lo); else a256(c+lo,d+lo,a+lo,b+lo,hi-lo);} _mm_sfence();}
      t[ww]=now()-t0;}
    if(r>=4) lr[m++]=log(t[1]/t[0]);
   }
   double s=0,s2=0;for(int i=0;i<m;i++){s+=lr[i];s2+=lr[i]*lr[i];} double mu=s/m,sd=sqrt(s2/m-mu*mu);
   printf("%s %zu MiB threads %d: t256/t512 = %.4f +- %.4f (95%%)\n",kind?"add2":"copy",n>>17,omp_get_max_threads(),exp(mu),1.96*sd/sqrt(m));
  }
}
