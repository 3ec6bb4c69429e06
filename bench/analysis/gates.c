#include "gates.h"
#include "results_csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
}

int opcost_gates_append(const char *what, const char *path, const char *run_id,
                        const char *base_run_id, const opcost_gate_row *rows,
                        size_t n, char *err, size_t len)
{
    FILE *probe = fopen(path, "r");
    const int fresh = !probe;
    if (probe)
        fclose(probe);
    FILE *f = fopen(path, "a");
    if (!f) {
        snprintf(err, len, "%s: cannot open '%.900s': %s", what, path,
                 strerror(errno));
        return -1;
    }
    if (fresh)
        fputs("run_id,base_run_id,distribution,op,dtype,layout,path,variant,"
              "base_us,new_us,ratio,p_holm,regression\n",
              f);
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *k = rows[i].key;
        const char *text[] = {run_id,  base_run_id, k->distribution,
                              k->op,   k->dtype,    k->layout,
                              k->path, k->variant};
        for (size_t t = 0; t < sizeof text / sizeof text[0]; ++t) {
            opcost_csv_text(f, text[t]);
            fputc(',', f);
        }
        const double v[] = {rows[i].base_us, rows[i].new_us, rows[i].ratio,
                            rows[i].p_holm};
        for (size_t t = 0; t < sizeof v / sizeof v[0]; ++t) {
            number(f, v[t]);
            fputc(',', f);
        }
        fprintf(f, "%d\n", rows[i].regression);
    }
    errno = 0;
    const int bad = ferror(f) || fflush(f) != 0;
    const int saved = errno;
    if (fclose(f) != 0 || bad) {
        snprintf(err, len, "%s: cannot write '%.900s': %s", what, path,
                 strerror(saved   ? saved
                          : errno ? errno
                                  : EIO));
        return -1;
    }
    return 0;
}
