/* `opcost ab`: the coordinator (ab_coordinator.h). */
#define _GNU_SOURCE
#include "ab_coordinator.h"
#include "ab_verdicts.h"
#include "ab_wire.h"
#include "affinity.h"
#include "journal.h"
#include "omp_waits.h"
#include "paired.h"
#include "point.h"
#include "probe.h"
#include "rounds.h"
#include "timer.h"
#include "timing.h"

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

enum { BASE = 0, NEW = 1 };

/* ---- deadlines: how long the coordinator waits for each reply before
 * it kills the worker's process group, times ctx->deadline_scale. A
 * worker's hello loads torch (seconds; tens on a loaded host); a point's
 * opening verifies, calibrates and warms up (compiles, for the compiled
 * paths) each member; a sample is its calls, a multiple of them beside a
 * margin. */
#define HELLO_S 120.0
#define OPEN_S 120.0
#define OPEN_MEMBER_S 60.0
#define SAMPLE_S 10.0
#define SAMPLE_MULTIPLE 100.0
#define REPLY_S 30.0 /* errors, close */
#define QUIT_S 5.0   /* a quit worker's exit */
/* after a SIGINT or SIGTERM: a worker's reply is waited for this long at
 * most, scaled or not (the run ends within it whatever a worker does) */
#define INTERRUPT_GRACE_S 3.0
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

/* A worker that has closed its end: waits for it to end (QUIT_S at
 * most), then kills its group (whatever it left running) and reaps it.
 * Its status in *status; 0 when it ended on its own. */
static int reap(const opcost_ab_ctx *ab, opcost_ab_side *s, int *status)
{
    *status = 0;
    if (s->pid <= 0 || s->reaped)
        return 0;
    const int64_t until =
        opcost_now_ns() + (int64_t)(QUIT_S * ab->deadline_scale * 1e9);
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
 * deadline scale; INTERRUPT_GRACE_S at most once the run is
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
            const int64_t grace = now + (int64_t)(INTERRUPT_GRACE_S * 1e9);
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

/* A request to a worker (with fd when >= 0) and its reply (await_reply).
 * 0; -1 when the worker is lost (s->why says how). */
static int exchange(const opcost_ab_ctx *ab, opcost_ab_side *s, const void *q,
                    size_t qlen, int fd, void *reply, size_t rlen,
                    double seconds, const char *what)
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

/* ---- what a worker loaded */

/* FNV-1a, 64 bits, over the file at path: 0, or -1 with errno. */
static int fnv1a64_file(const char *path, uint64_t *hash, uint64_t *size)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint64_t h = 14695981039346656037ull, n = 0;
    static unsigned char buf[1 << 16];
    for (;;) {
        const ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            const int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (got == 0)
            break;
        for (ssize_t i = 0; i < got; ++i) {
            h ^= buf[i];
            h *= 1099511628211ull;
        }
        n += (uint64_t)got;
    }
    close(fd);
    *hash = h;
    *size = n;
    return 0;
}

/* The rowops library (librowops_torch*) worker s's loader mapped, read
 * from its /proc/PID/maps (the kernel's word, not the worker's), its
 * size and hash into s. 0; -1 with why (none mapped, or not readable). */
static int mapped_library(opcost_ab_side *s, char *why, size_t len)
{
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%ld/maps", (long)s->pid);
    FILE *f = fopen(maps, "re");
    s->lib[0] = '\0';
    if (!f) {
        snprintf(why, len, "%s: %s", maps, strerror(errno));
        return -1;
    }
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        int at = 0;
        sscanf(line, "%*s %*s %*s %*s %*s %n", &at);
        if (!at || line[at] != '/')
            continue;
        char *path = line + at;
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, "librowops_torch", 15))
            continue;
        snprintf(s->lib, sizeof s->lib, "%s", path);
        break;
    }
    fclose(f);
    if (!s->lib[0]) {
        snprintf(why, len, "no librowops_torch in %s", maps);
        return -1;
    }
    /* the file as it is now: one deleted since it was mapped is named so
     * (the maps' device numbers are not stat's on every file system) */
    struct stat st;
    if (strstr(s->lib, " (deleted)") || stat(s->lib, &st)) {
        snprintf(why, len, "%s: deleted or replaced since it was mapped",
                 s->lib);
        s->lib[0] = '\0';
        return -1;
    }
    s->lib_dev = st.st_dev;
    s->lib_ino = st.st_ino;
    if (fnv1a64_file(s->lib, &s->lib_hash, &s->lib_size)) {
        snprintf(why, len, "%s: %s", s->lib, strerror(errno));
        s->lib[0] = '\0';
        return -1;
    }
    return 0;
}

/* ELF64: whether the file's loadable segments reach past its end (a
 * truncated library: mapping it succeeds, reading it kills the reader
 * with SIGBUS). 1 and what into out; 0 when whole or not such an ELF. */
static int elf_truncated(const char *path, char *out, size_t len)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    unsigned char eh[64];
    uint64_t reach = 0;
    if (fstat(fd, &st) || pread(fd, eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh, "\177ELF", 4) || eh[4] != 2 /* 64 bits */ ||
        eh[5] != 1 /* little-endian */) {
        close(fd);
        return 0;
    }
    uint64_t phoff;
    uint16_t phentsize, phnum;
    memcpy(&phoff, eh + 32, 8);
    memcpy(&phentsize, eh + 54, 2);
    memcpy(&phnum, eh + 56, 2);
    for (unsigned i = 0; i < phnum && phentsize >= 56; ++i) {
        unsigned char ph[56];
        if (pread(fd, ph, sizeof ph,
                  (off_t)(phoff + (uint64_t)i * phentsize)) !=
            (ssize_t)sizeof ph)
            break;
        uint32_t type;
        uint64_t off, filesz;
        memcpy(&type, ph, 4);
        memcpy(&off, ph + 8, 8);
        memcpy(&filesz, ph + 32, 8);
        if (type == 1 /* PT_LOAD */ && off + filesz > reach)
            reach = off + filesz;
    }
    close(fd);
    if (reach <= (uint64_t)st.st_size)
        return 0;
    snprintf(out, len,
             "%s: %lld bytes, its loadable segments reach %llu: truncated",
             path, (long long)st.st_size, (unsigned long long)reach);
    return 1;
}

/* A worker that died of SIGBUS or SIGSEGV before its hello died in its
 * loader: which library it was mapping, found by starting it again as it
 * was with the loader's trace of its search and files (LD_DEBUG=libs,files,
 * on a pipe, 10 s at most): the last file it was mapping. Into out: "<path>"
 * and, when the file is a truncated ELF, why; "" when not found. */
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
    /* "trying file=PATH" names the file tried; "file=NAME [0];
     * generating link map" that it is being mapped */
    char tried[1024] = "", mapping[1024] = "";
    for (char *line = strtok(trace, "\n"); line; line = strtok(NULL, "\n")) {
        const char *t = strstr(line, "trying file=");
        if (t) {
            snprintf(tried, sizeof tried, "%s", t + 12);
            continue;
        }
        if (strstr(line, "generating link map"))
            snprintf(mapping, sizeof mapping, "%s", tried);
    }
    if (!mapping[0])
        return;
    char truncated[1200];
    if (elf_truncated(mapping, truncated, sizeof truncated))
        snprintf(out, len, "%s", truncated);
    else
        snprintf(out, len, "%s", mapping);
}

static int hello(const opcost_ab_ctx *ab, const opcost_plan *plan,
                 opcost_ab_side *s, char *err, size_t len)
{
    const ab_hello h = {AB_HELLO, OPCOST_AB_PROTOCOL_MIN, plan->threads,
                        plan->quick, plan->target_sample_us};
    ab_hello_reply r;
    if (exchange(ab, s, &h, sizeof h, -1, &r, sizeof r, HELLO_S, "its hello") ==
        0) {
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
    if (mapped_library(s, why, sizeof why))
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
        const opcost_ab_side *b = &ab->workers[w + BASE];
        const opcost_ab_side *n = &ab->workers[w + NEW];
        if (!b->lib[0] || !n->lib[0] || !claims_differ(b->git_sha, n->git_sha))
            continue;
        const int same_file =
            b->lib_dev == n->lib_dev && b->lib_ino == n->lib_ino;
        if (!same_file && b->lib_hash != n->lib_hash)
            continue;
        snprintf(err, len,
                 "the two sides claim different commits (base %s, new %s) "
                 "but loaded %s: base %s, new %s (FNV-1a 64 %016llx): no "
                 "comparison of the two builds (a loader path, or a build "
                 "not rebuilt, sent them to one library)",
                 b->git_sha, n->git_sha,
                 same_file ? "the same file" : "libraries of the same bytes",
                 b->lib, n->lib, (unsigned long long)b->lib_hash);
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
        ctx->workers[w].name = w % 2 == BASE ? "base" : "new";
        ctx->workers[w].opcost = w % 2 == BASE ? base_exe : new_exe;
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
    /* each ends within QUIT_S, or its group is killed; its group is
     * killed anyway (whatever it started): nothing outlives the run */
    for (int w = 0; w < 2 * ctx->processes; ++w) {
        opcost_ab_side *side = &ctx->workers[w];
        int status;
        if (side->pid > 0 && !side->reaped && reap(ctx, side, &status))
            fprintf(stderr,
                    "opcost ab: the %s worker (PID %ld) did not end within "
                    "%.1f s of its quit: its process group killed\n",
                    side->name, (long)side->pid, QUIT_S * ctx->deadline_scale);
        side->alive = 0;
    }
    free(ctx->contrasts);
    ctx->contrasts = NULL;
    ctx->ncontrasts = ctx->capcontrasts = 0;
}

/* ---- a point of both sides */

/* A member on one side: its index there, the calls per sample, and where
 * in the rotation its next sample starts: a pair's two sides advance
 * alike (one sample a round, the same calls) over the same sets, their
 * samples back to back (one group of the rounds), each sample's sets
 * flushed first by the coordinator, whatever their size: both sides read
 * the same pages from the same cold state, whatever each build's worker
 * does itself. */
typedef struct remote {
    opcost_ab_side *side;
    const opcost_workload *w;
    int index, batch;
    int lead_in; /* the worker leads each sample in with an untimed call */
    int64_t pos, nsets;
    double call_us; /* a call's time, as calibrated: the sample's deadline */
    const opcost_ab_ctx *ab;
} remote;

static int remote_sample(void *ctx, double *us, double *device_us, char *err,
                         size_t len)
{
    remote *r = ctx;
    if (!r->side->alive) {
        snprintf(err, len, "%s",
                 r->side->why[0] ? r->side->why : "the worker is gone");
        return -1;
    }
    ab_sample q;
    memset(&q, 0, sizeof q); /* no stray bytes on the wire */
    q.kind = AB_SAMPLE;
    q.member = r->index;
    q.batch = r->batch;
    q.lead_in = 1 + r->lead_in;
    q.set = r->pos % r->nsets;
    opcost_workload_flush_any(r->w, (int)q.set, r->batch + r->lead_in);
    r->pos += r->batch + r->lead_in;
    ab_sample_reply a;
    const double expected_s =
        (r->batch + r->lead_in) * (r->call_us > 0 ? r->call_us : 0) / 1e6;
    if (exchange(r->ab, r->side, &q, sizeof q, -1, &a, sizeof a,
                 SAMPLE_S + SAMPLE_MULTIPLE * expected_s, "a sample")) {
        snprintf(err, len, "%s", r->side->why);
        return -1;
    }
    if (!a.ok) {
        snprintf(err, len, "%s", a.error);
        return -1;
    }
    *us = a.us;
    *device_us = a.device_us;
    return 0;
}

typedef struct probe_slot {
    opcost_path_run run;
    opcost_timer_state timer;
    int member; /* -1: not timed */
} probe_slot;

static int probe_sample(void *ctx, double *us, double *device_us, char *err,
                        size_t len)
{
    probe_slot *p = ctx;
    if (opcost_timing_sample(&p->timer, us, device_us)) {
        snprintf(err, len, "%s", p->timer.error);
        return -1;
    }
    return 0;
}

/* Workers of a run at most: both sides' processes. */
#define MAX_WORKERS (2 * OPCOST_AB_MAX_PROCESSES)

typedef struct ab_point {
    opcost_ab_ctx *ab;
    const point_context *pc;
    const opcost_case *c;
    run_out *out;
    int fd;
    void *mem;
    size_t bytes;
    opcost_workload w;
    int made;
    point_row_id ids[POINT_ROWS_MAX];
    int n;                                /* members a worker */
    int nw;                               /* workers (2 x processes) */
    size_t row[2][OPCOST_AB_MAX_MEMBERS]; /* a side's, into out->rows */
    /* worker w (side w % 2, process w / 2) */
    int member[MAX_WORKERS][OPCOST_AB_MAX_MEMBERS]; /* -1: not timed */
    remote rm[MAX_WORKERS][OPCOST_AB_MAX_MEMBERS];
    ab_member_state state[MAX_WORKERS][OPCOST_AB_MAX_MEMBERS];
    probe_slot probe;
    point_probe probed;
    opcost_bw_split split; /* the probe's samples of one bandwidth state */
    opcost_member members[MAX_WORKERS * OPCOST_AB_MAX_MEMBERS + 1];
    int nmembers;
    opcost_rounds_result rounds;
} ab_point;

static opcost_result *row_of(ab_point *pt, int side, int i)
{
    return &pt->out->rows[pt->row[side][i]];
}

/* The block both sides share: a memfd (hugetlb pages where the kernel
 * has them reserved, else shmem pages, transparent huge pages where
 * shmem_enabled allows them) of whole 2 MiB pages, mapped alike on both
 * sides (ab_map_block). */
static int make_block(ab_point *pt, char *err, size_t len)
{
    const opcost_plan *run_plan = pt->pc->run_plan;
    size_t nsets;
    const size_t llc = pt->pc->dev->rotate_bytes;
    const size_t huge = (size_t)2 << 20;
    pt->bytes =
        opcost_workload_shared_bytes(pt->c, llc, run_plan->cold, &nsets);
    pt->bytes = (pt->bytes + huge - 1) / huge * huge;
    for (int hugetlb = 1; hugetlb >= 0 && !pt->mem; --hugetlb) {
        pt->fd = memfd_create("opcost-ab",
                              MFD_CLOEXEC | (hugetlb ? MFD_HUGETLB : 0));
        if (pt->fd >= 0 && ftruncate(pt->fd, (off_t)pt->bytes) == 0)
            pt->mem = ab_map_block(pt->fd, pt->bytes);
        if (!pt->mem && pt->fd >= 0) {
            close(pt->fd);
            pt->fd = -1;
        }
    }
    if (!pt->mem) {
        snprintf(err, len, "shared memory of %zu bytes: %s", pt->bytes,
                 strerror(errno));
        return -1;
    }
    if (opcost_workload_attach(&pt->w, pt->c, nsets, llc, run_plan->cold,
                               pt->mem, 1, run_plan->seed, err, len))
        return -1;
    pt->made = 1;
    return 0;
}

/* The errors side s's members measured at verification, into its rows
 * (protocol 2: AB_ERRORS). */
static int open_errors(ab_point *pt, opcost_ab_side *side, int s, char *err,
                       size_t len)
{
    const uint32_t q = AB_ERRORS;
    static ab_errors_reply e;
    memset(&e, 0, sizeof e);
    if (exchange(pt->ab, side, &q, sizeof q, -1, &e, sizeof e, REPLY_S,
                 "its verification's errors")) {
        snprintf(err, len, "%s", side->why);
        return -1;
    }
    for (int i = 0; e.ok && i < pt->n && i < e.nmembers; ++i)
        if (pt->state[s][i].status == OPCOST_STATUS_OK) {
            opcost_result *row = row_of(pt, s, i);
            row->out_err_units = e.out_err_units[i];
            row->residual_err_units = e.residual_err_units[i];
        }
    return 0;
}

/* Every worker prepares every member on the block; the side's rows say
 * what came of it (the first process's dispatch, any process's failure).
 * -1 when a worker is gone. */
static int open_sides(ab_point *pt, char *err, size_t len)
{
    static ab_open q; /* 8 KiB */
    memset(&q, 0, sizeof q);
    q.kind = AB_OPEN;
    q.op = pt->c->op;
    q.dtype = pt->c->dtype;
    q.weight_dtype = pt->c->weight_dtype;
    q.layout = pt->c->layout;
    q.cold = pt->pc->run_plan->cold;
    q.nmembers = pt->n;
    q.B = pt->c->B;
    q.N = pt->c->N;
    q.eps = pt->c->eps;
    q.nsets = (uint64_t)pt->w.nsets;
    q.llc_bytes = pt->pc->dev->rotate_bytes;
    q.bytes = pt->bytes;
    for (int i = 0; i < pt->n; ++i) {
        snprintf(q.path[i], sizeof q.path[i], "%s", pt->ids[i].path->name);
        snprintf(q.variant[i], sizeof q.variant[i], "%s",
                 pt->ids[i].variant->name);
    }
    static ab_open_reply r;
    for (int wk = 0; wk < pt->nw; ++wk) {
        const int s = wk % 2;
        opcost_ab_side *side = &pt->ab->workers[wk];
        q.first_set = 0; /* as remote.pos */
        memset(&r, 0, sizeof r);
        if (exchange(pt->ab, side, &q, sizeof q, pt->fd, &r, sizeof r,
                     OPEN_S + OPEN_MEMBER_S * pt->n, "a point's opening")) {
            snprintf(err, len, "%s", side->why);
            return -1;
        }
        for (int i = 0; i < pt->n; ++i) {
            opcost_result *row = row_of(pt, s, i);
            if (!r.ok) {
                point_row_status(row, OPCOST_STATUS_ERROR, r.error);
                continue;
            }
            pt->state[wk][i] = r.m[i];
            if (wk < 2)
                snprintf(row->dispatch_path, sizeof row->dispatch_path, "%s",
                         r.m[i].dispatch_path);
            if (r.m[i].status != OPCOST_STATUS_OK)
                point_row_status(row, (opcost_status)r.m[i].status, r.m[i].why);
        }
        if (r.ok && wk < 2 && side->protocol >= 2 &&
            open_errors(pt, side, s, err, len))
            return -1;
    }
    return 0;
}

static void add_member(ab_point *pt, const char *name,
                       int (*sample)(void *, double *, double *, char *,
                                     size_t),
                       void *ctx, double cost_us)
{
    opcost_member *m = &pt->members[pt->nmembers++];
    memset(m, 0, sizeof *m);
    m->name = name;
    m->sample = sample;
    m->ctx = ctx;
    m->cost_us = cost_us;
}

/* The rounds: every ready member of every worker and the probe, a
 * member's workers back to back; the ratios tracked are each new process's
 * member against its base twin's. */
static int time_point(ab_point *pt, char *err, size_t len)
{
    const opcost_plan *run_plan = pt->pc->run_plan;
    opcost_rounds_pair pairs[OPCOST_AB_MAX_MEMBERS * OPCOST_AB_MAX_PROCESSES];
    int np = 0;
    for (int i = 0; i < pt->n; ++i) {
        const ab_member_state *b = &pt->state[BASE][i];
        for (int wk = 0; wk < pt->nw; ++wk) {
            const ab_member_state *st = &pt->state[wk][i];
            pt->member[wk][i] = -1;
            if (st->status != OPCOST_STATUS_OK ||
                row_of(pt, wk % 2, i)->status != OPCOST_STATUS_OK)
                continue;
            /* the same calls per sample on both sides, and the same
             * lead-in call: the base's. Each side deciding by its own call
             * can split them near 1 ms (an A/A's eager-cpp bfloat16 B =
             * 1215: base 1032 us a call, new 858, x0.907; how much of that
             * the split made, beside the processes' own spread there, is
             * not known: results/20261204T211907Z-aa3-400ms-omp-ab.csv) */
            const int base_ok = b->status == OPCOST_STATUS_OK;
            const int batch = base_ok ? b->batch : st->batch;
            const double call_us = base_ok ? b->call_us : st->call_us;
            pt->rm[wk][i] = (remote){&pt->ab->workers[wk],
                                     &pt->w,
                                     i,
                                     batch,
                                     call_us < OPCOST_LEAD_IN_BELOW_US,
                                     0,
                                     pt->w.nsets,
                                     call_us,
                                     pt->ab};
            pt->member[wk][i] = pt->nmembers;
            add_member(pt, pt->ids[i].path->name, remote_sample, &pt->rm[wk][i],
                       st->call_us * batch);
            /* the member's samples of all workers back to back */
            pt->members[pt->nmembers - 1].group = i + 1;
        }
        for (int wk = 0; wk + 1 < pt->nw; wk += 2)
            if (pt->member[wk + BASE][i] >= 0 && pt->member[wk + NEW][i] >= 0)
                pairs[np++] = (opcost_rounds_pair){pt->member[wk + NEW][i],
                                                   pt->member[wk + BASE][i]};
    }
    const int timed = pt->nmembers;
    if (pt->probe.member >= 0) {
        pt->probe.member = pt->nmembers;
        add_member(pt, "probe", probe_sample, &pt->probe,
                   pt->probe.timer.call_us * pt->probe.timer.batch);
    }
    if (!pt->nmembers)
        return 0;
    const opcost_rounds_rule rule = {
        .target_rel = run_plan->noise_target,
        /* the time of one process a side: more processes, fewer rounds
         * (each round's ratio averages over them) */
        .budget_s = run_plan->reps * run_plan->rep_budget_s *
                    (timed / pt->ab->processes + (pt->nmembers - timed)) *
                    (pt->pc->plan ? pt->pc->plan->rounds_scale : 1),
        .min_rounds = (size_t)(run_plan->reps > 10 ? run_plan->reps : 10),
        .max_rounds = 100000,
        /* no strides: a pair's two sides must share their rounds (a slow
         * path is slow on both) */
        .slow_factor = 0,
        .seed =
            (run_plan->seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)pt->c->B,
    };
    return opcost_rounds_run(pt->members, pt->nmembers, pairs, np, &rule,
                             &pt->rounds, err, len);
}

/* A side's members of member i over its processes (k of them), or 0 when
 * one was not timed; the first failed one in *failed. */
static int side_members(ab_point *pt, int s, int i, const opcost_member **m,
                        const opcost_member **failed)
{
    int k = 0;
    *failed = NULL;
    for (int wk = s; wk < pt->nw; wk += 2) {
        const int at = pt->member[wk][i];
        if (at < 0)
            return 0;
        m[k++] = &pt->members[at];
        if (pt->members[at].failed && !*failed)
            *failed = &pt->members[at];
    }
    return k;
}

/* What the sides' processes differ by at this point beyond the rounds
 * and beyond what the two sides' processes of one index share
 * (opcost_members_cross_contrasts: k - 1 of them), kept for
 * opcost_ab_verdicts (the spread they show joins the intervals). -1: out
 * of memory. */
static int keep_contrasts(ab_point *pt, int i, const opcost_member *const *base,
                          const opcost_member *const *new_side, int k)
{
    opcost_ab_ctx *ab = pt->ab;
    double d[OPCOST_AB_MAX_PROCESSES], se[OPCOST_AB_MAX_PROCESSES];
    const int n = k >= 2 ? opcost_members_cross_contrasts(
                               base, new_side, k, pt->pc->run_plan->seed, d, se)
                         : 0;
    for (int j = 0; j < n; ++j) {
        if (ab->ncontrasts == ab->capcontrasts) {
            const size_t cap = ab->capcontrasts ? 2 * ab->capcontrasts : 256;
            opcost_ab_contrast *c =
                realloc(ab->contrasts, cap * sizeof *ab->contrasts);
            if (!c)
                return -1;
            ab->contrasts = c;
            ab->capcontrasts = cap;
        }
        ab->contrasts[ab->ncontrasts++] =
            (opcost_ab_contrast){pt->row[NEW][i], d[j], se[j]};
    }
    return 0;
}

static int summarize(ab_point *pt)
{
    const opcost_plan *run_plan = pt->pc->run_plan;
    const opcost_member *m[2][OPCOST_AB_MAX_PROCESSES];
    int k[2];
    if (pt->probe.member >= 0) {
        const double moved = (double)opcost_probe_bytes(&pt->w);
        if (opcost_bw_split_probe(
                &pt->members[pt->probe.member], moved,
                point_probe_reference(pt->pc, &pt->probed, moved), &pt->split))
            return -1;
    }
    for (int i = 0; i < pt->n; ++i) {
        for (int s = 0; s < 2; ++s) {
            opcost_result *row = row_of(pt, s, i);
            const opcost_member *failed;
            k[s] = side_members(pt, s, i, m[s], &failed);
            if (k[s] && failed) {
                point_row_status(row, OPCOST_STATUS_ERROR, failed->error);
            } else if (k[s]) {
                opcost_member all;
                if (opcost_member_merge(m[s], k[s], &all))
                    return -1;
                const int oom = point_row_samples(run_plan, row, &all, pt->out);
                opcost_member_free(&all);
                if (oom)
                    return -1;
            }
            if (k[s] && row->status == OPCOST_STATUS_OK) {
                snprintf(row->stopped_by, sizeof row->stopped_by, "%s",
                         opcost_rounds_stop_name(pt->rounds.stop));
                if (pt->probe.member >= 0)
                    point_row_frac_of(run_plan, row, &pt->split, m[s], k[s],
                                      opcost_probe_bytes(&pt->w));
            }
            point_set_ceiling(row, pt->pc->ceiling, 0,
                              pt->ids[i].path->in_place);
        }
        opcost_result *row = row_of(pt, NEW, i);
        if (k[BASE] && k[NEW] && row->status == OPCOST_STATUS_OK &&
            row_of(pt, BASE, i)->status == OPCOST_STATUS_OK) {
            opcost_paired e;
            point_row_ratio_of(run_plan, row, m[NEW], k[NEW], m[BASE], k[BASE],
                               "base", &e);
            if (k[BASE] == k[NEW] &&
                keep_contrasts(pt, i, m[BASE], m[NEW], k[NEW]))
                return -1;
        }
    }
    if (pt->probe.member >= 0)
        point_probe_measured(&pt->probed, &pt->members[pt->probe.member],
                             &pt->w);
    if (pt->split.state != OPCOST_BW_NONE)
        pt->probed.full_gbps = pt->split.best_rolled_gbps;
    return 0;
}

/* Each worker releases its members; the compile times and notes of each
 * side's first process. */
static void close_sides(ab_point *pt)
{
    static ab_close_reply r;
    for (int wk = 0; wk < pt->nw; ++wk) {
        const int s = wk % 2;
        opcost_ab_side *side = &pt->ab->workers[wk];
        const uint32_t q = AB_CLOSE;
        memset(&r, 0, sizeof r);
        if (exchange(pt->ab, side, &q, sizeof q, -1, &r, sizeof r, REPLY_S,
                     "a point's closing"))
            continue;
        for (int i = 0; wk < 2 && i < pt->n && i < r.nmembers; ++i) {
            opcost_result *row = row_of(pt, s, i);
            if (r.compile_ms[i] > 0 || r.compile_ms[i] == 0)
                row->compile_ms = r.compile_ms[i];
            if (r.note[i][0] && row->status == OPCOST_STATUS_OK)
                point_row_note(row, r.note[i]);
        }
    }
}

static void side_identity(ab_point *pt)
{
    for (int s = 0; s < 2; ++s)
        for (int i = 0; i < pt->n; ++i) {
            opcost_result *row = row_of(pt, s, i);
            const opcost_ab_side *side = &pt->ab->workers[s];
            snprintf(row->side, sizeof row->side, "%s", side->name);
            snprintf(row->git_sha, sizeof row->git_sha, "%s", side->git_sha);
            snprintf(row->torch_version, sizeof row->torch_version, "%s",
                     side->torch_version);
        }
}

static int all_alive(const opcost_ab_ctx *ab)
{
    for (int wk = 0; wk < 2 * ab->processes; ++wk)
        if (!ab->workers[wk].alive)
            return 0;
    return 1;
}

static int measure_ab(void *ctx, const point_context *pc, const opcost_case *c,
                      int64_t point_seed, run_out *out, point_probe *probe,
                      opcost_point_cost *cost, char *err, size_t len)
{
    (void)point_seed;
    const int64_t start = opcost_now_ns();
    int64_t rounds_from = 0, rounds_to = 0;
    opcost_ab_ctx *ab = ctx;
    ab_point *pt = calloc(1, sizeof *pt);
    if (!pt) {
        snprintf(err, len, "out of memory (point)");
        return -1;
    }
    pt->ab = ab;
    pt->pc = pc;
    pt->c = c;
    pt->out = out;
    pt->fd = -1;
    pt->probe.member = -1;
    pt->n = point_row_ids(pc->run_plan, c, pt->ids);
    pt->nw = 2 * ab->processes;
    int rc = 0;
    char why[1024] = "";
    if (pt->n > OPCOST_AB_MAX_MEMBERS) {
        snprintf(why, sizeof why,
                 "%d paths x variants: opcost ab takes at most %d a side",
                 pt->n, OPCOST_AB_MAX_MEMBERS);
        pt->n = OPCOST_AB_MAX_MEMBERS;
    }
    const int made = why[0] ? -1 : make_block(pt, why, sizeof why);
    for (int s = 0; s < 2 && rc == 0; ++s)
        for (int i = 0; i < pt->n && rc == 0; ++i) {
            opcost_result *row = point_row(out, pc, c, made ? NULL : &pt->w,
                                           pt->ids[i].path, pt->ids[i].variant);
            if (!row) {
                snprintf(err, len, "out of memory (results)");
                rc = -1;
            } else {
                pt->row[s][i] = out->nrows - 1;
                if (made)
                    point_row_status(row, OPCOST_STATUS_ERROR, why);
            }
        }
    if (rc == 0) {
        side_identity(pt);
        if (!all_alive(ab)) {
            for (int s = 0; s < 2; ++s)
                for (int i = 0; i < pt->n; ++i)
                    point_row_status(row_of(pt, s, i), OPCOST_STATUS_ERROR,
                                     ab->why);
        } else if (made == 0) {
            if (open_sides(pt, why, sizeof why)) {
                ab->failed = 1;
                snprintf(ab->why, sizeof ab->why, "%s", why);
                for (int s = 0; s < 2; ++s)
                    for (int i = 0; i < pt->n; ++i)
                        point_row_status(row_of(pt, s, i), OPCOST_STATUS_ERROR,
                                         why);
            } else {
                pt->probe.run.path =
                    point_probe_choose(pc, &pt->w, &pt->probed);
                pt->probe.run.variant = &opcost_variant_auto;
                pt->probe.run.w = &pt->w;
                char dispatch[128], pwhy[512];
                if (point_start(pc->run_plan, 0, &pt->probe.run,
                                &pt->probe.timer, dispatch, sizeof dispatch,
                                pwhy, sizeof pwhy) == OPCOST_STATUS_OK)
                    pt->probe.member = 0;
                rounds_from = opcost_now_ns();
                rc = time_point(pt, err, len); /* err says why */
                rounds_to = opcost_now_ns();
                if (rc == 0 && (rc = summarize(pt)) != 0)
                    snprintf(err, len, "out of memory (samples)");
                close_sides(pt);
                for (int wk = 0; wk < pt->nw; ++wk)
                    if (!ab->workers[wk].alive) {
                        ab->failed = 1;
                        snprintf(ab->why, sizeof ab->why, "%s",
                                 ab->workers[wk].why[0] ? ab->workers[wk].why
                                                        : "a worker went away");
                    }
            }
        }
    }
    if (probe) /* no in-place probe: the in-place rows pair with this one */
        probe[0] = pt->probed;
    if (pt->probe.run.priv)
        pt->probe.run.path->release(&pt->probe.run);
    opcost_timing_end(&pt->probe.timer);
    opcost_bw_split_free(&pt->split);
    for (int i = 0; i < pt->nmembers; ++i)
        opcost_member_free(&pt->members[i]);
    if (pt->made)
        opcost_workload_free(&pt->w);
    if (pt->mem)
        munmap(pt->mem, pt->bytes);
    if (pt->fd >= 0)
        close(pt->fd);
    free(pt);
    /* what the point cost: the sides' setup (both verify, calibrate and
     * warm up every member), the rounds, their summary and closing */
    if (cost && rounds_from) {
        cost->setup_s = (double)(rounds_from - start) / 1e9;
        cost->rounds_s = (double)(rounds_to - rounds_from) / 1e9;
        cost->after_s = opcost_seconds_since(rounds_to);
    }
    return rc;
}

/* After the last point (ab_verdicts.h). */
static void holm_verdicts(void *ctx, run_out *out)
{
    const opcost_ab_ctx *ab = ctx;
    const opcost_ab_evidence evidence = {
        ab->processes, ab->threshold, ab->alpha, ab->contrasts, ab->ncontrasts};
    opcost_ab_verdicts(&evidence, out);
}

opcost_point_measurer opcost_ab_measurer(opcost_ab_ctx *ctx)
{
    return (opcost_point_measurer){ctx, measure_ab, holm_verdicts, "-ab", 2};
}
