/* What a process's loader mapped, and what its file holds (ab_library.h). */
#define _GNU_SOURCE
#include "ab_library.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ab_file_fnv1a64(const char *path, uint64_t *hash, uint64_t *size)
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

int ab_library_mapped(pid_t pid, const char *prefix, ab_library *lib, char *why,
                      size_t len)
{
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%ld/maps", (long)pid);
    FILE *f = fopen(maps, "re");
    lib->path[0] = '\0';
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
        if (strncmp(base, prefix, strlen(prefix)))
            continue;
        snprintf(lib->path, sizeof lib->path, "%s", path);
        break;
    }
    fclose(f);
    if (!lib->path[0]) {
        snprintf(why, len, "no %s* in %s", prefix, maps);
        return -1;
    }
    /* the file as it is now: one deleted since it was mapped is named so
     * (the maps' device numbers are not stat's on every file system) */
    struct stat st;
    if (strstr(lib->path, " (deleted)") || stat(lib->path, &st)) {
        snprintf(why, len, "%s: deleted or replaced since it was mapped",
                 lib->path);
        lib->path[0] = '\0';
        return -1;
    }
    lib->dev = st.st_dev;
    lib->ino = st.st_ino;
    if (ab_file_fnv1a64(lib->path, &lib->hash, &lib->size)) {
        snprintf(why, len, "%s: %s", lib->path, strerror(errno));
        lib->path[0] = '\0';
        return -1;
    }
    return 0;
}

int ab_elf_truncated(const char *path, char *out, size_t len)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    Elf64_Ehdr eh;
    uint64_t reach = 0;
    if (fstat(fd, &st) || pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB) {
        close(fd);
        return 0;
    }
    for (unsigned i = 0; i < eh.e_phnum && eh.e_phentsize >= sizeof(Elf64_Phdr);
         ++i) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph,
                  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
            (ssize_t)sizeof ph)
            break;
        if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > reach)
            reach = ph.p_offset + ph.p_filesz;
    }
    close(fd);
    if (reach <= (uint64_t)st.st_size)
        return 0;
    snprintf(out, len,
             "%s: %lld bytes, its loadable segments reach %llu: truncated",
             path, (long long)st.st_size, (unsigned long long)reach);
    return 1;
}

void ab_library_in_trace(char *trace, char *out, size_t len)
{
    out[0] = '\0';
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
    if (ab_elf_truncated(mapping, truncated, sizeof truncated))
        snprintf(out, len, "%s", truncated);
    else
        snprintf(out, len, "%s", mapping);
}
