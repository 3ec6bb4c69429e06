/* What `opcost ab` and its two workers say to each other. Each side of an
 * A/B comparison is its own build's `opcost worker`, a process of its own
 * (two builds of one PyTorch operator library cannot share a process:
 * both register the same op names), driven by the coordinator over a
 * socket pair, one request and one reply at a time: the two sides never
 * run at once. Every point's buffers are one shared memory block the
 * coordinator fills and passes to both (SCM_RIGHTS), so both sides' calls
 * read and write the same physical pages.
 *
 * The messages are fixed-size structs, so both builds must have the same
 * protocol (OPCOST_AB_PROTOCOL, checked first): the layout of a point's
 * sets in the block (bench/measure/workload.c) is part of it. */
#ifndef OPCOST_AB_WIRE_H
#define OPCOST_AB_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Bump on any change of these structs or of the sets' layout. */
#define OPCOST_AB_PROTOCOL 2
/* The oldest protocol this build speaks. A coordinator's hello says it
 * (every worker since protocol 1 takes it) and a worker's reply says the
 * newest it speaks; a request of a later protocol goes only to a worker
 * that speaks it, so builds of protocol 1 and 2 compare. Protocol 2 adds
 * AB_ERRORS; the rest is protocol 1's. */
#define OPCOST_AB_PROTOCOL_MIN 1
/* Paths x variants one side prepares per point. */
#define OPCOST_AB_MAX_MEMBERS 64
#define OPCOST_AB_NAME 64
#define OPCOST_AB_TEXT 512

typedef enum ab_kind {
    AB_HELLO = 1, /* settings; the worker says who it is */
    AB_OPEN,      /* a point: the block (fd) and its members */
    AB_SAMPLE,    /* one sample of one member */
    AB_CLOSE,     /* the point is done: release its members */
    AB_QUIT,
    AB_ERRORS /* protocol 2: what the point's verifications measured */
} ab_kind;

typedef struct ab_hello {
    uint32_t kind, protocol;
    int32_t threads, quick;
    double target_sample_us;
} ab_hello;

typedef struct ab_hello_reply {
    uint32_t protocol;
    int32_t ok;
    char git_sha[OPCOST_AB_NAME], torch_version[OPCOST_AB_NAME];
    char host[OPCOST_AB_NAME], cpu[128];
    char error[OPCOST_AB_TEXT];
} ab_hello_reply;

typedef struct ab_open {
    uint32_t kind;
    int32_t op, dtype, weight_dtype, layout, cold, nmembers;
    int64_t B, N;
    double eps;
    uint64_t nsets, llc_bytes, bytes; /* bytes: the block's size */
    /* where this side's rotation starts (warm-up included): 0 on both
     * sides since protocol 1's second form (half a rotation apart before;
     * the coordinator names every sample's set) */
    uint64_t first_set;
    char path[OPCOST_AB_MAX_MEMBERS][OPCOST_AB_NAME];
    char variant[OPCOST_AB_MAX_MEMBERS][OPCOST_AB_NAME];
} ab_open;

/* A member made ready (prepared, verified against the C double
 * reference, calibrated, warmed up), or why not. */
typedef struct ab_member_state {
    int32_t status; /* opcost_status */
    int32_t batch;  /* calls per sample, as it calibrated */
    double call_us;
    char dispatch_path[128];
    char why[OPCOST_AB_TEXT];
} ab_member_state;

typedef struct ab_open_reply {
    int32_t ok, nmembers;
    char error[OPCOST_AB_TEXT];
    ab_member_state m[OPCOST_AB_MAX_MEMBERS];
} ab_open_reply;

/* One sample of batch calls starting at input set `set`: a pair's two
 * sides take the same sets one after the other, the coordinator flushing
 * them out of the caches before each (neither reads what the other just
 * brought in). */
typedef struct ab_sample {
    uint32_t kind;
    int32_t member, batch;
    /* 1 + whether to lead the sample in with an untimed call, the same on
     * both sides (the base's call decides); 0: the worker decides by its
     * own call, as protocol 1's first workers did. In what was padding: a
     * worker of before reads set where it did and ignores this. */
    int32_t lead_in;
    int64_t set;
} ab_sample;
_Static_assert(sizeof(ab_sample) == 24 && offsetof(ab_sample, set) == 16,
               "ab_sample keeps protocol 1's layout");

typedef struct ab_sample_reply {
    int32_t ok;
    double us, device_us;
    char error[OPCOST_AB_TEXT];
} ab_sample_reply;

/* After AB_OPEN (protocol 2): each member's error at its verification,
 * output and residual, in units of its dtype's rounding (NAN: none, as
 * the results' out_err_units and residual_err_units). */
typedef struct ab_errors_reply {
    int32_t ok, nmembers;
    double out_err_units[OPCOST_AB_MAX_MEMBERS];
    double residual_err_units[OPCOST_AB_MAX_MEMBERS];
} ab_errors_reply;

/* What each member has to say once its point is done. */
typedef struct ab_close_reply {
    int32_t ok, nmembers;
    double compile_ms[OPCOST_AB_MAX_MEMBERS];
    char note[OPCOST_AB_MAX_MEMBERS][256];
} ab_close_reply;

/* One message (and, when fd >= 0, a file descriptor with it). 0, or -1
 * with errno set (EPIPE: the other side is gone). */
int ab_send(int sock, const void *msg, size_t len, int fd);

/* One message of exactly len bytes (a request: at most len, *got says
 * how many); *fd the descriptor that came with it, or -1 (fd may be NULL:
 * any that came is closed). 0; -1 with errno (0: the other side closed
 * the socket; EPROTO: a message of another size). */
int ab_recv(int sock, void *msg, size_t len, size_t *got, int *fd);

/* Maps bytes of the shared block fd read-write at a 2 MiB-aligned address,
 * asking for transparent huge pages (granted where the system's
 * shmem_enabled allows it). NULL with errno on failure; munmap(p, bytes)
 * releases it. */
void *ab_map_block(int fd, size_t bytes);

#endif
