/* This build's code on 2 MiB pages (code_pages.h). */
#define _GNU_SOURCE
#include "code_pages.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "timer.h"

#define HUGE ((uintptr_t)2 << 20)
/* Segments moved so far: moved code is anonymous, and looks it. */
#define MAX_MOVED 64

typedef struct moved_segment {
    uintptr_t start;
    size_t size, len;
    int prot;
} moved_segment;

static moved_segment moved_seg[MAX_MOVED];
static int nmoved;

typedef struct walk {
    char dir[PATH_MAX];
    char self[PATH_MAX];
    opcost_code_pages *out;
} walk;

static void why(opcost_code_pages *out, const char *fmt, const char *name,
                const char *reason)
{
    if (!out->why[0])
        snprintf(out->why, sizeof out->why, fmt, name, reason);
}

static int was_moved(uintptr_t start)
{
    for (int i = 0; i < nmoved; ++i)
        if (moved_seg[i].start == start)
            return 1;
    return 0;
}

/* Whether [lo, hi) holds nothing but the segment [lo, seg_end) and the
 * loader's inaccessible gaps (its file's or anonymous), which the move may
 * cover: never another segment. */
static int range_is_own(uintptr_t lo, uintptr_t seg_end, uintptr_t hi,
                        const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[PATH_MAX + 128];
    int ok = 1;
    while (ok && fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*s %*s %*s %n", &a, &b,
                   perms, &at) < 3)
            continue;
        if (b <= lo || a >= hi)
            continue;
        char *name = line + at;
        name[strcspn(name, "\n")] = '\0';
        const int gap = strncmp(perms, "---", 3) == 0 &&
                        (!name[0] || strcmp(name, path) == 0);
        const int segment = a >= lo && b <= seg_end && strcmp(name, path) == 0;
        ok = gap || segment;
    }
    fclose(f);
    return ok;
}

/* The transparent huge pages of the mapping that starts at p, in bytes. */
static size_t huge_bytes_at(uintptr_t p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return 0;
    char line[PATH_MAX + 128];
    int in = 0;
    size_t kb = 0;
    while (fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2) {
            if (in)
                break;
            in = a == p;
        } else if (in) {
            sscanf(line, "AnonHugePages: %zu kB", &kb);
        }
    }
    fclose(f);
    return kb * 1024;
}

#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer would see a whole segment's read cross the redzones
 * it keeps between the globals of .rodata: a plain loop, not turned
 * into a call of the intercepted memcpy */
__attribute__((no_sanitize_address,
               optimize("no-tree-loop-distribute-patterns"))) static void
copy_segment(char *to, const char *from, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        to[i] = from[i];
}
#else
static void copy_segment(char *to, const char *from, size_t n)
{
    memcpy(to, from, n);
}
#endif

/* len bytes of private memory on a 2 MiB boundary, asked to be on
 * transparent huge pages; NULL with *reason. */
static char *huge_region(size_t len, const char **reason)
{
    char *raw = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        *reason = "no memory for the copy";
        return NULL;
    }
    char *q = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
    if (q > raw)
        munmap(raw, (size_t)(q - raw));
    munmap(q + len, (size_t)(raw + len + HUGE - (q + len)));
    if (madvise(q, len, MADV_HUGEPAGE)) {
        munmap(q, len);
        *reason = "no transparent huge pages (madvise refused)";
        return NULL;
    }
    return q;
}

/* One segment: [start, start + len) replaced by a copy on huge pages.
 * Returns 0, or -1 with *reason. */
static int move(uintptr_t start, size_t size, size_t len, int prot, int check,
                const char **reason)
{
    char *copy = huge_region(len, reason);
    if (!copy)
        return -1;
    copy_segment(copy, (const char *)start, size);
    if (check && huge_bytes_at((uintptr_t)copy) < len) {
        munmap(copy, len);
        *reason = "the kernel gave 4 KiB pages (transparent huge pages "
                  "off, or none free)";
        return -1;
    }
    if (mprotect(copy, len, prot) ||
        mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)start) ==
            MAP_FAILED) {
        munmap(copy, len);
        *reason = strerror(errno);
        return -1;
    }
    return 0;
}

static int is_ours(const walk *wk, const char *name, char *path)
{
    if (!name || !name[0]) {
        snprintf(path, PATH_MAX, "%s", wk->self);
        return 1;
    }
    if (!realpath(name, path))
        return 0;
    const size_t n = strlen(wk->dir);
    return strncmp(path, wk->dir, n) == 0 && path[n] == '/';
}

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    walk *wk = data;
    opcost_code_pages *out = wk->out;
    char path[PATH_MAX];
    if (!is_ours(wk, info->dlpi_name, path))
        return 0;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    ++out->objects;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || !ph->p_memsz)
            continue;
        ++out->segments;
        const uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        const size_t len = (ph->p_memsz + HUGE - 1) & ~(HUGE - 1);
        const char *reason = NULL;
        if (was_moved(start)) {
            ++out->moved;
            out->bytes += ph->p_memsz;
            continue;
        }
        if (start % HUGE)
            reason = "a segment off a 2 MiB boundary (linked without "
                     "-z max-page-size=0x200000)";
        else if (nmoved == MAX_MOVED)
            reason = "too many segments";
        else if (!range_is_own(start, start + ((ph->p_memsz + 4095) & ~4095ul),
                               start + len, path))
            reason = "its 2 MiB hold another mapping";
        const int prot = PROT_READ | (ph->p_flags & PF_X ? PROT_EXEC : 0);
        if (!reason)
            move(start, ph->p_memsz, len, prot, 1, &reason);
        if (reason) {
            why(out, "%.200s: %.200s", base, reason);
            continue;
        }
        moved_seg[nmoved++] = (moved_segment){start, ph->p_memsz, len, prot};
        ++out->moved;
        out->bytes += ph->p_memsz;
    }
    return 0;
}

int opcost_code_to_huge_pages(const char *dir, opcost_code_pages *out)
{
    memset(out, 0, sizeof *out);
    walk wk;
    wk.out = out;
    if (!realpath("/proc/self/exe", wk.self)) {
        snprintf(out->why, sizeof out->why, "/proc/self/exe: %.100s",
                 strerror(errno));
        return -1;
    }
    if (dir ? !realpath(dir, wk.dir) : !realpath(wk.self, wk.dir)) {
        snprintf(out->why, sizeof out->why, "%.300s: %.100s",
                 dir ? dir : wk.self, strerror(errno));
        return -1;
    }
    if (!dir && strrchr(wk.dir, '/'))
        *strrchr(wk.dir, '/') = '\0';
    dl_iterate_phdr(on_object, &wk);
    return out->moved == out->segments ? 0 : -1;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int opcost_code_replace(uint64_t *rng)
{
    enum { MAX_SKIP = 8 };
    int failed = 0;
    int placed = 0;
    for (int i = 0; i < nmoved; ++i) {
        const moved_segment *m = &moved_seg[i];
        if (!(m->prot & PROT_EXEC))
            continue; /* the code; its read-only data, larger, stay */
        ++placed;
        /* huge pages held while the copy takes its own: the allocator
         * would otherwise hand back the page the last copy freed */
        char *skip[MAX_SKIP];
        const int nskip = (int)(rng_next(rng) % (MAX_SKIP + 1));
        const char *reason = NULL;
        for (int k = 0; k < nskip; ++k)
            if ((skip[k] = huge_region(HUGE, &reason)))
                *(volatile char *)skip[k] = 1; /* takes its page */
        /* unchecked (smaps of a process holding torch takes
         * milliseconds to read): the first move found huge pages */
        failed |= move(m->start, m->size, m->len, m->prot, 0, &reason) != 0;
        for (int k = 0; k < nskip; ++k)
            if (skip[k])
                munmap(skip[k], HUGE);
    }
    return failed ? -1 : placed;
}

int opcost_code_replace_due(void)
{
    static uint64_t rng;
    static int64_t last;
    const int64_t now = opcost_now_ns();
    if (!rng) {
        rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() ^ (uint64_t)now;
        rng |= 1;
        last = now;
    }
    if (!nmoved || now - last < OPCOST_CODE_PLACEMENT_NS)
        return 0;
    opcost_code_replace(&rng);
    last = opcost_now_ns();
    return 1;
}

void opcost_code_pages_say(const opcost_code_pages *cp, int rc, char *out,
                           size_t len)
{
    if (rc == 0)
        snprintf(out, len,
                 "on 2 MiB pages, placed anew every %d ms of sampling (%d "
                 "segments of %d objects, %.1f MiB)",
                 (int)(OPCOST_CODE_PLACEMENT_NS / 1000000), cp->moved,
                 cp->objects, (double)cp->bytes / (1 << 20));
    else
        snprintf(out, len,
                 "%d of %d segments on 2 MiB pages, placed anew every %d ms; "
                 "%.300s (where the page cache put the rest can move a "
                 "time by a few per cent: docs/measurement.md)",
                 cp->moved, cp->segments,
                 (int)(OPCOST_CODE_PLACEMENT_NS / 1000000), cp->why);
}
