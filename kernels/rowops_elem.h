/* Loading and storing one element of any rowops dtype as float or double.
 * Used by the strided kernel and the tests; the switch is loop-invariant, so
 * the compiler unswitches the loops around it. */
#ifndef ROWOPS_ELEM_H
#define ROWOPS_ELEM_H

#include "rowops_half.h"
#include "rowops_tensor.h"

static inline float rowops_load_f(const void *base, int64_t i, rowops_dtype dt)
{
    switch (dt) {
    case ROWOPS_F16: return rowops_f16_to_f32(((const uint16_t *)base)[i]);
    case ROWOPS_BF16: return rowops_bf16_to_f32(((const uint16_t *)base)[i]);
    case ROWOPS_F64: return (float)((const double *)base)[i];
    default: return ((const float *)base)[i];
    }
}

static inline double rowops_load_d(const void *base, int64_t i, rowops_dtype dt)
{
    if (dt == ROWOPS_F64)
        return ((const double *)base)[i];
    return (double)rowops_load_f(base, i, dt);
}

/* Rounds a float once to dt (float64 stores the float exactly). */
static inline void rowops_store_f(void *base, int64_t i, rowops_dtype dt,
                                  float v)
{
    switch (dt) {
    case ROWOPS_F16: ((uint16_t *)base)[i] = rowops_f32_to_f16(v); break;
    case ROWOPS_BF16: ((uint16_t *)base)[i] = rowops_f32_to_bf16(v); break;
    case ROWOPS_F64: ((double *)base)[i] = (double)v; break;
    default: ((float *)base)[i] = v; break;
    }
}

static inline void rowops_store_d(void *base, int64_t i, rowops_dtype dt,
                                  double v)
{
    if (dt == ROWOPS_F64)
        ((double *)base)[i] = v;
    else
        rowops_store_f(base, i, dt, (float)v);
}

#endif
