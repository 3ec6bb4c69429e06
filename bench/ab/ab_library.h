/* What a process's loader mapped, read back from the kernel, and what the
 * file holds: opcost ab's proof of which rowops library each side ran
 * (ab_sides.c), and why a library could not be mapped. */
#ifndef OPCOST_AB_LIBRARY_H
#define OPCOST_AB_LIBRARY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ab_library {
    char path[1024];     /* "": none found */
    uint64_t size, hash; /* the file's bytes and their FNV-1a 64 */
    dev_t dev;
    ino_t ino;
} ab_library;

/* The first file process pid maps whose name starts with prefix, as its
 * /proc/PID/maps names it (the kernel's word, not the process's), with
 * the file's size and hash. 0; -1 with why (none mapped, the maps not
 * readable, the file deleted or replaced since it was mapped). */
int ab_library_mapped(pid_t pid, const char *prefix, ab_library *lib, char *why,
                      size_t len);

/* FNV-1a, 64 bits, over the file at path: 0, or -1 with errno. */
int ab_file_fnv1a64(const char *path, uint64_t *hash, uint64_t *size);

/* ELF64: whether the file's loadable segments reach past its end (a
 * truncated library: mapping it succeeds, reading it kills the reader
 * with SIGBUS). 1 and what into out; 0 when whole or not such an ELF. */
int ab_elf_truncated(const char *path, char *out, size_t len);

/* In a loader's trace of its search and files (LD_DEBUG=libs,files;
 * modified in place), the last file it was mapping: its path into out,
 * or why it is a truncated ELF; "" when the trace names none. */
void ab_library_in_trace(char *trace, char *out, size_t len);

#endif
