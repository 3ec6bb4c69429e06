#include "gates.h"
#include "outfile.h"
#include "results_csv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char opcost_gates_header[] =
    "run_id,base_run_id,distribution,op,dtype,layout,path,variant,"
    "base_us,new_us,ratio,p_holm,regression";

static void number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
}

/* The file appended to must be gates.csv: its first line the header (a
 * results CSV or anything else is not appended to), and end in a newline
 * (a line cut by a full disk would join the next one). */
static int gates_ok(const char *what, const char *path, const char *data,
                    size_t n, char *err, size_t len)
{
    const size_t h = strlen(opcost_gates_header);
    const int head =
        n >= h && !strncmp(data, opcost_gates_header, h) &&
        (data[h] == '\n' || (data[h] == '\r' && data[h + 1] == '\n'));
    if (n && !head) {
        snprintf(err, len,
                 "%s: '%.900s' is not gates.csv (its first line is not '%s'): "
                 "nothing appended",
                 what, path, opcost_gates_header);
        return -1;
    }
    if (n && data[n - 1] != '\n') {
        snprintf(err, len,
                 "%s: '%.900s' ends in a cut line (a write that failed?): "
                 "mend or move it; nothing appended",
                 what, path);
        return -1;
    }
    return 0;
}

int opcost_gates_append(const char *what, const char *path, const char *run_id,
                        const char *base_run_id, const opcost_gate_row *rows,
                        size_t n, char *err, size_t len)
{
    /* a rewrite into a fresh temporary, renamed over the file: a full disk
     * leaves gates.csv as it was, never with half a line */
    opcost_outfile o;
    if (opcost_outfile_open_append(&o, what, path, gates_ok, err, len))
        return -1;
    FILE *f = o.f;
    if (ftell(f) == 0)
        fprintf(f, "%s\n", opcost_gates_header);
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *k = rows[i].key;
        const char *text[] = {run_id,  base_run_id, k->distribution,
                              k->op,   k->dtype,    k->layout,
                              k->path, k->variant};
        for (size_t t = 0; t < sizeof text / sizeof text[0]; ++t) {
            opcost_csv_text(f, text[t]);
            fputc(',', f);
        }
        const int incomplete = rows[i].incomplete && !rows[i].regression;
        /* an incomplete group's costs would be over part of its points */
        const double v[] = {incomplete ? NAN : rows[i].base_us,
                            incomplete ? NAN : rows[i].new_us,
                            incomplete ? NAN : rows[i].ratio,
                            incomplete ? NAN : rows[i].p_holm};
        for (size_t t = 0; t < sizeof v / sizeof v[0]; ++t) {
            number(f, v[t]);
            fputc(',', f);
        }
        if (incomplete)
            fputs("incomplete\n", f);
        else
            fprintf(f, "%d\n", rows[i].regression);
    }
    return opcost_outfile_commit(&o, err, len);
}
