/* The C numeric locale (c_numeric.h). */
#define _POSIX_C_SOURCE 200809L
#include "c_numeric.h"

static locale_t c_numeric_locale(void)
{
    /* Idempotent: a race creates a second object, never a wrong one. */
    static locale_t loc = (locale_t)0;
    if (loc == (locale_t)0)
        loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return loc;
}

c_numeric_scope c_numeric_enter(void)
{
    c_numeric_scope s = {(locale_t)0, 0};
    const locale_t c = c_numeric_locale();
    if (c != (locale_t)0) {
        s.old = uselocale(c);
        s.active = s.old != (locale_t)0;
    }
    return s;
}

void c_numeric_leave(c_numeric_scope s)
{
    if (s.active)
        uselocale(s.old);
}
