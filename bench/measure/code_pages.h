/* This build's code on 2 MiB pages, placed anew as a process measures, so
 * that a time averages over many placements of the code instead of
 * carrying one.
 *
 * The caches below L1 are indexed by physical address, and where a
 * kernel's code sits moves its speed. Left in its files, the code sits on
 * the page cache's 4 KiB pages: two clones of one commit (identical bytes
 * in two files) ran at two speeds in opcost ab on a Zen 5 host (float32
 * transposed B = 101-405, 3-5 %; the sign followed the files when the
 * sides were swapped, and changed each time one clone's files were
 * dropped from the page cache and read again), and kept that bias for as
 * long as the pages stayed cached. Moved once per process onto its own
 * 2 MiB pages, one build against itself read x0.88-x1.18 per process pair
 * at B = 101-104, alike at all the pair's points. Placed anew every 50 ms,
 * x0.989-x1.021 (docs/comparing.md).
 *
 * The objects are linked with -z max-page-size=0x200000 (CMakeLists.txt),
 * so each read-only segment starts on a 2 MiB boundary and none shares its
 * 2 MiB with another. Each is copied into an anonymous region of
 * transparent huge pages (where the kernel gives them: THP "madvise" or
 * "always") and moved over the original with mremap: the same bytes at the
 * same addresses. Profilers lose the file behind those addresses. */
#ifndef OPCOST_CODE_PAGES_H
#define OPCOST_CODE_PAGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct opcost_code_pages {
    int objects;   /* objects of the build seen (the program included) */
    int segments;  /* their read-only segments */
    int moved;     /* of which on 2 MiB pages, by this call or before */
    size_t bytes;  /* the bytes of those segments */
    char why[512]; /* why a segment stayed where it was; "" if none */
} opcost_code_pages;

/* Moves the read-only segments of the running program and of every loaded
 * object whose file is in dir (the build directory; NULL: the program's
 * own) onto 2 MiB pages; segments moved by an earlier call are counted,
 * not moved again. Call it where no other thread runs this code (between
 * calls). Returns 0 when every segment is on 2 MiB pages, -1 with out->why
 * otherwise (what could not be moved is left as it was, and runs). */
int opcost_code_to_huge_pages(const char *dir, opcost_code_pages *out);

/* Copies every code segment moved so far onto other 2 MiB pages (the same
 * bytes at the same addresses, other physical pages: which ones is drawn
 * with rng), so that one process samples several placements of its code.
 * The same rule as above: no other thread in this code. Returns the number
 * of code segments placed anew (0: none were moved), -1 if one could not be
 * (it stays where it was). */
int opcost_code_replace(uint64_t *rng);

/* How often the engine places the code anew between samples: opcost run
 * and opcost ab's workers (where the code sits moved a process's speed by
 * -12 to +18 % at float32 transposed B = 101, docs/comparing.md; placed
 * anew every 50 ms, a point's samples average over many placements, and
 * the block bootstrap sees what is left as correlation between rounds). */
#define OPCOST_CODE_PLACEMENT_NS 50000000

/* opcost_code_replace when OPCOST_CODE_PLACEMENT_NS have passed since the
 * last placement (or since the first call); 1 when it placed the code. */
int opcost_code_replace_due(void);

/* One line on where this process's code runs: "on 2 MiB pages, placed
 * anew every 50 ms of sampling (9 segments of 3 objects)" or why it is
 * left in its files, from opcost_code_to_huge_pages(NULL, ...). */
void opcost_code_pages_say(const opcost_code_pages *cp, int rc, char *out,
                           size_t len);

#endif
