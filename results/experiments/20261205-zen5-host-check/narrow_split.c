/* Built against the tree at ff4d5a7 (build/ from make build):
 *   git show HEAD:kernels/cpu_colmajor_narrow.c | sed 's/void rowops_cpu_colmajor_narrow(/void narrow_x(/' > narrow_x.c
 *   gcc -O2 -Ikernels -mavx512f -mavx512bw -mavx2 -mfma -mf16c -c narrow_x.c
 *   gcc -O2 -Ikernels narrow_split.c narrow_x.o build/librowops_kernels.a -lm -lpthread
 *   ./a.out bf16|f32 B [warm] */
/* throwaway: the narrow kernel on 2 threads, rows split (as now) against
 * columns split (each thread: all rows, half the columns; one barrier),
 * and the contiguous kernel rows split; cold (buffer sets rotated beyond
 * the LLC) or warm; paired in alternation. */
#define _GNU_SOURCE
#include "rowops.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
void narrow_x(const rowops_call *c, int64_t b, int64_t e);
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static rowops_tensor T(void *d, rowops_dtype dt, int r, int64_t s0, int64_t s1, int64_t st0, int64_t st1){
  rowops_tensor t; memset(&t,0,sizeof t); t.data=d; t.dtype=dt; t.device=ROWOPS_DEVICE_CPU; t.rank=r;
  t.sizes[0]=s0; t.strides[0]=st0; if(r>1){t.sizes[1]=s1;t.strides[1]=st1;} return t;}
enum {SETS=160};
typedef struct { rowops_call tr, co, half[2]; } set_t;
static set_t sets[SETS];
static int64_t B=10, N=4096;
static atomic_int go, done_cnt, phase_cnt; static int mode; static int cur;
static void work(int t){
  set_t *s=&sets[cur];
  if(mode==0){ int64_t h=B/2; narrow_x(&s->tr, t?h:0, t?B:h); }
  else if(mode==1){ /* column split: half the columns, all rows, then a barrier */
    narrow_x(&s->half[t],0,B);
    atomic_fetch_add(&phase_cnt,1); while(atomic_load(&phase_cnt)%2) ;
  } else { int64_t h=B/2; rowops_cpu_fast_avx512(&s->co, t?h:0, t?B:h); }
}
static void *worker(void *a){ (void)a; cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(1,&cs); pthread_setaffinity_np(pthread_self(),sizeof cs,&cs);
  int seen=0; for(;;){ int g; while((g=atomic_load(&go))==seen) ; if(g<0) return 0; seen=g; work(1); atomic_fetch_add(&done_cnt,1);} }
static int cmpd(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  rowops_dtype dt = argc>1 && !strcmp(argv[1],"f32") ? ROWOPS_F32 : ROWOPS_BF16;
  B = argc>2? atoi(argv[2]):10; int warm = argc>3 && atoi(argv[3]);
  size_t es = dt==ROWOPS_F32?4:2;
  char *w=aligned_alloc(64,N*4); for(int i=0;i<N;i++){ if(es==4)((float*)w)[i]=1; else ((unsigned short*)w)[i]=0x3f80; }
  for(int k=0;k<SETS;k++){
    size_t sz=B*N*es+64;
    char *x=aligned_alloc(64,sz),*r=aligned_alloc(64,sz),*o=aligned_alloc(64,sz),*ro=aligned_alloc(64,sz),*xc=aligned_alloc(64,sz),*rc=aligned_alloc(64,sz);
    float *rs=aligned_alloc(64,256);
    for(size_t i=0;i<sz/2;i++){((unsigned short*)x)[i]=0x3f80+(i%7);((unsigned short*)r)[i]=0x3f00+(i%5);}
    memcpy(xc,x,sz); memcpy(rc,r,sz); memset(o,0,sz); memset(ro,0,sz);
    rowops_call c; memset(&c,0,sizeof c); c.op=ROWOPS_OP_FUSED_ADD_RMS_NORM; c.eps=1e-6;
    c.x=T(x,dt,2,B,N,1,B); c.residual=T(r,dt,2,B,N,1,B); c.weight=T(w,dt,1,N,0,1,0);
    c.out=T(o,dt,2,B,N,N,1); c.residual_out=T(ro,dt,2,B,N,N,1); c.rstd=T(rs,ROWOPS_F32,1,B,0,1,0);
    sets[k].tr=c;
    rowops_call cc=c; cc.x=T(xc,dt,2,B,N,N,1); cc.residual=T(rc,dt,2,B,N,N,1); sets[k].co=cc;
    for(int t=0;t<2;t++){ rowops_call h=c; int64_t n2=N/2, off=t*n2;
      h.x=T(x+off*B*es,dt,2,B,n2,1,B); h.residual=T(r+off*B*es,dt,2,B,n2,1,B); h.weight=T(w+off*es,dt,1,n2,0,1,0);
      h.out=T(o+off*es,dt,2,B,n2,N,1); h.residual_out=T(ro+off*es,dt,2,B,n2,N,1); h.rstd=T(rs+16*t,ROWOPS_F32,1,B,0,1,0);
      sets[k].half[t]=h; }
  }
  cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(0,&cs); pthread_setaffinity_np(pthread_self(),sizeof cs,&cs);
  pthread_t th; pthread_create(&th,0,worker,0);
  enum{R=3000}; static double tm[3][R]; int g=0;
  for(int i=0;i<R;i++) for(int m=0;m<3;m++){
    mode=m; cur = warm?0:(i*3+m)%SETS; atomic_store(&done_cnt,0);
    double t0=now(); atomic_store(&go,++g); work(0); while(atomic_load(&done_cnt)<1) ; tm[m][i]=now()-t0;
  }
  atomic_store(&go,-1); pthread_join(th,0);
  double med[3]; for(int m=0;m<3;m++){ qsort(tm[m],R,sizeof(double),cmpd); med[m]=tm[m][R/2]/1000; }
  printf("%s B=%ld %s: rows-split %.2f us, columns-split %.2f us, contiguous %.2f us -> contig/rows %.2f contig/cols %.2f\n",
    argc>1?argv[1]:"bf16",(long)B,warm?"warm":"cold",med[0],med[1],med[2],med[2]/med[0],med[2]/med[1]);
}
