/* Malformed inputs, one table for both bench parsers: each class of damage
 * is written as a shape file and (where the results CSV has such a rule) as
 * a results CSV, and each refusal must name file:line, so a user can find
 * the bad row. The valid classes (CRLF, byte-order mark) must parse. */
#include "c_samples.h"
#include "c_tempdir.h"
#include "results_csv.h"
#include "shape_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How a case damages an otherwise valid file. */
typedef enum damage {
    BAD_ROW, /* the last row is replaced (shape file line 4, results 3) */
    EMPTY,   /* zero bytes */
    CRLF,    /* every "\n" becomes "\r\n" */
    BOM      /* a UTF-8 byte-order mark starts the file */
} damage;

/* For the results CSV: how its second row is changed. */
typedef enum results_edit {
    R_NONE,  /* the class does not apply to the results CSV */
    R_AS_IS, /* the damage alone (EMPTY, CRLF, BOM) */
    R_SET,   /* column col gets value */
    R_DROP,  /* the last field is removed */
    R_APPEND /* one more field */
} results_edit;

typedef struct malformed_case {
    const char *name;
    damage damage;
    /* Shape file: the row put on line 4 (BAD_ROW only), and a piece of the
     * message that must follow "path:line: "; NULL means it must parse. */
    const char *shape_row;
    const char *shape_want;
    int shape_line;
    /* Results CSV: the edit, and likewise the message. */
    results_edit results;
    const char *col;
    const char *value;
    const char *results_want;
    int results_line;
} malformed_case;

static const malformed_case cases[] = {
    {"missing column", BAD_ROW, "rms_norm_rows,4,64,float32,contiguous",
     "expected 6 columns", 4, R_DROP, NULL, NULL, "row has 41 fields", 3},
    {"extra column", BAD_ROW, "rms_norm_rows,8,64,float32,contiguous,1,x",
     "expected 6 columns", 4, R_APPEND, NULL, NULL, "row has 43 fields", 3},
    {"non-numeric value", BAD_ROW, "rms_norm_rows,abc,64,float32,contiguous,1",
     "column 'B': must be a positive integer", 4, R_SET, "B", "abc",
     "column B: \"abc\" is not an integer", 3},
    {"negative size", BAD_ROW, "rms_norm_rows,4,-64,float32,contiguous,1",
     "column 'N': must be a positive integer", 4, R_SET, "N", "-64",
     "N: -64 must be >= 0", 3},
    {"huge size", BAD_ROW,
     "rms_norm_rows,99999999999999999999,64,float32,contiguous,1",
     "column 'B': must be a positive integer no larger than", 4, R_SET, "B",
     "99999999999999999999", "column B: \"99999999999999999999\" is not", 3},
    /* op, dtype and layout are free text in the results CSV (a row may name
     * a variant this build does not know), so those classes are N/A. */
    {"unknown op", BAD_ROW, "rms_norm_cols,4,64,float32,contiguous,1",
     "column 'op': must be one of", 4, R_NONE, NULL, NULL, NULL, 0},
    {"unknown dtype", BAD_ROW, "rms_norm_rows,4,64,int8,contiguous,1",
     "column 'dtype': must be one of", 4, R_NONE, NULL, NULL, NULL, 0},
    {"unknown layout", BAD_ROW, "rms_norm_rows,4,64,float32,diagonal,1",
     "column 'layout': must be one of", 4, R_NONE, NULL, NULL, NULL, 0},
    {"empty file", EMPTY, NULL, "end of file before the header", 1, R_AS_IS,
     NULL, NULL, "empty file", 1},
    {"CRLF line endings", CRLF, NULL, NULL, 0, R_AS_IS, NULL, NULL, NULL, 0},
    /* The results reader does not skip a byte-order mark (results/README.md
     * promises none; the bench writes none), so only the shape file. */
    {"UTF-8 BOM", BOM, NULL, NULL, 0, R_NONE, NULL, NULL, NULL, 0},
};

static const char shape_valid[] = "# a comment line\n"
                                  "op,B,N,dtype,layout,freq\n"
                                  "rms_norm_rows,4,64,float32,contiguous,1\n"
                                  "fused_add_rms_norm,1,4096,bfloat16,"
                                  "transposed,0.5\n";

/* The header and first row of results/20261130T044923Z-vm.csv (schema
 * version 1, 42 fields, no quotes), the template of both results rows: a
 * committed file's format, which must keep loading and being checked. */
static const char results_header[] =
    "schema_version,run_id,timestamp_utc,git_sha,host,cpu,gpu,torch_version,"
    "device,threads,distribution,op,B,N,dtype,weight_dtype,layout,freq,path,"
    "variant,dispatch_path,cache_state,status,reps,n_samples,median_us,min_us,"
    "p90_us,mean_us,stddev_us,ci95_rel,compile_ms,kernel_us,conversion_us,"
    "launch_us,dispatch_us,idle_us,bytes,gbps,ceiling_gbps,frac_of_peak,note";
static const char results_row[] =
    "1,20261130T044923Z-vm,2026-11-30T04:49:23Z,6a4e93162084,vm,AMD EPYC,,"
    "2.15.0,cpu,2,llama-3.1-8b-conv,fused_add_rms_norm,1,4096,bfloat16,"
    "bfloat16,contiguous,0.0181048328,kernel,auto,cpu_fast_avx2,cold,ok,5,564,"
    "2.86388,2.211,3.05333,2.87516,0.318704,0.00619116,,2.86388,0,0,0,0,40964,"
    "14.3036,56.9141,0.25132,";

/* Applies the file-wide damage to text (a valid file) into out. */
static void apply_damage(damage d, const char *text, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    if (d == EMPTY)
        return;
    if (d == BOM)
        used += (size_t)snprintf(out, len, "\xEF\xBB\xBF");
    for (const char *p = text; *p && used + 3 < len; ++p) {
        if (d == CRLF && *p == '\n')
            out[used++] = '\r';
        out[used++] = *p;
    }
    out[used] = '\0';
}

/* "path:line: " (or "path:line:" for the results CSV's "line:col: ") must
 * begin err, and want must appear after it. */
static void expect_error(const char *what, const char *path, const char *err,
                         int line, const char *want)
{
    char prefix[2200];
    snprintf(prefix, sizeof prefix, "%s:%d:", path, line);
    C_EXPECT(strncmp(err, prefix, strlen(prefix)) == 0,
             "%s: error does not start with '%s': '%s'", what, prefix, err);
    C_EXPECT(strstr(err + strlen(prefix), want) != NULL,
             "%s: error lacks '%s': '%s'", what, want, err);
}

static void check_shape(size_t i, const malformed_case *c)
{
    char text[1024], path[2048], name[64], what[128];
    if (c->damage == BAD_ROW) {
        /* Keep the valid file's comment, header and first row. */
        const char *second = strstr(shape_valid, "fused_add");
        snprintf(text, sizeof text, "%.*s%s\n", (int)(second - shape_valid),
                 shape_valid, c->shape_row);
    } else {
        apply_damage(c->damage, shape_valid, text, sizeof text);
    }
    snprintf(name, sizeof name, "shape%zu.csv", i);
    snprintf(what, sizeof what, "shape file, %s", c->name);
    c_write_file(name, text, path, sizeof path);
    opcost_shape_set set;
    char err[4096] = "";
    const int rc = opcost_shape_set_load(path, &set, err, sizeof err);
    if (!c->shape_want) {
        C_EXPECT(rc == 0, "%s: refused: %s", what, err);
        if (rc == 0) {
            C_EXPECT(set.count == 2 && set.rows[1].N == 4096 &&
                         set.rows[1].layout == OPCOST_TRANSPOSED &&
                         strcmp(set.comments, "# a comment line\n") == 0,
                     "%s: %zu rows, or the rows or comments are wrong", what,
                     set.count);
            opcost_shape_set_free(&set);
        }
        return;
    }
    C_EXPECT(rc == -1, "%s: read without an error", what);
    if (rc == 0)
        opcost_shape_set_free(&set);
    else
        expect_error(what, path, err, c->shape_line, c->shape_want);
}

/* The results CSV's second data row (line 3) with one edit. */
static void results_bad_row(const malformed_case *c, char *out, size_t len)
{
    char fields[sizeof results_row];
    memcpy(fields, results_row, sizeof results_row);
    size_t used = 0, col = 0;
    size_t target = (size_t)-1; /* the column R_SET replaces */
    const size_t want = c->col ? strlen(c->col) : 0;
    size_t k = 0;
    for (const char *h = results_header; c->results == R_SET && *h; ++k) {
        const size_t n = strcspn(h, ",");
        if (n == want && !strncmp(h, c->col, n))
            target = k;
        h += n + (h[n] == ',');
    }
    out[0] = '\0';
    for (char *f = fields, *next; f; f = next, ++col) {
        next = strchr(f, ',');
        if (next)
            *next++ = '\0';
        if (c->results == R_DROP && !next)
            break;
        used += (size_t)snprintf(out + used, len - used, "%s%s", col ? "," : "",
                                 col == target ? c->value : f);
    }
    if (c->results == R_APPEND)
        used += (size_t)snprintf(out + used, len - used, ",x");
    snprintf(out + used, len - used, "\n");
}

static void check_results(size_t i, const malformed_case *c)
{
    if (c->results == R_NONE)
        return;
    char valid[4096], text[8192], row[2048];
    snprintf(valid, sizeof valid, "%s\n%s\n", results_header, results_row);
    if (c->results == R_AS_IS) {
        /* Two rows, so a CRLF between rows is exercised too. */
        char two[8192];
        snprintf(two, sizeof two, "%s%s\n", valid, results_row);
        apply_damage(c->damage, two, text, sizeof text);
    } else {
        results_bad_row(c, row, sizeof row);
        snprintf(text, sizeof text, "%s%s", valid, row);
    }
    char name[64], path[2048], what[128], err[4096] = "";
    snprintf(name, sizeof name, "results%zu.csv", i);
    snprintf(what, sizeof what, "results CSV, %s", c->name);
    c_write_file(name, text, path, sizeof path);
    opcost_result *rows = NULL;
    size_t n = 0;
    const int rc = opcost_results_read(path, &rows, &n, err, sizeof err);
    if (!c->results_want) {
        C_EXPECT(rc == 0, "%s: refused: %s", what, err);
        C_EXPECT(rc != 0 || (n == 2 && rows[1].N == 4096 &&
                             strcmp(rows[1].note, "") == 0),
                 "%s: %zu rows, or the rows are wrong", what, n);
        free(rows);
        return;
    }
    C_EXPECT(rc == -1 && rows == NULL && n == 0,
             "%s: read without an error (rc %d, %zu rows)", what, rc, n);
    free(rows);
    if (rc != 0)
        expect_error(what, path, err, c->results_line, c->results_want);
}

int main(void)
{
    c_tempdir("test_malformed");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        check_shape(i, &cases[i]);
        check_results(i, &cases[i]);
    }
    return c_report("test_malformed");
}
