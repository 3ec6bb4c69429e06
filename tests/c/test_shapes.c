/* The shape-file parser: a good file, each malformed case with its exact
 * file:line and column message, resolving sets by name and by path, and
 * every committed shape file. argv[1] is the source directory. */
#define _POSIX_C_SOURCE 200809L /* opendir */

#include "c_samples.h"
#include "c_tempdir.h"
#include "shape_file.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HEADER "op,B,N,dtype,layout,freq\n"
#define ROW "fused_add_rms_norm,8,4096,bfloat16,contiguous,0.5\n"

static void test_good_file(void)
{
    /* BOM, CRLF, comments before and after the header, blank lines. */
    static const char text[] =
        "\xEF\xBB\xBF# Set for the tests.\r\n"
        "# Source: made up.\r\n"
        "\r\n" HEADER "fused_add_rms_norm,8,4096,bfloat16,contiguous,0.5\r\n"
        "# a comment between rows is ignored\r\n"
        "\r\n"
        "rms_norm_rows,1,128,float32,transposed,2\r\n"
        "rms_norm_rows,3,7,float16,row_strided,1e-3\r\n"
        "fused_add_rms_norm,8,4096,float64,misaligned,0.25";
    char path[512], err[512] = "";
    c_write_bytes("good-set.csv", text, sizeof text - 1, path, sizeof path);
    opcost_shape_set set;
    C_CHECK(opcost_shape_set_load(path, &set, err, sizeof err) == 0);
    if (err[0])
        fprintf(stderr, "unexpected error: %s\n", err);
    C_EXPECT_STR(set.name, "good-set", "set name");
    C_EXPECT_STR(set.path, path, "set path");
    C_EXPECT_STR(set.comments, "# Set for the tests.\n# Source: made up.\n",
                 "set comments");
    C_CHECK(set.count == 4);
    if (set.count != 4)
        return;
    const opcost_shape *r = set.rows;
    C_CHECK(r[0].op == ROWOPS_OP_FUSED_ADD_RMS_NORM && r[0].B == 8 &&
            r[0].N == 4096 && r[0].dtype == ROWOPS_BF16 &&
            r[0].layout == OPCOST_CONTIGUOUS && r[0].freq == 0.5 &&
            r[0].line == 5);
    C_CHECK(r[1].op == ROWOPS_OP_RMS_NORM_ROWS && r[1].B == 1 &&
            r[1].N == 128 && r[1].dtype == ROWOPS_F32 &&
            r[1].layout == OPCOST_TRANSPOSED && r[1].freq == 2 &&
            r[1].line == 8);
    C_CHECK(r[2].dtype == ROWOPS_F16 && r[2].layout == OPCOST_ROW_STRIDED &&
            r[2].freq == 1e-3 && r[2].N == 7);
    C_CHECK(r[3].dtype == ROWOPS_F64 && r[3].layout == OPCOST_MISALIGNED &&
            r[3].line == 10);
    opcost_shape_set_free(&set);
}

static const c_bad_input bad_cases[] = {
    {"", "%s:1: end of file before the header 'op,B,N,dtype,layout,freq'"},
    {"# only\n# comments\n",
     "%s:3: end of file before the header 'op,B,N,dtype,layout,freq'"},
    {"op,B,N,dtype,layout\n" ROW,
     "%s:1: header must be exactly 'op,B,N,dtype,layout,freq', got "
     "'op,B,N,dtype,layout'"},
    {ROW, "%s:1: header must be exactly 'op,B,N,dtype,layout,freq', got "
          "'fused_add_rms_norm,8,4096,bfloat16,contiguous,0.5'"},
    {"# c\n" HEADER "\n",
     "%s:2: the header is followed by no rows; a shape set needs at least "
     "one"},
    {HEADER "fused_add_rms_norm,8,4096,bfloat16,contiguous\n",
     "%s:2: expected 6 columns (op,B,N,dtype,layout,freq), got 5"},
    {HEADER ROW "fused_add_rms_norm,8,4096,bfloat16,contiguous,1,x\n",
     "%s:3: expected 6 columns (op,B,N,dtype,layout,freq), got 7"},
    {HEADER "rms_norm,8,4096,bfloat16,contiguous,1\n",
     "%s:2: column 'op': must be one of rms_norm_rows, fused_add_rms_norm; "
     "got 'rms_norm'"},
    {HEADER "rms_norm_rows,8,4096,fp16,contiguous,1\n",
     "%s:2: column 'dtype': must be one of float32, float16, bfloat16, "
     "float64; got 'fp16'"},
    {HEADER "rms_norm_rows,8,4096,float16,strided,1\n",
     "%s:2: column 'layout': must be one of contiguous, transposed, "
     "row_strided, misaligned; got 'strided'"},
    {HEADER "rms_norm_rows,eight,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer, got 'eight'"},
    {HEADER "rms_norm_rows,8x,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer, got '8x'"},
    {HEADER "rms_norm_rows, 8,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer, got ' 8'"},
    {HEADER "rms_norm_rows,-8,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer, got '-8'"},
    {HEADER "rms_norm_rows,1.5,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer, got '1.5'"},
    {HEADER "rms_norm_rows,0,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer, got '0'"},
    {HEADER "rms_norm_rows,,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer, got ''"},
    {HEADER "rms_norm_rows,99999999999999999999,4096,float16,contiguous,1\n",
     "%s:2: column 'B': must be a positive integer no larger than "
     "9223372036854775807, got '99999999999999999999'"},
    {HEADER ROW "rms_norm_rows,8,0,float16,contiguous,1\n",
     "%s:3: column 'N': must be a positive integer, got '0'"},
    {HEADER "rms_norm_rows,8,4096 ,float16,contiguous,1\n",
     "%s:2: column 'N': must be a positive integer, got '4096 '"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,0\n",
     "%s:2: column 'freq': must be a finite number > 0, got '0'"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,-1\n",
     "%s:2: column 'freq': must be a finite number > 0, got '-1'"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,nan\n",
     "%s:2: column 'freq': must be a finite number > 0, got 'nan'"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,inf\n",
     "%s:2: column 'freq': must be a finite number > 0, got 'inf'"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,1e999\n",
     "%s:2: column 'freq': must be a finite number > 0, got '1e999'"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,0.5x\n",
     "%s:2: column 'freq': must be a finite number > 0, got '0.5x'"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous, 1\n",
     "%s:2: column 'freq': must be a finite number > 0, got ' 1'"},
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,\n",
     "%s:2: column 'freq': must be a finite number > 0, got ''"},
    /* Line 5 repeats line 3 and line 6 repeats line 2: the first in file
     * order is reported, though line 2's key sorts first. freq is not part
     * of the key. */
    {HEADER "rms_norm_rows,8,4096,float16,contiguous,1\n"
            "fused_add_rms_norm,1,64,float32,contiguous,1\n"
            "fused_add_rms_norm,1,64,float32,transposed,1\n"
            "fused_add_rms_norm,1,64,float32,contiguous,2\n"
            "rms_norm_rows,8,4096,float16,contiguous,3\n",
     "%s:5: row repeats line 3 (fused_add_rms_norm,1,64,float32,contiguous): "
     "each (op, B, N, dtype, layout) may appear once"},
};

C_READER(load_set, opcost_shape_set, opcost_shape_set_load,
         opcost_shape_set_free)

static void test_bad_files(void)
{
    c_expect_bad_inputs("bad shape file", load_set, bad_cases,
                        sizeof bad_cases / sizeof bad_cases[0]);
    /* A NUL byte, and a file that does not exist. */
    static const char nul[] = HEADER "rms_norm_rows,8,40\0"
                                     "96,float16,x,1\n";
    char path[512], want[1024], err[1024] = "";
    c_write_bytes("nul.csv", nul, sizeof nul - 1, path, sizeof path);
    C_CHECK(load_set(path, err, sizeof err) == -1);
    snprintf(want, sizeof want,
             "%s:2: contains a NUL byte; expected UTF-8 text", path);
    C_EXPECT_STR(err, want, "NUL byte");
    snprintf(path, sizeof path, "%s/missing.csv", c_tempdir("test_shapes"));
    C_CHECK(load_set(path, err, sizeof err) == -1);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory",
             path);
    C_EXPECT_STR(err, want, "missing file");
}

static void test_names(void)
{
    for (int i = 0; i < ROWOPS_OP_COUNT; ++i) {
        rowops_op op;
        C_CHECK(opcost_op_from_name(rowops_op_name((rowops_op)i), &op) == 0 &&
                op == (rowops_op)i);
    }
    for (int i = 0; i < ROWOPS_DTYPE_COUNT; ++i) {
        rowops_dtype dt;
        C_CHECK(opcost_dtype_from_name(rowops_dtype_name((rowops_dtype)i),
                                       &dt) == 0 &&
                dt == (rowops_dtype)i);
    }
    for (int i = 0; i < OPCOST_LAYOUT_COUNT; ++i) {
        opcost_layout l;
        C_CHECK(opcost_layout_from_name(opcost_layout_name((opcost_layout)i),
                                        &l) == 0 &&
                l == (opcost_layout)i);
    }
    rowops_op op;
    C_CHECK(opcost_op_from_name("unknown", &op) == -1);
    C_EXPECT_STR(opcost_layout_name(OPCOST_LAYOUT_COUNT), "unknown",
                 "layout name out of range");
}

static void test_resolve(void)
{
    char dir[512], good[512], other[512], path[4096], err[1024] = "",
                                                      want[2048];
    snprintf(dir, sizeof dir, "%s/sets", c_tempdir("test_shapes"));
    C_CHECK(mkdir(dir, 0700) == 0);
    c_write_file("sets/beta.csv", HEADER ROW, other, sizeof other);
    c_write_file("sets/alpha.csv", HEADER ROW, good, sizeof good);
    C_CHECK(opcost_shape_set_resolve("alpha", dir, path, sizeof path, err,
                                     sizeof err) == 0);
    C_EXPECT_STR(path, good, "resolved by name");
    C_CHECK(opcost_shape_set_resolve(good, "/nonexistent", path, sizeof path,
                                     err, sizeof err) == 0);
    C_EXPECT_STR(path, good, "resolved by path");
    /* Not a file, not a name: the error lists the sets, sorted. */
    C_CHECK(opcost_shape_set_resolve("gamma", dir, path, sizeof path, err,
                                     sizeof err) == -1);
    snprintf(want, sizeof want,
             "unknown shape set 'gamma': not a file, nor a name in %s/; "
             "available: alpha, beta",
             dir);
    C_EXPECT_STR(err, want, "unknown name");
    /* Paths that are not regular files. */
    C_CHECK(opcost_shape_set_resolve(dir, dir, path, sizeof path, err,
                                     sizeof err) == -1);
    snprintf(want, sizeof want, "%s: not a regular file", dir);
    C_EXPECT_STR(err, want, "a directory");
    C_CHECK(opcost_shape_set_resolve("no-such.csv", dir, path, sizeof path, err,
                                     sizeof err) == -1);
    C_EXPECT_STR(err, "no-such.csv: cannot open: No such file or directory",
                 "a missing file");
}

/* Every committed set parses; the model files and edges.csv are there. */
static void test_committed(const char *src)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/shapes", src);
    DIR *d = opendir(dir);
    C_CHECK(d != NULL);
    if (!d)
        return;
    int files = 0;
    const struct dirent *e;
    while ((e = readdir(d))) {
        const size_t n = strlen(e->d_name);
        if (n <= 4 || strcmp(e->d_name + n - 4, ".csv") != 0)
            continue;
        char path[8192], err[1024] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        opcost_shape_set set;
        const int rc = opcost_shape_set_load(path, &set, err, sizeof err);
        C_EXPECT(rc == 0, "committed set: %s", err);
        if (rc != 0)
            continue;
        C_CHECK(set.count > 0 && set.comments[0] == '#');
        opcost_shape_set_free(&set);
        files++;
    }
    closedir(d);
    /* 6 models x 2 traces + edges + bandwidth + transposed-decode,
     * transposed-rows, size-classes and ab-check */
    C_CHECK(files == 18);
}

/* edges.csv follows the one-pass limit of kernels/rowops.h: N at the limit
 * and one past it, for both ops, in float32 and bfloat16. */
static void test_edges_track_limits(const char *src)
{
    char path[4096], err[1024] = "";
    snprintf(path, sizeof path, "%s/shapes/edges.csv", src);
    opcost_shape_set set;
    C_CHECK(opcost_shape_set_load(path, &set, err, sizeof err) == 0);
    const rowops_dtype dts[] = {ROWOPS_F32, ROWOPS_BF16};
    for (int op = 0; op < ROWOPS_OP_COUNT; ++op)
        for (int i = 0; i < 2; ++i)
            for (int past = 0; past < 2; ++past) {
                const int64_t n = rowops_one_pass_limit(dts[i]) + past;
                int found = 0;
                for (size_t j = 0; j < set.count; ++j)
                    found |= set.rows[j].op == (rowops_op)op &&
                             set.rows[j].dtype == dts[i] && set.rows[j].N == n;
                C_EXPECT(found, "edges.csv lacks %s %s N = %lld",
                         rowops_op_name((rowops_op)op),
                         rowops_dtype_name(dts[i]), (long long)n);
            }
    opcost_shape_set_free(&set);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_shapes SOURCE_DIR\n");
        return 2;
    }
    c_tempdir("test_shapes");
    test_good_file();
    test_bad_files();
    test_names();
    test_resolve();
    test_committed(argv[1]);
    test_edges_track_limits(argv[1]);
    return c_report("test_shapes");
}
