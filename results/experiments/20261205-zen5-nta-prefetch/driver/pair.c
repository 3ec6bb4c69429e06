/* throwaway: fused-op kernel variants on 256 MiB contiguous tensors, paired in
 * rounds with an op-mix probe (2 streams read, 2 streamed), 1 or 2 threads. */
#define _GNU_SOURCE
#include "rowops.h"
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
static void *halloc(size_t n){ void *p; if(posix_memalign(&p, 2<<20, n)) return 0; if(getenv("HUGE")) madvise(p, n, MADV_HUGEPAGE); return p; }
typedef void (*fn_t)(const rowops_call *, int64_t, int64_t);
#define V(n) void n(const rowops_call *, int64_t, int64_t);
VARS
#undef V
#define V(n) {#n, n},
static struct { const char *name; fn_t f; } vars[] = { VARS };
#undef V
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static rowops_tensor T(void *d, rowops_dtype dt, int r, int64_t s0, int64_t s1){
  rowops_tensor t; memset(&t,0,sizeof t); t.data=d; t.dtype=dt; t.device=ROWOPS_DEVICE_CPU; t.rank=r;
  t.sizes[0]=s0; t.strides[0]=r>1?s1:1; if(r>1){t.sizes[1]=s1;t.strides[1]=1;} return t;}
static void probe(const rowops_call *c, int64_t b, int64_t e){
  size_t rb = c->x.sizes[1]*rowops_dtype_size(c->x.dtype);
  const char *x=(char*)c->x.data+b*rb, *r=(char*)c->residual.data+b*rb; char *h=(char*)c->residual_out.data+b*rb, *o=(char*)c->out.data+b*rb;
  size_t n=(e-b)*rb;
  if(c->op==ROWOPS_OP_RMS_NORM_ROWS){ for(size_t i=0;i<n;i+=64) _mm512_stream_ps((float*)(o+i),_mm512_mul_ps(_mm512_load_ps((const float*)(x+i)),_mm512_set1_ps(2.f))); _mm_sfence(); return; }
  for(size_t i=0;i<n;i+=64){ __m512 a=_mm512_load_ps((const float*)(x+i)), q=_mm512_load_ps((const float*)(r+i)); a=_mm512_add_ps(a,q);
    _mm512_stream_ps((float*)(h+i),a); _mm512_stream_ps((float*)(o+i),_mm512_mul_ps(a,q)); }
  _mm_sfence();
}
static rowops_call call; static int64_t B; static int nthr=2; static fn_t cur;
static atomic_int go, done_cnt;
static void *worker(void *a){ (void)a; cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(1,&cs); pthread_setaffinity_np(pthread_self(),sizeof cs,&cs);
  int seen=0; for(;;){ int g; while((g=atomic_load(&go))==seen) _mm_pause(); if(g<0) return 0; seen=g; cur(&call,B/2,B); atomic_fetch_add(&done_cnt,1);} }
static double run(fn_t f){ double t0=now(); if(nthr==1){ f(&call,0,B); return now()-t0; }
  cur=f; atomic_store(&done_cnt,0); atomic_fetch_add(&go,1); f(&call,0,B/2); while(atomic_load(&done_cnt)<1) _mm_pause(); return now()-t0; }
static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static double med(double *v,int n){ double t[1000]; memcpy(t,v,n*sizeof *v); qsort(t,n,sizeof *t,cmpd); return n%2?t[n/2]:(t[n/2-1]+t[n/2])/2; }
static double pct(double *v,int n,double p){ double t[1000]; memcpy(t,v,n*sizeof *v); qsort(t,n,sizeof *t,cmpd); return t[(int)(p*(n-1)+.5)]; }
int main(int argc,char**argv){
  rowops_dtype dt = !strcmp(argv[1],"f32")?ROWOPS_F32:!strcmp(argv[1],"f16")?ROWOPS_F16:ROWOPS_BF16;
  int64_t N=atoll(argv[2]); nthr=atoi(argv[3]); int rounds=atoi(argv[4]);
  size_t es=rowops_dtype_size(dt), bytes=(size_t)(argc>6?atoi(argv[6]):256)<<20; B=bytes/(N*es);
  int nv=sizeof vars/sizeof *vars;
  char *x=halloc(bytes),*r=halloc(bytes),*h=halloc(bytes),*o=halloc(bytes);
  char *w=aligned_alloc(64,N*4); float *rs=aligned_alloc(64,B*4);
  for(size_t i=0;i<bytes/2;i++){((unsigned short*)x)[i]=es==4?0x3f80:0x3f80+(i%7);((unsigned short*)r)[i]=es==4?0x3f00:0x3f00+(i%5);}
  for(int64_t i=0;i<N;i++){ if(es==4)((float*)w)[i]=1; else ((unsigned short*)w)[i]=dt==ROWOPS_F16?0x3c00:0x3f80; }
  memset(h,0,bytes); memset(o,0,bytes);
  memset(&call,0,sizeof call); call.op=getenv("RMS")?ROWOPS_OP_RMS_NORM_ROWS:ROWOPS_OP_FUSED_ADD_RMS_NORM; call.eps=1e-6;
  call.x=T(x,dt,2,B,N); call.residual=T(r,dt,2,B,N); if(getenv("TRANS")){ call.x.strides[0]=1; call.x.strides[1]=B; call.residual.strides[0]=1; call.residual.strides[1]=B; } call.weight=T(w,dt,1,N,0); call.out=T(o,dt,2,B,N); call.residual_out=T(h,dt,2,B,N); call.rstd=T(rs,ROWOPS_F32,1,B,0);
  cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(0,&cs); pthread_setaffinity_np(pthread_self(),sizeof cs,&cs);
  pthread_t th; if(nthr==2) pthread_create(&th,0,worker,0);
  static double tv[16][1000], tp[1000];
  { char *o0=malloc(bytes),*h0=malloc(bytes); float *r0=malloc(B*4); run(vars[0].f); memcpy(o0,o,bytes); memcpy(h0,h,bytes); memcpy(r0,rs,B*4);
    for(int v=1;v<nv;v++){ memset(o,0,bytes); memset(h,0,bytes); run(vars[v].f); if(memcmp(o0,o,bytes)||memcmp(h0,h,bytes)||memcmp(r0,rs,B*4)) printf("MISMATCH %s\n",vars[v].name); }
    free(o0); free(h0); free(r0); }
  for(int k=0;k<3;k++){ run(probe); for(int v=0;v<nv;v++) run(vars[v].f); }
  for(int i=0;i<rounds;i++){ double a=run(probe); for(int j=0;j<nv;j++){ int v=(i+j)%nv; tv[v][i]=run(vars[v].f);} tp[i]=(a+run(probe))/2; }
  double gb=(getenv("RMS")?2.0:4.0)*bytes/1e9; double pg[1000]; for(int i=0;i<rounds;i++) pg[i]=gb/tp[i];
  printf("%s N=%lld B=%lld thr=%d probe GB/s med %.1f [%.1f..%.1f]\n",argv[1],(long long)N,(long long)B,nthr,med(pg,rounds),pct(pg,rounds,0),pct(pg,rounds,1));
  double thr_gb = argc>5 ? atof(argv[5]) : 80;
  for(int cls=0;cls<2;cls++){ int idx[1000],m=0; for(int i=0;i<rounds;i++) if((pg[i]>=thr_gb)==cls) idx[m++]=i;
    if(!m) continue; printf(" %s rounds (probe %s %.0f GB/s): %d\n",cls?"FULL":"slow",cls?">=":"<",thr_gb,m);
  for(int v=0;v<nv;v++){ double fr[1000],rel[1000]; for(int k=0;k<m;k++){ int i=idx[k]; fr[k]=tp[i]/tv[v][i]; rel[k]=tv[v][i]/tv[0][i]; }
    printf("  %-10s frac %.3f [%.3f..%.3f]  time/v0 x%.3f [%.3f..%.3f]\n",vars[v].name,med(fr,m),pct(fr,m,.25),pct(fr,m,.75),med(rel,m),pct(rel,m,.25),pct(rel,m,.75)); } }
  if(nthr==2){ atomic_store(&go,-1); pthread_join(th,0);} return 0; }
