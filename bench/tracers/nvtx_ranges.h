/* NVTX ranges of a run, so an Nsight Systems trace reads like the run:
 * run > distribution > shape > path > phase (calibrate, warm-up,
 * repetition, verify, convert, attribute; a phase may hold phases: the
 * conversions are calibrated and repeated too). All in the `opcost`
 * domain, each level an NVTX category of its name; the fixed names and
 * the path names are registered strings, distributions and shapes
 * dynamic text. Without a tool attached every call is NVTX's no-op; in a
 * build without the NVTX headers (OPCOST_HAVE_NVTX undefined) these
 * functions do nothing.
 *
 * Ranges are per thread. Each thread's pushes are checked: a push must go
 * deeper than the range open, a pop must close a range of its level; a
 * violation is counted, reported once on stderr, and the NVTX range
 * still popped so the trace stays usable. */
#ifndef OPCOST_NVTX_RANGES_H
#define OPCOST_NVTX_RANGES_H

typedef enum opcost_nvtx_level {
    OPCOST_NVTX_RUN = 1,
    OPCOST_NVTX_DISTRIBUTION,
    OPCOST_NVTX_SHAPE,
    OPCOST_NVTX_PATH,
    OPCOST_NVTX_PHASE,
} opcost_nvtx_level;

void opcost_nvtx_push(opcost_nvtx_level level, const char *name);
void opcost_nvtx_pushf(opcost_nvtx_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A path's range: "path", or "path/variant" unless variant is NULL or
 * "auto". */
void opcost_nvtx_push_path(const char *path, const char *variant);
void opcost_nvtx_pop(opcost_nvtx_level level);

/* This thread's open ranges, and the violations counted so far. */
int opcost_nvtx_depth(void);
long opcost_nvtx_mismatches(void);

#endif
