#include "rowops.h"
#include <immintrin.h>
static void lag(const rowops_call *c, int64_t b, int64_t e, size_t L){
  size_t rb = c->x.sizes[1]*rowops_dtype_size(c->x.dtype);
  const char *x=(char*)c->x.data+b*rb, *r=(char*)c->residual.data+b*rb; char *h=(char*)c->residual_out.data+b*rb, *o=(char*)c->out.data+b*rb;
  size_t n=(e-b)*rb; __m512 acc=_mm512_setzero_ps();
  for(size_t p=0;p<n+L;p+=64){
    if(p<n){ acc=_mm512_add_ps(_mm512_load_ps((const float*)(x+p)), _mm512_load_ps((const float*)(r+p))); }
    if(p>=L){ _mm512_stream_ps((float*)(h+p-L),acc); _mm512_stream_ps((float*)(o+p-L),_mm512_mul_ps(acc,acc)); } }
  _mm_sfence();
}
#define LAG(k) void lag##k(const rowops_call *c, int64_t b, int64_t e){ lag(c,b,e,(size_t)k<<10); }
LAG(0) LAG(4) LAG(16) LAG(32) LAG(64) LAG(256)
void rdonly(const rowops_call *c, int64_t b, int64_t e){ size_t rb = c->x.sizes[1]*rowops_dtype_size(c->x.dtype);
  const char *x=(char*)c->x.data+b*rb, *r=(char*)c->residual.data+b*rb; size_t n=(e-b)*rb; __m512 acc=_mm512_setzero_ps();
  for(size_t p=0;p<n;p+=64) acc=_mm512_add_ps(acc,_mm512_add_ps(_mm512_load_ps((const float*)(x+p)), _mm512_load_ps((const float*)(r+p))));
  ((float*)c->rstd.data)[b]=_mm512_reduce_add_ps(acc); }
void wronly(const rowops_call *c, int64_t b, int64_t e){ size_t rb = c->x.sizes[1]*rowops_dtype_size(c->x.dtype);
  char *h=(char*)c->residual_out.data+b*rb, *o=(char*)c->out.data+b*rb; size_t n=(e-b)*rb; __m512 v=_mm512_set1_ps(1.f);
  for(size_t p=0;p<n;p+=64){ _mm512_stream_ps((float*)(h+p),v); _mm512_stream_ps((float*)(o+p),v);} _mm_sfence(); }
