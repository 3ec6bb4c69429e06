/* SOCK_SEQPACKET messages, file descriptors as SCM_RIGHTS (ab_wire.h). */
#define _GNU_SOURCE
#include "ab_wire.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

int ab_send(int sock, const void *msg, size_t len, int fd)
{
    struct iovec iov = {(void *)msg, len};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        m.msg_control = control.buf;
        m.msg_controllen = sizeof control.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    for (;;) {
        const ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);
        if (n == (ssize_t)len)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n >= 0)
            errno = EMSGSIZE;
        return -1;
    }
}

int ab_recv(int sock, void *msg, size_t len, size_t *got, int *fd)
{
    struct iovec iov = {msg, len};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control.buf;
    m.msg_controllen = sizeof control.buf;
    if (fd)
        *fd = -1;
    ssize_t n;
    do
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    int passed = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            memcpy(&passed, CMSG_DATA(c), sizeof passed);
    if (fd)
        *fd = passed;
    else if (passed >= 0)
        close(passed);
    if (n == 0) {
        errno = 0; /* the other side closed its end */
        return -1;
    }
    if ((m.msg_flags & MSG_TRUNC) || (!got && (size_t)n != len)) {
        if (fd && *fd >= 0)
            close(*fd);
        errno = EPROTO;
        return -1;
    }
    if (got)
        *got = (size_t)n;
    return 0;
}

void *ab_map_block(int fd, size_t bytes)
{
    /* a 2 MiB-aligned address: where the kernel may map the block with
     * huge pages (shmem THP, hugetlb), as both sides then do alike */
    const size_t huge = (size_t)2 << 20;
    char *area = mmap(NULL, bytes + huge, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        return NULL;
    char *at = (char *)(((uintptr_t)area + huge - 1) & ~(uintptr_t)(huge - 1));
    void *p =
        mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        munmap(area, bytes + huge);
        return NULL;
    }
    /* the reservation's ends around the block */
    if (at > area)
        munmap(area, (size_t)(at - area));
    const size_t tail = (size_t)(area + bytes + huge - (at + bytes));
    if (tail)
        munmap(at + bytes, tail);
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}
