/* opcost ab's workers (ab_sides.h). */
#define _GNU_SOURCE
#include "ab_sides.h"
#include "ab_wire.h"
#include "affinity.h"
#include "journal.h"
#include "omp_waits.h"
#include "timer.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* the loader's variables a worker does not inherit (--keep-loader-env) */
static const char *const loader_vars[] = {"LD_LIBRARY_PATH", "LD_PRELOAD",
                                          "PYTHONPATH"};
#define NLOADER_VARS (sizeof loader_vars / sizeof *loader_vars)

/* ---- the workers */

/* OMP_PLACES for the plan's threads: thread i on the i-th CPU this
 * process may use, as the coordinator's own (affinity.h). Through the
 * environment, so that libgomp binds them at its start in a build of any
 * age (the base of a nightly is the last accepted commit's). Empty where
 * the threads are not pinned. */
static void places_for(const opcost_plan *plan, char *out, size_t len)
{
    int cpus[1024];
    const int n = opcost_affinity_cpus(cpus, 1024);
    out[0] = '\0';
    if (plan->no_pin || plan->threads < 1 || n < plan->threads)
        return;
    size_t at = 0;
    for (int i = 0; i < plan->threads && at < len; ++i)
        at += (size_t)snprintf(out + at, len - at, "%s{%d}", i ? "," : "",
                               cpus[i]);
    if (at >= len)
        out[0] = '\0';
}

/* In a worker's child before its exec: its environment, its session
 * (a process group of its own: a Ctrl-C reaches the coordinator alone,
 * which stops the worker when the point is done, and the coordinator kills
 * the group, children included), its address layout. */
static void worker_environment(const opcost_ab_side *s, int keep_loader_env)
{
    /* its own build's library, not one the environment names */
    unsetenv("ROWOPS_LIBRARY");
    if (!keep_loader_env)
        for (size_t i = 0; i < NLOADER_VARS; ++i)
            unsetenv(loader_vars[i]);
    /* its OpenMP threads wait as the coordinator's (omp_waits.h) */
    opcost_omp_waits_set();
    /* the framework paths' outputs are each side's own memory: on
     * huge pages (glibc's malloc, where it has the tunable) their
     * placement in the caches is alike on both sides (a steady 3-35 %
     * between two processes of one build on 4 KiB pages) */
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 0);
    /* as python_embed.c sets it, for a base build from before it */
    setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", 0);
    /* both sides' threads on the same CPUs: on 2 vCPUs the two ran at
     * different speeds for seconds, and a pair whose sides ran on
     * different ones differed by that (affinity.h); this thread may
     * be pinned already, the worker starts from all of them */
    opcost_affinity_reset();
    if (s->places[0]) {
        setenv("OMP_PLACES", s->places, 1);
        setenv("OMP_PROC_BIND", "true", 1);
    }
    setsid();
    /* the same address layout in both (no ASLR): where code and data
     * land moves a process's speed by several per cent (branch
     * predictors and caches are indexed by address), which two
     * otherwise identical processes then do not share */
    personality(ADDR_NO_RANDOMIZE);
}

static int start_one(opcost_ab_side *s, int keep_loader_env, char *err,
                     size_t len)
{
    const pid_t parent = getpid();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
        snprintf(err, len, "%s: socketpair: %s", s->name, strerror(errno));
        return -1;
    }
    const pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, len, "%s: fork: %s", s->name, strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        /* the worker's end, kept over exec (dup clears FD_CLOEXEC) */
        const int fd = dup(sv[1]);
        char arg[32];
        snprintf(arg, sizeof arg, "%d", fd);
        /* dies with the coordinator, however it ends (exec keeps it) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        worker_environment(s, keep_loader_env);
        execl(s->opcost, s->opcost, "worker", arg, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    s->sock = sv[0];
    s->pid = pid;
    s->alive = 1;
    s->reaped = 0;
    s->why[0] = '\0';
    return 0;
}

/* How a reaped worker ended, into out. */
static void say_status(int status, char *out, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(out, len, "died of signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(out, len, "ended (status 0x%x)", (unsigned)status);
}

/* Kills a worker's process group (the worker and whatever it started)
 * and reaps it; *status how it ended (NULL: not wanted). */
static void kill_group(opcost_ab_side *s, int *status)
{
    int st = 0;
    if (s->pid > 0 && !s->reaped) {
        kill(-s->pid, SIGKILL);
        kill(s->pid, SIGKILL); /* were it not its group's leader yet */
        while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
            ;
        s->reaped = 1;
    }
    s->alive = 0;
    if (status)
        *status = st;
}

/* A worker that has closed its end: waits for it to end (AB_DEADLINE_QUIT_S at
 * most), then kills its group (whatever it left running) and reaps it.
 * Its status in *status; 0 when it ended on its own. */
static int reap(const opcost_ab_ctx *ab, opcost_ab_side *s, int *status)
{
    *status = 0;
    if (s->pid <= 0 || s->reaped)
        return 0;
    const int64_t until = opcost_now_ns() + (int64_t)(AB_DEADLINE_QUIT_S *
                                                      ab->deadline_scale * 1e9);
    siginfo_t info;
    for (;;) {
        memset(&info, 0, sizeof info);
        /* ended, not reaped yet: its pid (and so its group) stays ours */
        const int rc =
            waitid(P_PID, (id_t)s->pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if (rc == 0 && info.si_pid == s->pid)
            break;
        if ((rc < 0 && errno != EINTR) || opcost_now_ns() >= until) {
            kill_group(s, status);
            return -1;
        }
        usleep(10000);
    }
    kill_group(s, status);
    return 0;
}

/* A worker the run has lost: said on the console (side, PID, what),
 * its group killed, its points error from here on (its why). */
static void lose(opcost_ab_side *s, const char *what)
{
    snprintf(s->why, sizeof s->why, "the %s worker (PID %ld) %s", s->name,
             (long)s->pid, what);
    fprintf(stderr, "opcost ab: %s\n", s->why);
    kill_group(s, NULL);
}

/* A reply of exactly len bytes from a worker within seconds (times the
 * deadline scale; AB_DEADLINE_INTERRUPT_GRACE_S at most once the run is
 * interrupted), what says to what (for the console). 0; -1 when the
 * worker gave no answer in time (its group killed), died, closed its end
 * or answered out of protocol: s->why says which, the worker is lost. */
static int await_reply(const opcost_ab_ctx *ab, opcost_ab_side *s, void *msg,
                       size_t len, double seconds, const char *what)
{
    char why[400];
    if (!s->alive || s->reaped) {
        if (!s->why[0])
            snprintf(s->why, sizeof s->why, "the %s worker is gone", s->name);
        return -1;
    }
    const double limit = seconds * ab->deadline_scale;
    const int64_t start = opcost_now_ns();
    int64_t until = start + (int64_t)(limit * 1e9);
    int cut = 0;
    for (;;) {
        const int64_t now = opcost_now_ns();
        if (!cut && opcost_interrupted()) {
            cut = 1;
            const int64_t grace =
                now + (int64_t)(AB_DEADLINE_INTERRUPT_GRACE_S * 1e9);
            if (grace < until)
                until = grace;
        }
        if (now >= until) {
            snprintf(why, sizeof why,
                     "gave no answer in %.1f s to %s%s: its process group "
                     "killed",
                     (double)(now - start) / 1e9, what,
                     cut ? " (the run interrupted)" : "");
            lose(s, why);
            return -1;
        }
        /* slices of 100 ms: a signal between the check and the poll is
         * seen at the next */
        const int64_t left_ms = (until - now) / 1000000 + 1;
        struct pollfd p = {s->sock, POLLIN, 0};
        const int rc = poll(&p, 1, left_ms < 100 ? (int)left_ms : 100);
        if (rc < 0 && errno != EINTR) {
            snprintf(why, sizeof why, "could not be waited for: poll: %s",
                     strerror(errno));
            lose(s, why);
            return -1;
        }
        if (rc > 0)
            break;
    }
    if (ab_recv(s->sock, msg, len, NULL, NULL) == 0)
        return 0;
    if (errno == EPROTO) {
        snprintf(why, sizeof why,
                 "answered %s with a message of another size (another "
                 "protocol)",
                 what);
        lose(s, why);
        return -1;
    }
    const int e = errno;
    int status;
    char how[200];
    const int ended = reap(ab, s, &status) == 0;
    say_status(status, how, sizeof how);
    snprintf(why, sizeof why, "%s before its answer to %s%s%s",
             ended ? how : "closed its end and did not end", what,
             e && !ended ? ": " : "", e && !ended ? strerror(e) : "");
    snprintf(s->why, sizeof s->why, "the %s worker (PID %ld) %s", s->name,
             (long)s->pid, why);
    fprintf(stderr, "opcost ab: %s\n", s->why);
    return -1;
}

/* (ab_sides.h) */
int opcost_ab_exchange(const opcost_ab_ctx *ab, opcost_ab_side *s,
                       const void *q, size_t qlen, int fd, void *reply,
                       size_t rlen, double seconds, const char *what)
{
    if (s->alive && !s->reaped && ab_send(s->sock, q, qlen, fd)) {
        const int e = errno;
        int status;
        char how[200], why[400];
        const int ended = reap(ab, s, &status) == 0;
        say_status(status, how, sizeof how);
        snprintf(why, sizeof why, "%s before %s could be sent (%s)",
                 ended ? how : "closed its end and did not end", what,
                 strerror(e));
        snprintf(s->why, sizeof s->why, "the %s worker (PID %ld) %s", s->name,
                 (long)s->pid, why);
        fprintf(stderr, "opcost ab: %s\n", s->why);
        return -1;
    }
    return await_reply(ab, s, reply, rlen, seconds, what);
}

/* A worker that died of SIGBUS or SIGSEGV before its hello died in its
 * loader: which library it was mapping, found by starting it again as it
 * was with the loader's trace of its search and files (LD_DEBUG=libs,files,
 * on a pipe, 10 s at most): the last file it was mapping
 * (ab_library_in_trace). */
static void library_at_death(const opcost_ab_ctx *ab, const opcost_ab_side *s,
                             char *out, size_t len)
{
    out[0] = '\0';
    int p[2];
    if (pipe2(p, O_CLOEXEC))
        return;
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        dup2(p[1], 2);
        const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        worker_environment(s, ab->keep_loader_env);
        setenv("LD_DEBUG", "libs,files", 1);
        unsetenv("LD_DEBUG_OUTPUT");
        /* no socket: a worker that does get to run says its usage */
        execl(s->opcost, s->opcost, "worker", "-1", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    static char trace[1 << 18];
    size_t n = 0;
    const int64_t until = opcost_now_ns() + (int64_t)10e9;
    while (n + 1 < sizeof trace) {
        const int64_t left = (until - opcost_now_ns()) / 1000000;
        struct pollfd q = {p[0], POLLIN, 0};
        if (left <= 0 || poll(&q, 1, (int)left) <= 0)
            break;
        const ssize_t got = read(p[0], trace + n, sizeof trace - 1 - n);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    trace[n] = '\0';
    close(p[0]);
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    ab_library_in_trace(trace, out, len);
}

static int hello(const opcost_ab_ctx *ab, const opcost_plan *plan,
                 opcost_ab_side *s, char *err, size_t len)
{
    const ab_hello h = {AB_HELLO, OPCOST_AB_PROTOCOL_MIN, plan->threads,
                        plan->quick, plan->target_sample_us};
    ab_hello_reply r;
    if (opcost_ab_exchange(ab, s, &h, sizeof h, -1, &r, sizeof r,
                           AB_DEADLINE_HELLO_S, "its hello") == 0) {
        /* answered */
    } else if (strstr(s->why, "no answer")) {
        snprintf(err, len,
                 "--%s: %s: %s (a build whose opcost does not serve opcost "
                 "ab's workers, or hangs)",
                 s->name, s->opcost, s->why);
        return -1;
    } else if (strstr(s->why, "(Bus error)") ||
               strstr(s->why, "(Segmentation fault)")) {
        char lib[1400];
        library_at_death(ab, s, lib, sizeof lib);
        snprintf(err, len,
                 "--%s: %s: %s: a library it loads could not be mapped%s%s",
                 s->name, s->opcost, s->why, lib[0] ? ": " : "",
                 lib[0] ? lib : " (a truncated or damaged file)");
        return -1;
    } else {
        kill_group(s, NULL);
        snprintf(err, len,
                 "--%s: %s worker did not answer (%s): a build from before "
                 "opcost ab or of a protocol before %d, or it could not "
                 "start",
                 s->name, s->opcost, s->why[0] ? s->why : "it quit",
                 OPCOST_AB_PROTOCOL_MIN);
        return -1;
    }
    if (!r.ok) {
        snprintf(err, len, "--%s: %s worker: %s", s->name, s->opcost, r.error);
        return -1;
    }
    snprintf(s->git_sha, sizeof s->git_sha, "%s", r.git_sha);
    snprintf(s->torch_version, sizeof s->torch_version, "%s", r.torch_version);
    s->protocol = (int)r.protocol;
    char why[1200];
    if (ab_library_mapped(s->pid, "librowops_torch", &s->lib, why, sizeof why))
        fprintf(stderr, "opcost ab: the %s worker (PID %ld): its library: %s\n",
                s->name, (long)s->pid, why);
    return 0;
}

/* Whether two commits claimed differ ("unknown" claims nothing). */
static int claims_differ(const char *a, const char *b)
{
    return a[0] && b[0] && strcmp(a, "unknown") && strcmp(b, "unknown") &&
           strcmp(a, b);
}

/* The two sides' libraries: the same file, or the same bytes, while the
 * builds claim different commits, is no comparison of the two (a loader
 * path that sent one side to the other's library, a build not rebuilt
 * after its checkout moved). -1 with err then. */
static int libraries_differ(const opcost_ab_ctx *ab, char *err, size_t len)
{
    for (int w = 0; w < 2 * ab->processes; w += 2) {
        const opcost_ab_side *b = &ab->workers[w + AB_BASE];
        const opcost_ab_side *n = &ab->workers[w + AB_NEW];
        if (!b->lib.path[0] || !n->lib.path[0] ||
            !claims_differ(b->git_sha, n->git_sha))
            continue;
        const int same_file =
            b->lib.dev == n->lib.dev && b->lib.ino == n->lib.ino;
        if (!same_file && b->lib.hash != n->lib.hash)
            continue;
        snprintf(err, len,
                 "the two sides claim different commits (base %s, new %s) "
                 "but loaded %s: base %s, new %s (FNV-1a 64 %016llx): no "
                 "comparison of the two builds (a loader path, or a build "
                 "not rebuilt, sent them to one library)",
                 b->git_sha, n->git_sha,
                 same_file ? "the same file" : "libraries of the same bytes",
                 b->lib.path, n->lib.path, (unsigned long long)b->lib.hash);
        return -1;
    }
    return 0;
}

void opcost_ab_init(opcost_ab_ctx *ctx, const char *base_exe,
                    const char *new_exe, int processes, double threshold,
                    double alpha)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->processes = processes;
    ctx->threshold = threshold;
    ctx->alpha = alpha;
    ctx->deadline_scale = 1;
    for (int w = 0; w < 2 * OPCOST_AB_MAX_PROCESSES; ++w) {
        ctx->workers[w].name = w % 2 == AB_BASE ? "base" : "new";
        ctx->workers[w].opcost = w % 2 == AB_BASE ? base_exe : new_exe;
        ctx->workers[w].sock = -1;
    }
}

int opcost_ab_start(const opcost_plan *plan, opcost_ab_ctx *ctx, char *err,
                    size_t len)
{
    const int nw = 2 * ctx->processes;
    for (int w = 0; w < nw; ++w) {
        ctx->workers[w].sock = -1;
        places_for(plan, ctx->workers[w].places, sizeof ctx->workers[w].places);
    }
    for (int w = 0; w < nw; ++w)
        if (start_one(&ctx->workers[w], ctx->keep_loader_env, err, len) ||
            hello(ctx, plan, &ctx->workers[w], err, len))
            return -1;
    return libraries_differ(ctx, err, len);
}

void opcost_ab_scrubbed(const opcost_ab_ctx *ctx, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; !ctx->keep_loader_env && i < NLOADER_VARS; ++i) {
        const char *v = getenv(loader_vars[i]);
        if (v && at < len)
            at += (size_t)snprintf(out + at, len - at, "%s%s=%s",
                                   at ? ", " : "", loader_vars[i], v);
    }
}

void opcost_ab_stop(opcost_ab_ctx *ctx)
{
    for (int w = 0; w < 2 * ctx->processes; ++w) {
        opcost_ab_side *side = &ctx->workers[w];
        if (side->sock < 0)
            continue;
        const uint32_t quit = AB_QUIT;
        if (side->alive && !side->reaped)
            ab_send(side->sock, &quit, sizeof quit, -1);
        close(side->sock);
        side->sock = -1;
    }
    /* each ends within AB_DEADLINE_QUIT_S, or its group is killed; its group is
     * killed anyway (whatever it started): nothing outlives the run */
    for (int w = 0; w < 2 * ctx->processes; ++w) {
        opcost_ab_side *side = &ctx->workers[w];
        int status;
        if (side->pid > 0 && !side->reaped && reap(ctx, side, &status))
            fprintf(stderr,
                    "opcost ab: the %s worker (PID %ld) did not end within "
                    "%.1f s of its quit: its process group killed\n",
                    side->name, (long)side->pid,
                    AB_DEADLINE_QUIT_S * ctx->deadline_scale);
        side->alive = 0;
    }
    free(ctx->contrasts);
    ctx->contrasts = NULL;
    ctx->ncontrasts = ctx->capcontrasts = 0;
}
