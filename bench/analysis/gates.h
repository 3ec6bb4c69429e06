/* gates.csv: one line per distribution group a gate decided (opcost
 * compare --gate, opcost ab --gate), appended night by night:
 * run_id,base_run_id,distribution,op,dtype,layout,path,variant,base_us,
 * new_us,ratio,p_holm,regression. regression is 1 (slower, or broken),
 * 0, or `incomplete`: a group some point of which was not paired on both
 * sides (an interrupted run, a side that went away, a base not ok): no
 * verdict, never a pass (its costs, ratio and p_holm empty). Files from before
 * that value hold only 0 and 1 and read the same. The history plot marks
 * its regressions. */
#ifndef OPCOST_GATES_H
#define OPCOST_GATES_H

#include "row.h"

#include <stddef.h>

/* Its header line (without the newline). */
extern const char opcost_gates_header[];

typedef struct opcost_gate_row {
    const opcost_result *key; /* distribution, op, dtype, layout, path,
                                 variant */
    double base_us, new_us, ratio, p_holm;
    int regression;
    int incomplete; /* written as regression `incomplete` */
} opcost_gate_row;

/* Appends rows to path (its header first when the file is new), fields
 * quoted as the results CSV's are. 0, or -1 with err naming the option
 * (what) and the reason. */
int opcost_gates_append(const char *what, const char *path, const char *run_id,
                        const char *base_run_id, const opcost_gate_row *rows,
                        size_t n, char *err, size_t len);

#endif
