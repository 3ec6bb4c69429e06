/* A benchmark path, as the measurement runs it: one way a model can get
 * from the inputs in their original layout to the outputs it needs. Each
 * path is one file in bench/paths/ implementing this interface, registered
 * in one table (bench/paths/registry.h); adding a path is adding a file
 * and a row. */
#ifndef OPCOST_PATH_H
#define OPCOST_PATH_H

#include "verify.h"
#include "workload.h"

#include <stddef.h>

struct opcost_path;
struct opcost_variant; /* bench/paths/variants.h */
struct opcost_result;  /* bench/results/row.h */
struct opcost_plan;    /* bench/measure/plan.h */

/* The state of one (point, path, variant). */
typedef struct opcost_path_run {
    const struct opcost_path *path;
    /* kernel variant; auto for others */
    const struct opcost_variant *variant;
    opcost_workload *w;
    /* the run's settings (NULL: the defaults, e.g. in a unit test) */
    const struct opcost_plan *plan;
    void *priv;              /* the path's own state */
    char dispatch_path[128]; /* what the path ran, filled by prepare/verify */
    /* where its calls' rotation of the input sets starts (warm-up
     * included): the members of a point start apart, so that none reads
     * sets another has just brought into the cache */
    int first_set;
    /* a model path: time the narrower real configuration in place of the
     * set's own model (the time budget chose it: budget.h) */
    int model_narrow;
    /* run by the time budget's pilot (model_pilot.h), not a point: what
     * it compiles, the first point that uses it reports */
    int pilot;
    /* what its verification measured (opcost_workload's
     * verified_*_units; NAN: not measured) */
    double out_err_units, residual_err_units;
} opcost_path_run;

/* The end of the kernel path's dispatch_path at a point whose layout is
 * not contiguous: it times the kernel on contiguous copies of the inputs,
 * made before timing, not the call from the point's layout. */
#define OPCOST_KERNEL_ON_COPIES " on contiguous copies"

/* The devices a path runs on (opcost_path.devices). */
enum { OPCOST_ON_CPU = 1, OPCOST_ON_CUDA = 2 };

typedef struct opcost_path {
    const char *name;
    const char *description;
    /* OPCOST_ON_*: a path on another device than the run's is left out of
     * the default selection, and skipped with the reason when named */
    int devices;
    int takes_variants; /* --variants applies */
    int needs_torch;    /* reaches libtorch through the bridge */
    /* A calibration path (add-kernel, torch-add-*): times something other
     * than the op, as a yardstick. */
    int calibration;
    /* Left out of the default selection, run only when --paths names it:
     * the calibration paths, and `distributed`, whose second rank shares
     * the machine's cores and slows every other path of the same run. */
    int named_only;
    /* Times a model around the op (bench/paths/model_route.c): it runs at
     * the fused op's contiguous points of a shape set whose model has a
     * decoder config, pairs with paired_with, and has no op-mix probe
     * (frac_of_peak), no attribution parts and no op bytes. */
    int model;
    /* A peer's kernel (bench/paths/peer_route.h): in the default
     * selection but for --quick, whose runs stay CI-sized. */
    int peer;
    /* The fused op in place on its own copies of the sets (x and residual
     * are its outputs): its frac_of_peak is against the in-place probe
     * (probe.h) and its ceiling the fused_in_place mix, on the CPU. */
    int in_place;
    /* Optional (NULL: every point): whether the path has a row at the
     * point of case c at all (a model path: the fused op, contiguous). */
    int (*applies)(const opcost_case *c);
    /* The path whose member this one's ratio is against (a model path:
     * the model as shipped in its mode; a peer: rowops' op of the same
     * form); NULL: the plan's baseline. */
    const char *paired_with;
    /* Sets up for r->w (conversions, wrapping). 0 ready; 1 skipped with
     * the reason in why; -1 error in why. */
    int (*prepare)(opcost_path_run *r, char *why, size_t len);
    /* One call on input set `set`: what is timed. 0, or -1 with err. */
    int (*run)(opcost_path_run *r, int set, char *err, size_t len);
    /* After run(set) on poisoned outputs: 0 right, 1 wrong (why), -1
     * error (why). */
    int (*verify)(opcost_path_run *r, int set, char *why, size_t len);
    /* Only the layout conversions the path performs, for attribution;
     * NULL when the path converts nothing. */
    int (*convert)(opcost_path_run *r, int set, char *err, size_t len);
    void (*release)(opcost_path_run *r);
    /* Optional (NULL): compile or build time in ms for compiled paths
     * (NAN: none); a note on the run (recompilations, caching), appended
     * to the row's note after timing. */
    double (*compile_ms)(opcost_path_run *r);
    void (*annotate)(opcost_path_run *r, char *note, size_t len);
    /* Optional (NULL): after timing, what the path found out about the
     * call beyond its time (a model path's norm share and the compiler's
     * evidence: the results' version-5 columns); a failure is a note. */
    void (*evidence)(opcost_path_run *r, struct opcost_result *row);
} opcost_path;

#endif
