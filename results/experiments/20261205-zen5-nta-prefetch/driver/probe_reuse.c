#include "rowops.h"
#include <immintrin.h>
/* probe + ingredients: W weight row (L1/L2), S scratch row store+load, O store order hhoo */
static void pv(const rowops_call *c, int64_t b, int64_t e, int W, int S, int O, size_t lim, int nta){
  size_t rb = c->x.sizes[1]*rowops_dtype_size(c->x.dtype);
  const char *x=(char*)c->x.data+b*rb, *r=(char*)c->residual.data+b*rb; char *h=(char*)c->residual_out.data+b*rb, *o=(char*)c->out.data+b*rb;
  const char *w=c->weight.data; static __thread float sc[16384] __attribute__((aligned(64)));
  size_t n=(e-b)*rb;
  for(size_t p=0;p<n;p+=128){ size_t q=p%(lim?lim:rb); if(nta){ _mm_prefetch(x+p+nta,_MM_HINT_NTA); _mm_prefetch(x+p+nta+64,_MM_HINT_NTA); _mm_prefetch(r+p+nta,_MM_HINT_NTA); _mm_prefetch(r+p+nta+64,_MM_HINT_NTA);}
    __m512 a=_mm512_add_ps(_mm512_load_ps((const float*)(x+p)), _mm512_load_ps((const float*)(r+p)));
    __m512 a2=_mm512_add_ps(_mm512_load_ps((const float*)(x+p+64)), _mm512_load_ps((const float*)(r+p+64)));
    if(S){ _mm512_store_ps(sc+q/4,a); _mm512_store_ps(sc+q/4+16,a2); a=_mm512_load_ps(sc+((q+(lim?lim:rb)/2)%(lim?lim:rb))/4); a2=_mm512_load_ps(sc+((q+(lim?lim:rb)/2)%(lim?lim:rb))/4+16);}
    __m512 y=a, y2=a2; if(W){ y=_mm512_mul_ps(a,_mm512_load_ps((const float*)(w+q))); y2=_mm512_mul_ps(a2,_mm512_load_ps((const float*)(w+q+64))); }
    if(O){ _mm512_stream_ps((float*)(h+p),a); _mm512_stream_ps((float*)(h+p+64),a2); _mm512_stream_ps((float*)(o+p),y); _mm512_stream_ps((float*)(o+p+64),y2); }
    else { _mm512_stream_ps((float*)(h+p),a); _mm512_stream_ps((float*)(o+p),y); _mm512_stream_ps((float*)(h+p+64),a2); _mm512_stream_ps((float*)(o+p+64),y2); } }
  _mm_sfence();
}
void pv000(const rowops_call *c, int64_t b, int64_t e){ pv(c,b,e,0,0,0,0,0); }
void pvWS(const rowops_call *c, int64_t b, int64_t e){ pv(c,b,e,1,1,0,0,0); }
void pvWS1k(const rowops_call *c, int64_t b, int64_t e){ pv(c,b,e,1,1,0,1024,0); }
void pvWS4k(const rowops_call *c, int64_t b, int64_t e){ pv(c,b,e,1,1,0,4096,0); }
void pvWS8k(const rowops_call *c, int64_t b, int64_t e){ pv(c,b,e,1,1,0,8192,0); }
void pvWSnta1k(const rowops_call *c, int64_t b, int64_t e){ pv(c,b,e,1,1,0,0,1024); }
void pvWSnta4k(const rowops_call *c, int64_t b, int64_t e){ pv(c,b,e,1,1,0,0,4096); }
