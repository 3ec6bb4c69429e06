/* `compiled-aoti`: an AOTInductor package of the exported op, run from C
 * without Python, as a deployment runs it: through the C bridge over
 * torch::inductor::AOTIModelPackageLoader (bench/bridge/bridge_aoti.cpp), the
 * documented C++ loader; the package calls the registered op through
 * AOTInductor's proxy executor. One package per (op, dtype, eps, torch
 * version), dynamic in B and N, built once by the embedded interpreter
 * (torch.export + aoti_compile_and_package, the only way to build one) and
 * cached under $OPCOST_CACHE/aoti (default ~/.cache/opcost/aoti: the rule
 * is opcost_bench.cache_dir's). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "path.h"
#include "python_embed.h"
#include "rowops_bridge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loaded packages, kept for the run: loading unpacks the package. */
typedef struct loaded {
    char key[128];
    rowops_bridge_aoti *model;
    double build_ms; /* NAN: found in the cache */
    int reported;    /* build time already given to a row */
} loaded;

static loaded packages[16];
static int npackages;

typedef struct aoti_state {
    loaded *pkg;
    rowops_bridge_tensor **in; /* nsets x (1 or 3) */
    int per_set;
    rowops_bridge_result *results; /* per set, as torch_route.c's */
    double build_ms;
} aoti_state;

static loaded *package_for(const opcost_case *c, int cuda, char *why,
                           size_t len)
{
    const char *device = cuda ? "cuda" : "cpu";
    char key[128];
    snprintf(key, sizeof key, "%s-%s-%g-%s", rowops_op_name(c->op),
             rowops_dtype_name(c->dtype), c->eps, device);
    for (int i = 0; i < npackages; ++i)
        if (strcmp(packages[i].key, key) == 0)
            return &packages[i];
    if (npackages == (int)(sizeof packages / sizeof packages[0])) {
        snprintf(why, len, "too many AOTInductor packages in one run");
        return NULL;
    }
    if (opcost_python_start(why, len))
        return NULL;
    /* the package's directory: opcost_bench.cache_dir, the one rule */
    PyObject *r = PyObject_CallMethod(
        opcost_python_bench_module(), "aoti_package", "(ssds)",
        rowops_op_name(c->op), rowops_dtype_name(c->dtype), c->eps, device);
    const char *path;
    double seconds;
    if (!r || !PyArg_ParseTuple(r, "sd", &path, &seconds)) {
        Py_XDECREF(r);
        opcost_python_error(why, len);
        return NULL;
    }
    loaded *p = &packages[npackages];
    snprintf(p->key, sizeof p->key, "%s", key);
    p->build_ms = seconds * 1e3; /* NAN stays NAN: cached */
    p->model = rowops_bridge_aoti_load(path, why, len);
    Py_DECREF(r);
    if (!p->model)
        return NULL;
    ++npackages;
    return p;
}

static int aoti_prepare(opcost_path_run *r, char *why, size_t len)
{
    const opcost_workload *w = r->w;
    loaded *pkg = package_for(&w->c, w->cuda, why, len);
    if (!pkg)
        return -1;
    aoti_state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    r->priv = s;
    s->pkg = pkg;
    /* the build time goes to the first row that used the package */
    s->build_ms = pkg->reported ? 0.0 : pkg->build_ms;
    pkg->reported = 1;
    s->per_set = rowops_op_info_of(w->c.op)->tensor_args;
    s->in = calloc((size_t)(w->nsets * s->per_set), sizeof *s->in);
    s->results = calloc((size_t)w->nsets, sizeof *s->results);
    if (!s->in || !s->results) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    for (int i = 0; i < w->nsets; ++i) {
        const rowops_tensor *t[3] = {&w->sets[i].x, &w->sets[i].residual,
                                     &w->sets[i].weight};
        for (int k = 0; k < s->per_set; ++k)
            if (!(s->in[i * s->per_set + k] =
                      rowops_bridge_wrap(t[k], why, len)))
                return -1;
    }
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "aoti proxy executor");
    return 0;
}

static int aoti_run(opcost_path_run *r, int set, char *err, size_t len)
{
    aoti_state *s = r->priv;
    return rowops_bridge_aoti_run(s->pkg->model, s->in + set * s->per_set,
                                  s->per_set, &s->results[set], err, len);
}

static int aoti_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    aoti_state *s = r->priv;
    opcost_outputs o;
    memset(&o, 0, sizeof o);
    const rowops_bridge_result *res = &s->results[set];
    o.out = res->desc[0];
    if (res->count == 3) {
        o.residual_out = res->desc[1];
        o.rstd = res->desc[2];
    } else if (res->count == 2) {
        o.rstd = res->desc[1];
    }
    const char *ran = rowops_bridge_last_dispatch();
    if (*ran)
        snprintf(r->dispatch_path, sizeof r->dispatch_path,
                 "aoti proxy executor -> %s", ran);
    return opcost_verify_outputs(r->w, set, &o, why, len);
}

static void aoti_release(opcost_path_run *r)
{
    aoti_state *s = r->priv;
    if (!s)
        return;
    for (int i = 0; s->results && i < r->w->nsets; ++i)
        rowops_bridge_result_clear(&s->results[i]);
    free(s->results);
    for (int i = 0; s->in && i < r->w->nsets * s->per_set; ++i)
        rowops_bridge_release(s->in[i]);
    free(s->in);
    free(s);
    r->priv = NULL;
}

static double aoti_compile_ms(opcost_path_run *r)
{
    const aoti_state *s = r->priv;
    return s ? (isnan(s->build_ms) ? 0.0 : s->build_ms) : NAN;
}

static void aoti_annotate(opcost_path_run *r, char *note, size_t len)
{
    const aoti_state *s = r->priv;
    if (!s)
        return;
    const size_t used = strlen(note);
    snprintf(note + used, len - used, "%s%s", used ? "; " : "",
             isnan(s->build_ms) ? "package from the cache"
             : s->build_ms > 0  ? "package built in this run (compile_ms)"
                                : "package built for an earlier point");
}

const opcost_path opcost_path_compiled_aoti = {
    .name = "compiled-aoti",
    .devices = OPCOST_ON_CPU | OPCOST_ON_CUDA,
    .description = "an AOTInductor package of the exported op, run from C "
                   "without Python (AOTIModelPackageLoader)",
    .takes_variants = 0,
    .needs_torch = 1,
    .prepare = aoti_prepare,
    .run = aoti_run,
    .verify = aoti_verify,
    .convert = NULL,
    .release = aoti_release,
    .compile_ms = aoti_compile_ms,
    .annotate = aoti_annotate,
};
