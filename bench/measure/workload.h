/* The memory one benchmark point runs on: a case (a shape-file row) and
 * its sets, each its inputs in the original layout and its own contiguous
 * outputs (for the paths that write into caller memory), rotated between
 * calls so that all sets together span OPCOST_COLD_SPAN_LLC x the
 * last-level cache (cold): when a set's turn comes again, neither its
 * inputs nor its outputs are in any cache level.
 *
 * Layouts are those of shapes/README.md: contiguous [B, N]; transposed, a
 * [B, N] view of an [N, B] buffer (strides (1, B)); row_strided, row stride
 * N + 3; misaligned, a storage offset of one element. The weight is a
 * contiguous [N] vector per set (each layer has its own). */
#ifndef OPCOST_WORKLOAD_H
#define OPCOST_WORKLOAD_H

#include "buffer.h"
#include "row.h"
#include "rowops.h"
#include "shape_file.h"

#include <stddef.h>
#include <stdint.h>

/* Paths' per-set memory a workload holds: one for each path and kernel
 * variant a point may time (POINT_ROWS_MAX; --variants all on a
 * transposed point gives each kernel variant its own copies). */
#define OPCOST_WORKLOAD_SCRATCH_MAX 256

typedef struct opcost_case {
    const char *distribution; /* the shape set's name */
    rowops_op op;
    int64_t B, N;
    rowops_dtype dtype, weight_dtype;
    opcost_layout layout;
    double freq;
    char freq_text[32]; /* freq as written in the shape file */
    double eps;
} opcost_case;

/* One input set and the caller-owned outputs of the C paths. residual,
 * weight and residual_out are unused (zeroed) for rms_norm_rows. */
typedef struct opcost_set {
    rowops_tensor x, residual, weight;
    rowops_tensor out, residual_out, rstd;
} opcost_set;

/* The double-precision reference of the rows verification checks (every
 * step-th row of one set), computed once per point and shared by every
 * path's verification (bench/measure/verify.c). */
typedef struct opcost_expected {
    int set;                /* -1: not computed */
    double eps;             /* the eps it was computed with */
    int64_t step, rows;     /* rows checked: 0, step, 2 step, ..., B - 1 */
    double *out, *h, *rstd; /* rows x N, rows x N (fused), rows */
} opcost_expected;

typedef struct opcost_workload {
    opcost_case c;
    int nsets;
    opcost_set *sets;
    opcost_cache_state cache; /* cold when the inputs exceed the LLC */
    size_t input_bytes;       /* all sets' inputs, as allocated */
    void *in_mem, *out_mem;
    int owns_memory;  /* 0: attached to the caller's (opcost ab's shared) */
    size_t llc_bytes; /* the cache a cold rotation spans 4x */
    /* per-set memory of the paths (opcost_workload_scratch), flushed
     * with the sets */
    struct {
        void *mem;
        size_t per_set;
        int owned; /* allocated here (else the attached block's) */
    } scratch[OPCOST_WORKLOAD_SCRATCH_MAX];
    int nscratch;
    /* an attached block's room for one path's scratch (NULL: none or
     * taken) */
    void *shared_scratch;
    size_t shared_scratch_per_set;
    opcost_expected expected;
    /* The largest errors the last verification measured against the
     * float64 reference, in units of 2^-p of each element's magnitude (p:
     * the dtype's significand bits; elements below its smallest normal
     * left out): out (y) and residual_out (h). NAN: not measured. */
    double verified_out_units, verified_residual_units;
    /* On a GPU (opcost_workload_to_device): sets describes device memory,
     * host_sets the host copy the inputs were filled in (the reference
     * reads it); cuda_arch the device's compute capability. */
    int cuda, cuda_arch;
    opcost_set *host_sets;
    void *dev_in, *dev_out;
    size_t set_in_bytes, set_out_bytes;
} opcost_workload;

/* The most sets a point rotates through. */
#define OPCOST_MAX_SETS 65536
/* A cold rotation spans this many last-level caches: what each array of
 * the DRAM ceiling spans (bench/ceiling/ceiling.h). */
#define OPCOST_COLD_SPAN_LLC 4

/* Allocates and fills (random non-zero values from seed) enough sets that
 * their inputs and outputs span OPCOST_COLD_SPAN_LLC x llc_bytes when
 * cold, else one set.
 * Returns 0, or -1 with err. */
int opcost_workload_make(opcost_workload *w, const opcost_case *c,
                         size_t llc_bytes, int cold, uint64_t seed, char *err,
                         size_t errlen);

void opcost_workload_free(opcost_workload *w);

/* Flushes every byte the engine knows that sets first .. first + count - 1
 * (mod nsets) touch (their inputs, outputs and the paths' scratch) out of
 * every cache level (clflushopt), when the workload is cold and a set is
 * smaller than a sixteenth of the last-level cache: the members of a round
 * share the sets, so another member may have just read a set this sample is
 * about to (a constant bias between two members that advance alike: 2-17 % in
 * an A/A of one build). Nothing on a GPU. */
void opcost_workload_flush(const opcost_workload *w, int first, int count);

/* The same for sets of any size (a cold CPU workload): opcost ab, whose
 * pairs take their samples on the same sets one after the other. */
void opcost_workload_flush_any(const opcost_workload *w, int first, int count);

/* Per-set memory a path's calls touch besides the sets (the kernel path's
 * contiguous copies): bytes_per_set for each set, 64-byte aligned,
 * flushed with the sets and freed with the workload. NULL when memory ran
 * out or four paths already hold some. */
void *opcost_workload_scratch(opcost_workload *w, size_t bytes_per_set);

/* The bytes a workload of c needs in one block (inputs, then outputs) and
 * its sets, as opcost_workload_make would make them. */
size_t opcost_workload_shared_bytes(const opcost_case *c, size_t llc_bytes,
                                    int cold, size_t *nsets);

/* A workload over the caller's block mem (opcost_workload_shared_bytes of
 * it, nsets sets: opcost ab's memory, shared by its processes), its
 * inputs filled (random from seed) when fill, else as they are. Freeing
 * it leaves mem alone. 0, or -1 with err. */
int opcost_workload_attach(opcost_workload *w, const opcost_case *c,
                           size_t nsets, size_t llc_bytes, int cold, void *mem,
                           int fill, uint64_t seed, char *err, size_t errlen);

/* Moves a made workload to the current CUDA device: device buffers of the
 * same layout, the inputs copied there, sets rebased to them (host_sets
 * keeps the host copy). 0, or -1 with err. */
int opcost_workload_to_device(opcost_workload *w, int cuda_arch, char *err,
                              size_t errlen);

/* The call on set `set` over the host copy of its inputs (the same as
 * opcost_workload_call on the CPU). */
rowops_call opcost_workload_host_call(const opcost_workload *w, int set);

/* An upper bound of the memory a point needs while it is measured (its
 * input sets, the kernel path's copies, outputs), in bytes, as a double:
 * shape files may hold sizes that overflow size_t. */
double opcost_workload_bytes(const opcost_case *c, size_t llc_bytes, int cold);

/* The input sets a point's calls rotate over (about: opcost_workload_make
 * aligns the sets), what its setup's cost grows with. */
double opcost_workload_sets(const opcost_case *c, size_t llc_bytes, int cold);

/* The call on set `set`: inputs in the original layout, the set's
 * contiguous outputs. */
rowops_call opcost_workload_call(const opcost_workload *w, int set);

/* Fills the output set with NaN bytes, so an element a path does not
 * write fails verification. */
void opcost_workload_poison_outputs(opcost_workload *w);

/* The fewest bytes the op must move: each input read once, each output
 * written once (x, residual, weight; out, residual_out, rstd). */
int64_t opcost_case_bytes(const opcost_case *c);

/* Descriptor of a contiguous [rows, n] tensor at data. */
rowops_tensor opcost_contiguous(void *data, rowops_dtype dtype, int64_t rows,
                                int64_t n);

#endif
