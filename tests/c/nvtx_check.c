/* Checks a log of tests/c/nvtx_inject.c: in the opcost domain, per
 * thread, every push nests as a run does (run > distribution > shape >
 * path > phase, phases inside phases), every pop closes an open range,
 * nothing is left open; the core (domain-less) ranges balance; and the
 * named paths, phases and distributions each appear. Exit 0, or 1 with
 * the first violation. Usage:
 *   nvtx_check LOG [--paths A,B] [--phases A,B] [--distributions A,B] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64
#define MAX_DEPTH 64
#define MAX_CATEGORIES 16

static const char *const order[] = {"run", "distribution", "shape", "path",
                                    "phase"};

typedef struct thread {
    long tid;
    int stack[MAX_DEPTH]; /* levels, 0-based into order */
    int depth, core_depth;
} thread;

static thread threads[MAX_THREADS];
static int nthreads;
static int level_of[MAX_CATEGORIES]; /* category id -> level, -1 unknown */
static char seen_paths[4096], seen_phases[4096], seen_dists[4096];
static long counts[5];

static thread *thread_of(long tid)
{
    for (int i = 0; i < nthreads; ++i)
        if (threads[i].tid == tid)
            return &threads[i];
    if (nthreads == MAX_THREADS)
        return NULL;
    threads[nthreads].tid = tid;
    return &threads[nthreads++];
}

static void remember(char *set, size_t size, const char *text)
{
    char item[512];
    snprintf(item, sizeof item, "\n%s\n", text);
    if (!strstr(set, item) && strlen(set) + strlen(item) < size)
        strcat(set + (set[0] ? strlen(set) - 1 : 0), item);
}

/* Whether every comma-separated name of list is in set; the first missing
 * one into missing. A path is also seen as "path/variant". */
static int all_seen(const char *list, const char *set, int prefix,
                    char *missing, size_t len)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        char exact[600], pre[600];
        snprintf(exact, sizeof exact, "\n%s\n", tok);
        snprintf(pre, sizeof pre, "\n%s/", tok);
        if (!strstr(set, exact) && !(prefix && strstr(set, pre))) {
            snprintf(missing, len, "%s", tok);
            return 0;
        }
    }
    return 1;
}

static int fail(int line, const char *what, const char *text)
{
    fprintf(stderr, "nvtx_check: line %d: %s%s%s\n", line, what,
            text ? ": " : "", text ? text : "");
    return 1;
}

int main(int argc, char **argv)
{
    const char *paths = "", *phases = "", *dists = "";
    if (argc < 2 || argc % 2) {
        fprintf(stderr, "usage: nvtx_check LOG [--paths A,B] [--phases A,B] "
                        "[--distributions A,B]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--paths") == 0)
            paths = argv[i + 1];
        else if (strcmp(argv[i], "--phases") == 0)
            phases = argv[i + 1];
        else if (strcmp(argv[i], "--distributions") == 0)
            dists = argv[i + 1];
        else
            return fail(0, "unknown option", argv[i]);
    }
    FILE *f = fopen(argv[1], "r");
    if (!f)
        return fail(0, "cannot open the log", argv[1]);
    for (int i = 0; i < MAX_CATEGORIES; ++i)
        level_of[i] = -1;
    char buf[2048];
    int line = 0;
    while (fgets(buf, sizeof buf, f)) {
        ++line;
        buf[strcspn(buf, "\n")] = '\0';
        char *field[5] = {0};
        int nf = 0;
        for (char *p = buf; nf < 5; ++nf) {
            field[nf] = p;
            char *tab = nf < 4 ? strchr(p, '\t') : NULL;
            if (!tab) {
                ++nf;
                break;
            }
            *tab = '\0';
            p = tab + 1;
        }
        thread *t = nf >= 3 ? thread_of(atol(field[0])) : NULL;
        if (!t)
            return fail(line, "malformed line (or too many threads)", NULL);
        const char *ev = field[1], *domain = field[2];
        const int ours = strcmp(domain, "opcost") == 0;
        if (strcmp(ev, "domain") == 0)
            continue;
        if (strcmp(ev, "category") == 0) {
            const int id = nf >= 5 ? atoi(field[3]) : -1;
            if (!ours)
                continue;
            if (id < 0 || id >= MAX_CATEGORIES)
                return fail(line, "category id out of range", field[3]);
            for (int l = 0; l < 5; ++l)
                if (strcmp(field[4], order[l]) == 0)
                    level_of[id] = l;
            continue;
        }
        if (strcmp(ev, "pop") == 0) {
            if (!ours) {
                if (t->core_depth-- == 0)
                    return fail(line, "core pop with nothing open", NULL);
                continue;
            }
            if (t->depth == 0)
                return fail(line, "pop with nothing open", NULL);
            --t->depth;
            continue;
        }
        if (strcmp(ev, "push") != 0 || nf < 5)
            return fail(line, "unknown event", ev);
        if (!ours) {
            ++t->core_depth;
            continue;
        }
        const int id = atoi(field[3]);
        const int level = id >= 0 && id < MAX_CATEGORIES ? level_of[id] : -1;
        if (level < 0)
            return fail(line, "a push of an unnamed category", field[3]);
        const int top = t->depth ? t->stack[t->depth - 1] : -1;
        /* run at the top; each level inside the one above; phases inside
         * a path or a phase */
        const int ok = level == 4 ? top >= 3 : top == level - 1;
        if (!ok) {
            char what[128];
            snprintf(what, sizeof what, "a %s range inside %s", order[level],
                     top < 0 ? "nothing" : order[top]);
            return fail(line, what, field[4]);
        }
        if (t->depth == MAX_DEPTH)
            return fail(line, "too deep", field[4]);
        t->stack[t->depth++] = level;
        ++counts[level];
        if (level == 1)
            remember(seen_dists, sizeof seen_dists, field[4]);
        if (level == 3)
            remember(seen_paths, sizeof seen_paths, field[4]);
        if (level == 4)
            remember(seen_phases, sizeof seen_phases, field[4]);
    }
    fclose(f);
    for (int i = 0; i < nthreads; ++i) {
        if (threads[i].depth)
            return fail(line, "ranges left open at the end",
                        order[threads[i].stack[threads[i].depth - 1]]);
        if (threads[i].core_depth)
            return fail(line, "core ranges left open at the end", NULL);
    }
    if (counts[0] == 0)
        return fail(line, "no run range", NULL);
    char missing[512];
    if (!all_seen(paths, seen_paths, 1, missing, sizeof missing))
        return fail(line, "no range of path", missing);
    if (!all_seen(phases, seen_phases, 0, missing, sizeof missing))
        return fail(line, "no range of phase", missing);
    if (!all_seen(dists, seen_dists, 0, missing, sizeof missing))
        return fail(line, "no range of distribution", missing);
    printf("nvtx_check: %d lines, balanced and nested: %ld run, %ld "
           "distribution, %ld shape, %ld path, %ld phase ranges\n",
           line, counts[0], counts[1], counts[2], counts[3], counts[4]);
    return 0;
}
