/* The C numeric locale around printf and strtod, whatever locale the
 * process set: the results files' numbers read and write the same in any
 * locale (a decimal comma would split a field). Its includers define
 * _POSIX_C_SOURCE 200809L (locale_t, uselocale). */
#ifndef OPCOST_C_NUMERIC_H
#define OPCOST_C_NUMERIC_H

#include <locale.h>

typedef struct c_numeric_scope {
    locale_t old;
    int active;
} c_numeric_scope;

/* Enters the C numeric locale for this thread; leave with what it
 * returns. */
c_numeric_scope c_numeric_enter(void);
void c_numeric_leave(c_numeric_scope s);

#endif
