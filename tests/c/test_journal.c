/* The run journal (bench/measure/journal.h) with hostile neighbours and a
 * full disk: links planted at its names (for this pid) are never opened,
 * written or removed; another name is taken; and when the results could
 * not be written, opcost_journal_keep leaves every row and sample as a
 * pair that opcost reads back (before, the journal was deleted and the
 * samples lost, issue 28 item 4). */
#define _GNU_SOURCE
#include "c_samples.h"
#include "c_tempdir.h"
#include "journal.h"
#include "results_csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void row_of(opcost_result *r, int i)
{
    opcost_result_init(r);
    snprintf(r->run_id, sizeof r->run_id, "20261203T000000Z-journal");
    snprintf(r->timestamp_utc, sizeof r->timestamp_utc, "2026-12-03T00:00:00Z");
    snprintf(r->git_sha, sizeof r->git_sha, "abc");
    snprintf(r->host, sizeof r->host, "j");
    snprintf(r->cpu, sizeof r->cpu, "cpu");
    snprintf(r->device, sizeof r->device, "cpu");
    snprintf(r->distribution, sizeof r->distribution, "d");
    snprintf(r->op, sizeof r->op, "rms_norm_rows");
    snprintf(r->dtype, sizeof r->dtype, "float32");
    snprintf(r->weight_dtype, sizeof r->weight_dtype, "float32");
    snprintf(r->layout, sizeof r->layout, "contiguous");
    snprintf(r->freq, sizeof r->freq, "1");
    snprintf(r->path, sizeof r->path, "kernel");
    snprintf(r->variant, sizeof r->variant, "auto");
    r->threads = 1;
    r->B = 8 + i;
    r->N = 128;
    r->reps = 1;
    r->n_samples = 2;
    r->median_us = r->min_us = 5;
}

static int is_link(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISLNK(st.st_mode);
}

int main(void)
{
    const char *dir = c_tempdir("opcost_test_journal");
    char out[1024], side[1100], victim[1100], planted[2][1200], err[1024];
    snprintf(out, sizeof out, "%s/run.csv", dir);
    snprintf(side, sizeof side, "%s/run.samples.csv", dir);
    c_write_file("victim.txt", "precious\n", victim, sizeof victim);
    snprintf(planted[0], sizeof planted[0], "%s.journal.%ld", out,
             (long)getpid());
    snprintf(planted[1], sizeof planted[1], "%s.journal.%ld", side,
             (long)getpid());
    for (int k = 0; k < 2; ++k)
        C_CHECK(symlink(victim, planted[k]) == 0);

    opcost_journal *j;
    C_EXPECT(opcost_journal_open(&j, out, err, sizeof err) == 0, "%s", err);
    opcost_result rows[2];
    row_of(&rows[0], 0);
    row_of(&rows[1], 1);
    const opcost_sample s[4] = {
        {0, 0, 0, 5, 0}, {0, 0, 1, 5, 1}, {1, 0, 0, 5, 0}, {1, 0, 1, 5, 1}};
    opcost_journal_add(j, rows, 1, s, 2);
    opcost_journal_add(j, rows, 2, s, 4);
    opcost_journal_hold(j);
    char kept[4300];
    C_EXPECT(opcost_journal_keep(j, kept, sizeof kept) == 0, "keep: %s", kept);

    FILE *f = fopen(victim, "r");
    char got[64] = "";
    if (f) {
        fgets(got, sizeof got, f);
        fclose(f);
    }
    C_EXPECT(!strcmp(got, "precious\n"), "the victim holds '%s'", got);
    C_EXPECT(is_link(planted[0]) && is_link(planted[1]),
             "the planted links were removed or replaced");
    char want[1200];
    snprintf(want, sizeof want, "%s/run.unsaved-%ld.csv", dir, (long)getpid());
    C_EXPECT(!strcmp(kept, want), "kept as '%s', want '%s'", kept, want);
    opcost_result *back;
    opcost_sample *sb;
    size_t nb = 0, ns = 0;
    C_EXPECT(
        opcost_results_read(kept, &back, &nb, err, sizeof err) == 0 &&
            opcost_samples_read(kept, back, nb, &sb, &ns, err, sizeof err) == 0,
        "the kept pair does not read back: %s", err);
    C_EXPECT(nb == 2 && ns == 4, "%zu rows, %zu samples kept", nb, ns);
    if (nb)
        free(back);
    if (ns)
        free(sb);

    /* an ordinary end removes its own files only */
    C_EXPECT(opcost_journal_open(&j, out, err, sizeof err) == 0, "%s", err);
    opcost_journal_hold(j);
    opcost_journal_close(j);
    C_EXPECT(is_link(planted[0]) && is_link(planted[1]),
             "closing removed links it did not make");
    char other[1300];
    snprintf(other, sizeof other, "%s.1", planted[0]);
    C_EXPECT(access(other, F_OK) != 0, "the journal's own file was left");
    return c_report("test_journal");
}
