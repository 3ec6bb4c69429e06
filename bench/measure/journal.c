#define _POSIX_C_SOURCE 200809L
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the handler reads: set before the handlers are installed (paths,
 * descriptors, messages) or written with the signals blocked (live). */
static volatile sig_atomic_t signal_count;
static volatile sig_atomic_t journal_live;
static int journal_fd[2] = {-1, -1};
static char journal_path[2][4200], final_path[2][4096];
static char stop_message[9000];

static void say(const char *s)
{
    ssize_t left = (ssize_t)strlen(s);
    while (left > 0) {
        const ssize_t n = write(2, s, (size_t)left);
        if (n <= 0)
            return;
        s += n;
        left -= n;
    }
}

/* Only async-signal-safe calls: write, fsync, rename, _exit. */
static void on_signal(int sig)
{
    const int n = ++signal_count;
    if (n == 1)
        say("\nopcost run: interrupted: finishing the current point, then "
            "writing every measured row (a third signal stops at once, "
            "keeping the finished points)\n");
    else if (n == 2)
        say("\nopcost run: interrupted again: still finishing the current "
            "point; one more signal stops at once, keeping the finished "
            "points\n");
    else if (journal_live) {
        fsync(journal_fd[0]);
        fsync(journal_fd[1]);
        /* the sidecar first: the CSV never names samples not in place */
        rename(journal_path[1], final_path[1]);
        rename(journal_path[0], final_path[0]);
        say(stop_message);
        _exit(128 + sig);
    }
}

struct opcost_journal {
    FILE *f[2]; /* rows, samples */
    size_t rows, samples;
    int failed;
    sigset_t mask;
};

static void block(const opcost_journal *j, int how)
{
    sigprocmask(how, &j->mask, NULL);
}

static void fail(opcost_journal *j, const char *what)
{
    if (!j->failed)
        fprintf(stderr,
                "opcost run: journal: %s (a third signal would lose the "
                "measured rows; the run goes on)\n",
                what);
    j->failed = 1;
}

int opcost_journal_open(opcost_journal **out, const char *out_path, char *err,
                        size_t errlen)
{
    *out = NULL;
    opcost_journal *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(err, errlen, "journal: out of memory");
        return -1;
    }
    snprintf(final_path[0], sizeof final_path[0], "%s", out_path);
    if (opcost_samples_path(out_path, final_path[1], sizeof final_path[1], err,
                            errlen)) {
        free(j);
        return -1;
    }
    char e[512] = "";
    for (int k = 0; k < 2; ++k) {
        /* a name of its own: O_EXCL|O_NOFOLLOW never opens a file or link
         * that was there (planted for the next pid, or a crashed run's),
         * and another name is tried instead */
        journal_fd[k] = -1;
        for (int again = 0; again < 100 && journal_fd[k] < 0; ++again) {
            if (again)
                snprintf(journal_path[k], sizeof journal_path[k],
                         "%.4095s.journal.%ld.%d", final_path[k],
                         (long)getpid(), again);
            else
                snprintf(journal_path[k], sizeof journal_path[k],
                         "%.4095s.journal.%ld", final_path[k], (long)getpid());
            journal_fd[k] = open(
                journal_path[k],
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
            if (journal_fd[k] < 0 && errno != EEXIST && errno != ELOOP)
                break;
        }
        j->f[k] = journal_fd[k] < 0 ? NULL : fdopen(journal_fd[k], "w");
        if (!j->f[k]) {
            snprintf(err, errlen, "journal: cannot create %s: %s",
                     journal_path[k], strerror(errno));
            for (int m = 0; m <= k; ++m) {
                if (j->f[m])
                    fclose(j->f[m]);
                else if (journal_fd[m] >= 0)
                    close(journal_fd[m]);
                if (journal_fd[m] >= 0) /* only a file it created */
                    unlink(journal_path[m]);
            }
            free(j);
            return -1;
        }
    }
    if (opcost_results_fprint(j->f[0], NULL, 0, 1, e, sizeof e) ||
        opcost_samples_fprint(j->f[1], NULL, 0, NULL, 0, 1, e, sizeof e) ||
        fflush(j->f[0]) || fflush(j->f[1]))
        fail(j, "cannot write its header");
    snprintf(stop_message, sizeof stop_message,
             "\nopcost run: stopped: the finished points are in %s and %s, "
             "marked incomplete (unsettled: opcost check exits 1 on "
             "them)\n",
             final_path[0], final_path[1]);
    sigemptyset(&j->mask);
    sigaddset(&j->mask, SIGINT);
    sigaddset(&j->mask, SIGTERM);
    journal_live = !j->failed;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_mask = j->mask;     /* one handler at a time */
    sa.sa_flags = SA_RESTART; /* and it stays installed */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    *out = j;
    return 0;
}

void opcost_journal_add(opcost_journal *j, const opcost_result *rows,
                        size_t nrows, const opcost_sample *samples,
                        size_t nsamples)
{
    if (j->failed)
        return;
    char e[1024] = "";
    block(j, SIG_BLOCK);
    int bad = 0;
    /* each row marked: a journal put in place of the results is never
     * taken for them (results_csv.h, OPCOST_NOTE_UNSETTLED) */
    for (size_t i = j->rows; i < nrows && !bad; ++i) {
        static opcost_result r;
        r = rows[i];
        snprintf(r.note, sizeof r.note, "%s%s%s", OPCOST_NOTE_UNSETTLED,
                 rows[i].note[0] ? "; " : "", rows[i].note);
        r.verdict[0] = '\0'; /* its p-value is not adjusted yet */
        bad = opcost_results_fprint(j->f[0], &r, 1, 0, e, sizeof e);
    }
    if (bad ||
        opcost_samples_fprint(j->f[1], rows, nrows, samples + j->samples,
                              nsamples - j->samples, 0, e, sizeof e) ||
        fflush(j->f[1]) || fflush(j->f[0])) {
        journal_live = 0; /* possibly half a line: never put in place */
        fail(j, e[0] ? e : "cannot append");
    }
    j->rows = nrows;
    j->samples = nsamples;
    block(j, SIG_UNBLOCK);
}

int opcost_interrupted(void)
{
    return signal_count;
}

void opcost_journal_hold(opcost_journal *j)
{
    block(j, SIG_BLOCK);
    journal_live = 0;
}

void opcost_journal_close(opcost_journal *j)
{
    for (int k = 0; k < 2; ++k) {
        fclose(j->f[k]);
        unlink(journal_path[k]);
    }
    block(j, SIG_UNBLOCK); /* a held signal now only counts */
    free(j);
}

int opcost_journal_keep(opcost_journal *j, char *csv, size_t len)
{
    int rc = j->failed ? -1 : 0;
    for (int k = 0; k < 2; ++k)
        if (fflush(j->f[k]) || fsync(fileno(j->f[k])))
            rc = -1;
    /* <out stem>.unsaved-<pid>.csv and its sidecar's name: a pair that
     * opcost check and compare read; renamed, so it needs no space */
    char side[4200];
    const size_t n = strlen(final_path[0]);
    const int csv_ext = n >= 4 && !strcmp(final_path[0] + n - 4, ".csv");
    snprintf(csv, len, "%.*s.unsaved-%ld.csv", (int)(csv_ext ? n - 4 : n),
             final_path[0], (long)getpid());
    char e[256];
    if (rc == 0 && opcost_samples_path(csv, side, sizeof side, e, sizeof e))
        rc = -1;
    if (rc == 0 && (link(journal_path[1], side) || link(journal_path[0], csv)))
        rc = -1;
    for (int k = 0; k < 2; ++k)
        fclose(j->f[k]);
    if (rc == 0) {
        unlink(journal_path[0]);
        unlink(journal_path[1]);
    } else {
        unlink(side);
        snprintf(csv, len, "%s", journal_path[0]);
    }
    block(j, SIG_UNBLOCK);
    free(j);
    return rc;
}
