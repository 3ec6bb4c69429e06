/* The one way the bench writes a file and the one way it reads one
 * (bench/io/): a link planted at an output's path is replaced, never
 * written through; a write that fails (a full disk, played by
 * RLIMIT_FSIZE) leaves the file at the path as it was, with no temporary
 * left; an append is a rewrite; an output that is an input (through a link
 * or a second name) is refused; a FIFO, /dev/zero, a link to it or a
 * directory is refused as input at once, never read until it ends; and a
 * run's CSV and sidecar are written as a pair: a full disk leaves the
 * older pair at the path whole; a median_us that contradicts its samples
 * is refused. */
#define _GNU_SOURCE
#include "c_samples.h"
#include "c_tempdir.h"
#include "infile.h"
#include "outfile.h"
#include "results_csv.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir;

static void join(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    if (buf) {
        const size_t got = fread(buf, 1, (1 << 20) - 1, f);
        buf[got] = '\0';
        /* a read error reads as a mismatch, not as the text read so far */
        if (ferror(f)) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

static int same_text(const char *path, const char *want)
{
    char *got = slurp(path);
    const int same = got && !strcmp(got, want);
    free(got);
    return same;
}

/* Temporaries left in dir (".<name>.tmp.XXXXXX"). */
static int temporaries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return n;
}

static int is_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* A full disk: files of this process may not grow past bytes (SIGXFSZ
 * ignored, so a write fails with EFBIG as with ENOSPC). */
static void limit_file_size(rlim_t bytes)
{
    struct rlimit r;
    getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = bytes; /* the soft limit: raised again after */
    signal(SIGXFSZ, SIG_IGN);
    C_CHECK(setrlimit(RLIMIT_FSIZE, &r) == 0);
}

static void unlimit_file_size(void)
{
    struct rlimit r;
    getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_FSIZE, &r);
}

static void test_planted_link(void)
{
    char victim[512], out[512], err[1024];
    join(victim, sizeof victim, "victim.txt");
    join(out, sizeof out, "out.csv");
    c_write_file("victim.txt", "precious\n", victim, sizeof victim);
    C_CHECK(symlink(victim, out) == 0);
    opcost_outfile o;
    C_EXPECT(opcost_outfile_open(&o, "--csv", out, err, sizeof err) == 0, "%s",
             err);
    fputs("new\n", o.f);
    C_EXPECT(opcost_outfile_commit(&o, err, sizeof err) == 0, "%s", err);
    C_EXPECT(same_text(victim, "precious\n"),
             "the victim behind a planted link was written");
    C_EXPECT(!is_link(out) && same_text(out, "new\n"),
             "the link was not replaced by the file");
    /* the same for an append (gates.csv) */
    unlink(out);
    C_CHECK(symlink(victim, out) == 0);
    C_EXPECT(opcost_outfile_open_append(&o, "--gates-out", out, NULL, err,
                                        sizeof err) == 0,
             "%s", err);
    fputs("appended\n", o.f);
    C_EXPECT(opcost_outfile_commit(&o, err, sizeof err) == 0, "%s", err);
    C_EXPECT(same_text(victim, "precious\n"),
             "an append wrote through a planted link");
    /* the link's target's contents kept, the link replaced */
    C_EXPECT(!is_link(out) && same_text(out, "precious\nappended\n"),
             "append: %s", out);
    C_CHECK(temporaries() == 0);
}

static void test_append(void)
{
    char path[512], err[1024];
    c_write_file("log.csv", "head\nline1\n", path, sizeof path);
    opcost_outfile o;
    C_EXPECT(opcost_outfile_open_append(&o, "--gates-out", path, NULL, err,
                                        sizeof err) == 0,
             "%s", err);
    fputs("line2\n", o.f);
    C_EXPECT(opcost_outfile_commit(&o, err, sizeof err) == 0, "%s", err);
    C_EXPECT(same_text(path, "head\nline1\nline2\n"), "append kept the old");
}

static void test_full_disk(void)
{
    char path[512], err[1024];
    c_write_file("full.csv", "old contents\n", path, sizeof path);
    limit_file_size(4096);
    opcost_outfile o;
    C_EXPECT(opcost_outfile_open(&o, "--out", path, err, sizeof err) == 0, "%s",
             err);
    for (int i = 0; i < 2000; ++i)
        fputs("0123456789\n", o.f);
    const int rc = opcost_outfile_commit(&o, err, sizeof err);
    unlimit_file_size();
    C_EXPECT(rc == -1 && strstr(err, "--out") && strstr(err, path) &&
                 strstr(err, "File too large"),
             "a write past the limit: rc %d, '%s'", rc, err);
    C_EXPECT(same_text(path, "old contents\n"),
             "a failed write changed the file at the path");
    C_CHECK(temporaries() == 0);
    /* an append that fails leaves no half line */
    limit_file_size(4096);
    C_EXPECT(opcost_outfile_open_append(&o, "--gates-out", path, NULL, err,
                                        sizeof err) == 0,
             "%s", err);
    for (int i = 0; i < 2000; ++i)
        fputs("0123456789\n", o.f);
    const int rc2 = opcost_outfile_commit(&o, err, sizeof err);
    unlimit_file_size();
    C_EXPECT(rc2 == -1 && same_text(path, "old contents\n"),
             "a failed append: rc %d, file changed", rc2);
    C_CHECK(temporaries() == 0);
}

static void test_not_input(void)
{
    char a[512], b[512], link_a[512], hard_a[512], err[1024];
    c_write_file("in-a.csv", "a\n", a, sizeof a);
    c_write_file("in-b.csv", "b\n", b, sizeof b);
    join(link_a, sizeof link_a, "link-a.csv");
    join(hard_a, sizeof hard_a, "hard-a.csv");
    C_CHECK(symlink(a, link_a) == 0 && link(a, hard_a) == 0);
    const char *paths[] = {a, NULL, b};
    const char *names[] = {"BASE.csv", "BASE's sidecar", "NEW.csv"};
    C_EXPECT(opcost_output_not_input("--csv", link_a, paths, names, 3, err,
                                     sizeof err) == -1 &&
                 strstr(err, "--csv") && strstr(err, "BASE.csv"),
             "through a link: %s", err);
    C_EXPECT(opcost_output_not_input("--csv", hard_a, paths, names, 3, err,
                                     sizeof err) == -1,
             "through a second name");
    C_EXPECT(opcost_output_not_input("--gates-out", b, paths, names, 3, err,
                                     sizeof err) == -1 &&
                 strstr(err, "NEW.csv"),
             "the same name: %s", err);
    char fresh[512];
    join(fresh, sizeof fresh, "fresh.csv");
    C_EXPECT(opcost_output_not_input("--csv", fresh, paths, names, 3, err,
                                     sizeof err) == 0,
             "a new file refused: %s", err);
}

static void test_readers(void)
{
    char fifo[512], zero_link[512], err[1024], *data;
    size_t n;
    join(fifo, sizeof fifo, "fifo.csv");
    join(zero_link, sizeof zero_link, "zero.csv");
    C_CHECK(mkfifo(fifo, 0600) == 0 && symlink("/dev/zero", zero_link) == 0);
    /* a FIFO with no writer: before, this waited forever */
    C_EXPECT(opcost_read_file(fifo, OPCOST_READ_MAX, &data, &n, err,
                              sizeof err) == -1 &&
                 strstr(err, "is a FIFO"),
             "FIFO: %s", err);
    C_EXPECT(opcost_read_file("/dev/zero", OPCOST_READ_MAX, &data, &n, err,
                              sizeof err) == -1 &&
                 strstr(err, "is a character device"),
             "/dev/zero: %s", err);
    C_EXPECT(opcost_read_file(zero_link, OPCOST_READ_MAX, &data, &n, err,
                              sizeof err) == -1 &&
                 strstr(err, "is a character device"),
             "a link to /dev/zero: %s", err);
    C_EXPECT(opcost_read_file(dir, OPCOST_READ_MAX, &data, &n, err,
                              sizeof err) == -1 &&
                 strstr(err, "is a directory"),
             "a directory: %s", err);
    char big[512];
    c_write_file("big.txt", "0123456789", big, sizeof big);
    C_EXPECT(opcost_read_file(big, 5, &data, &n, err, sizeof err) == -1 &&
                 strstr(err, "more than 5"),
             "the bound: %s", err);
    C_EXPECT(opcost_read_file(big, OPCOST_READ_MAX, &data, &n, err,
                              sizeof err) == 0 &&
                 n == 10 && !strcmp(data, "0123456789"),
             "a regular file: %s", err);
    free(data);
    /* the results reader and the history's probe go through it */
    opcost_result *rows;
    size_t nrows;
    C_EXPECT(opcost_results_read(fifo, &rows, &nrows, err, sizeof err) == -1 &&
                 strstr(err, "is a FIFO"),
             "results_read of a FIFO: %s", err);
    C_CHECK(!opcost_is_results_csv(fifo) && !opcost_is_results_csv(zero_link));
}

static void row_of(opcost_result *r, int i)
{
    opcost_result_init(r);
    snprintf(r->run_id, sizeof r->run_id, "20261203T000000Z-io");
    snprintf(r->timestamp_utc, sizeof r->timestamp_utc, "2026-12-03T00:00:00Z");
    snprintf(r->git_sha, sizeof r->git_sha, "abc");
    snprintf(r->host, sizeof r->host, "io");
    snprintf(r->cpu, sizeof r->cpu, "cpu");
    snprintf(r->device, sizeof r->device, "cpu");
    snprintf(r->distribution, sizeof r->distribution, "d");
    snprintf(r->op, sizeof r->op, "fused_add_rms_norm");
    snprintf(r->dtype, sizeof r->dtype, "bfloat16");
    snprintf(r->weight_dtype, sizeof r->weight_dtype, "bfloat16");
    snprintf(r->layout, sizeof r->layout, "contiguous");
    snprintf(r->freq, sizeof r->freq, "1");
    snprintf(r->path, sizeof r->path, "kernel");
    snprintf(r->variant, sizeof r->variant, "auto");
    r->threads = 1;
    r->B = 4 + i;
    r->N = 64;
    r->reps = 1;
    r->n_samples = 1;
    r->median_us = r->min_us = 10;
}

/* Item 4 of the hostile-files issue: the sidecar's write failing at the
 * end of a run replaced an older run's CSV and kept its old sidecar. */
static void test_run_pair(void)
{
    char path[512], side[600], err[1024];
    join(path, sizeof path, "run.csv");
    snprintf(side, sizeof side, "%s/run.samples.csv", dir);
    opcost_result rows[2];
    row_of(&rows[0], 0);
    row_of(&rows[1], 1);
    opcost_sample s[2] = {{0, 0, 0, 10, 0}, {1, 0, 0, 10, 0}};
    C_EXPECT(opcost_run_files_write(path, rows, 2, s, 2, err, sizeof err) == 0,
             "%s", err);
    char *csv_before = slurp(path), *side_before = slurp(side);
    /* a newer run of many samples: its sidecar does not fit */
    enum { NS = 20000 };
    opcost_sample *many = calloc(NS, sizeof *many);
    for (int i = 0; i < NS; ++i)
        many[i] = (opcost_sample){i % 2, 0, i / 2, 10, i / 2};
    rows[0].n_samples = rows[1].n_samples = NS / 2;
    limit_file_size(64 << 10);
    const int rc =
        opcost_run_files_write(path, rows, 2, many, NS, err, sizeof err);
    unlimit_file_size();
    C_EXPECT(rc == -1 && strstr(err, "File too large"), "rc %d: %s", rc, err);
    char *csv_after = slurp(path), *side_after = slurp(side);
    C_EXPECT(csv_before && csv_after && !strcmp(csv_before, csv_after),
             "the older run's CSV was replaced");
    C_EXPECT(side_before && side_after && !strcmp(side_before, side_after),
             "the older run's sidecar changed");
    C_CHECK(temporaries() == 0);
    /* and the pair reads back */
    opcost_result *back;
    opcost_sample *sb;
    size_t nb, ns;
    C_EXPECT(opcost_results_read(path, &back, &nb, err, sizeof err) == 0 &&
                 opcost_samples_read(path, back, nb, &sb, &ns, err,
                                     sizeof err) == 0 &&
                 nb == 2 && ns == 2,
             "%s", err);
    /* a median_us that contradicts its samples (1e308 where they say 10):
     * refused by the one sidecar reader, so check, compare and plot */
    back[1].median_us = 1e308;
    C_EXPECT(opcost_results_write(path, back, nb, err, sizeof err) == 0, "%s",
             err);
    free(sb);
    C_EXPECT(opcost_samples_read(path, back, nb, &sb, &ns, err, sizeof err) ==
                     -1 &&
                 strstr(err, "median_us 1e+308 contradicts its 1 samples"),
             "a contradicting median: %s", err);
    free(back);
    free(many);
    free(csv_before);
    free(csv_after);
    free(side_before);
    free(side_after);
}

int main(void)
{
    dir = c_tempdir("opcost_test_io");
    test_planted_link();
    test_append();
    test_full_disk();
    test_not_input();
    test_readers();
    test_run_pair();
    return c_report("test_io");
}
