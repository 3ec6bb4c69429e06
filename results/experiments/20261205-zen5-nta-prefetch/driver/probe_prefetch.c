#include "rowops.h"
#include <immintrin.h>
static void pn(const rowops_call *c, int64_t b, int64_t e, int hint){
  size_t rb = c->x.sizes[1]*rowops_dtype_size(c->x.dtype);
  const char *x=(char*)c->x.data+b*rb, *r=(char*)c->residual.data+b*rb; char *h=(char*)c->residual_out.data+b*rb, *o=(char*)c->out.data+b*rb;
  size_t n=(e-b)*rb;
  for(size_t i=0;i<n;i+=64){
    if(hint==1){ _mm_prefetch(x+i+4096,_MM_HINT_NTA); _mm_prefetch(r+i+4096,_MM_HINT_NTA);} else if(hint==2){ _mm_prefetch(x+i+4096,_MM_HINT_T1); _mm_prefetch(r+i+4096,_MM_HINT_T1);}
    __m512 a=_mm512_load_ps((const float*)(x+i)), q=_mm512_load_ps((const float*)(r+i)); a=_mm512_add_ps(a,q);
    _mm512_stream_ps((float*)(h+i),a); _mm512_stream_ps((float*)(o+i),_mm512_mul_ps(a,q)); }
  _mm_sfence();
}
void pn0(const rowops_call *c, int64_t b, int64_t e){ pn(c,b,e,0); }
void pnnta(const rowops_call *c, int64_t b, int64_t e){ pn(c,b,e,1); }
void pnt1(const rowops_call *c, int64_t b, int64_t e){ pn(c,b,e,2); }
/* the rows mix (x read, out streamed), the same three prefetch forms */
static void cp(const rowops_call *c, int64_t b, int64_t e, int hint)
{
    size_t rb = c->x.sizes[1] * rowops_dtype_size(c->x.dtype);
    const char *x = (char *)c->x.data + b * rb;
    char *o = (char *)c->out.data + b * rb;
    size_t n = (e - b) * rb;
    for (size_t i = 0; i < n; i += 64) {
        if (hint == 1)
            _mm_prefetch(x + i + 8192, _MM_HINT_NTA);
        else if (hint == 2)
            _mm_prefetch(x + i + 8192, _MM_HINT_T1);
        _mm512_stream_ps((float *)(o + i), _mm512_load_ps((const float *)(x + i)));
    }
    _mm_sfence();
}
void cp0(const rowops_call *c, int64_t b, int64_t e) { cp(c, b, e, 0); }
void cpnta(const rowops_call *c, int64_t b, int64_t e) { cp(c, b, e, 1); }
void cpt1(const rowops_call *c, int64_t b, int64_t e) { cp(c, b, e, 2); }
