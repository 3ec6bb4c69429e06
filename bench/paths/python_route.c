#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "python_embed.h"
#include "python_route.h"
#include "rowops_bridge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct python_state {
    PyObject *runner, *fn, *args;
    /* per set: its last call's result, alive until the next call on the
     * same set replaces it (the sets' outputs span the cold rotation) */
    PyObject **last;
    int nsets;
    double compile_ms;
    int compiled_first;
    int compiled_by_pilot; /* the model stacks' pilot compiled it */
} python_state;

/* torch-add-python: the calibration path, h alone (one output). */
static int is_add_path(const opcost_path_run *r)
{
    return strcmp(r->path->name, "torch-add-python") == 0;
}

/* The path's state for w's sets, in r->priv. 0, or -1 with why. */
static python_state *new_state(opcost_path_run *r, char *why, size_t len)
{
    python_state *s = PyMem_Calloc(1, sizeof *s);
    if (s)
        s->last = PyMem_Calloc((size_t)r->w->nsets, sizeof *s->last);
    if (!s || !s->last) {
        PyMem_Free(s);
        snprintf(why, len, "out of memory");
        return NULL;
    }
    r->priv = s;
    s->compile_ms = NAN;
    s->nsets = r->w->nsets;
    return s;
}

/* Takes runner's reference into s: its fn, args and first compile. 0, or
 * -1 with a Python error. */
static int adopt(python_state *s, PyObject *runner)
{
    s->runner = runner;
    s->fn = PyObject_GetAttrString(runner, "fn");
    s->args = PyObject_GetAttrString(runner, "args");
    PyObject *ms = PyObject_GetAttrString(runner, "compile_ms");
    PyObject *first = PyObject_GetAttrString(runner, "compiled_first");
    const int ok = s->fn && s->args && ms && first;
    if (ok) {
        s->compile_ms = PyFloat_AsDouble(ms);
        s->compiled_first = PyObject_IsTrue(first);
    }
    Py_XDECREF(ms);
    Py_XDECREF(first);
    /* only the model paths' runners have it */
    PyObject *pilot = PyObject_GetAttrString(runner, "compiled_by_pilot");
    s->compiled_by_pilot = pilot && PyObject_IsTrue(pilot) == 1;
    Py_XDECREF(pilot);
    PyErr_Clear();
    return ok ? 0 : -1;
}

int opcost_python_adopt(opcost_path_run *r, opcost_pyobj *runner, char *why,
                        size_t len)
{
    if (!new_state(r, why, len)) {
        Py_DECREF(runner);
        return -1;
    }
    return adopt(r->priv, runner) ? opcost_python_error(why, len) : 0;
}

opcost_pyobj *opcost_python_runner(const opcost_path_run *r)
{
    const python_state *s = r->priv;
    return s ? s->runner : NULL;
}

opcost_pyobj *opcost_python_last(const opcost_path_run *r, int set)
{
    const python_state *s = r->priv;
    return s && set >= 0 && set < s->nsets ? s->last[set] : NULL;
}

/* An AOTInductor model path (model-<norm>-aoti; not compiled-aoti, which
 * runs from C): its "compile" is the package's build. */
static int is_aoti(const opcost_path *p)
{
    const size_t n = strlen(p->name);
    return p->model && n > 5 && !strcmp(p->name + n - 5, "-aoti");
}

/* A compiled path: compiled-python*, model-*-compiled and model-*-aoti. */
static int is_compiled(const opcost_path *p)
{
    return !strncmp(p->name, "compiled", 8) || strstr(p->name, "-compiled") ||
           is_aoti(p);
}

int opcost_python_prepare(opcost_path_run *r, char *why, size_t len)
{
    return opcost_python_prepare_calls(r, r->path->name, NULL, why, len);
}

int opcost_python_prepare_calls(opcost_path_run *r, const char *runner,
                                const rowops_call *calls, char *why, size_t len)
{
    if (opcost_python_start(why, len))
        return 1; /* no interpreter: skipped, with the reason */
    const opcost_workload *w = r->w;
    const int fused = w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    if (is_add_path(r) && !fused) {
        snprintf(why, len, "torch.add calibration: fused_add_rms_norm only");
        return 1;
    }
    python_state *s = new_state(r, why, len);
    if (!s)
        return -1;
    PyObject *sets = PyList_New(w->nsets);
    for (int i = 0; sets && i < w->nsets; ++i) {
        const rowops_call c = calls ? calls[i] : opcost_workload_call(w, i);
        PyObject *one =
            fused ? Py_BuildValue("[NNN]", opcost_python_tensor_spec(&c.x),
                                  opcost_python_tensor_spec(&c.residual),
                                  opcost_python_tensor_spec(&c.weight))
                  : Py_BuildValue("[N]", opcost_python_tensor_spec(&c.x));
        if (!one) {
            Py_DECREF(sets);
            return opcost_python_error(why, len);
        }
        PyList_SET_ITEM(sets, i, one);
    }
    PyObject *made = PyObject_CallMethod(
        opcost_python_bench_module(), "Runner", "(ssssdN)", runner,
        rowops_op_name(w->c.op), rowops_dtype_name(w->c.dtype),
        opcost_layout_name(w->c.layout), w->c.eps, sets);
    if (!made || adopt(s, made))
        return opcost_python_error(why, len);
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s",
             !strcmp(runner, "triton")             ? "triton kernel"
             : strstr(r->path->name, "reference")  ? "aten composite"
             : strstr(r->path->name, "decomposed") ? "inductor kernel"
             : is_add_path(r)                      ? "torch.add (dispatcher)"
                                                   : "dispatcher");
    return 0;
}

int opcost_python_run(opcost_path_run *r, int set, char *err, size_t len)
{
    python_state *s = r->priv;
    PyObject *res = PyObject_Call(s->fn, PyList_GET_ITEM(s->args, set), NULL);
    if (!res)
        return opcost_python_error(err, len);
    Py_XDECREF(s->last[set]); /* that set's previous outputs are freed */
    s->last[set] = res;
    return 0;
}

int opcost_python_outputs(opcost_pyobj *result, int h_only, opcost_outputs *o,
                          char *why, size_t len)
{
    PyObject *specs = PyObject_CallMethod(opcost_python_bench_module(),
                                          "describe", "(O)", result);
    if (!specs)
        return opcost_python_error(why, len);
    memset(o, 0, sizeof *o);
    rowops_tensor t[3];
    const Py_ssize_t n = PyList_Size(specs);
    int bad = h_only ? n != 1 : n < 2 || n > 3;
    memset(t, 0, sizeof t);
    for (Py_ssize_t i = 0; !bad && i < n; ++i) {
        PyObject *spec = PyList_GET_ITEM(specs, i);
        /* None: the scale a peer does not return (left unverified); every
         * other output is required */
        if (spec == Py_None)
            bad = i != n - 1 || h_only;
        else
            bad = opcost_python_tensor_from_spec(spec, &t[i]) != 0;
    }
    Py_DECREF(specs);
    if (bad) {
        PyErr_Clear();
        snprintf(why, len, "unexpected outputs (%zd)", n);
        return 1;
    }
    if (n == 1) {
        o->residual_out = t[0];
    } else if (n == 3) {
        o->out = t[0];
        o->residual_out = t[1];
        o->rstd = t[2];
    } else {
        o->out = t[0];
        o->rstd = t[1];
    }
    return 0;
}

int opcost_python_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    python_state *s = r->priv;
    opcost_outputs o;
    const int rc =
        opcost_python_outputs(s->last[set], is_add_path(r), &o, why, len);
    if (rc)
        return rc;
    if (strcmp(r->dispatch_path, "dispatcher") == 0) {
        const char *ran = rowops_bridge_last_dispatch();
        if (*ran)
            snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s", ran);
    }
    /* timing follows: compilations from now on are recompilations */
    PyObject *begun = PyObject_CallMethod(s->runner, "timing_begins", NULL);
    Py_XDECREF(begun);
    PyErr_Clear();
    return opcost_verify_outputs(r->w, set, &o, why, len);
}

void opcost_python_release(opcost_path_run *r)
{
    python_state *s = r->priv;
    if (!s)
        return;
    for (int i = 0; s->last && i < s->nsets; ++i)
        Py_XDECREF(s->last[i]);
    PyMem_Free(s->last);
    Py_XDECREF(s->args);
    Py_XDECREF(s->fn);
    Py_XDECREF(s->runner);
    PyMem_Free(s);
    r->priv = NULL;
}

double opcost_python_compile_ms(opcost_path_run *r)
{
    const python_state *s = r->priv;
    if (!s || !is_compiled(r->path))
        return NAN;
    return s->compiled_first ? s->compile_ms : 0.0;
}

/* Appends the runner's own note (Runner.note: how eager-python entered),
 * if any. */
static void runner_note(python_state *s, char *note, size_t len)
{
    PyObject *t = PyObject_CallMethod(s->runner, "note", NULL);
    const char *what = t && PyUnicode_Check(t) ? PyUnicode_AsUTF8(t) : NULL;
    if (what && *what) {
        const size_t used = strlen(note);
        snprintf(note + used, len - used, "%s%s", used ? "; " : "", what);
    }
    Py_XDECREF(t);
    PyErr_Clear();
}

void opcost_python_annotate(opcost_path_run *r, char *note, size_t len)
{
    python_state *s = r->priv;
    if (!s)
        return;
    runner_note(s, note, len);
    if (!is_compiled(r->path))
        return;
    PyObject *n = PyObject_CallMethod(s->runner, "recompiles", NULL);
    const long recompiles = n ? PyLong_AsLong(n) : -1;
    Py_XDECREF(n);
    PyErr_Clear();
    const size_t used = strlen(note);
    const char *what =
        is_aoti(r->path)
            ? (!s->compiled_first ? "AOTInductor package reused from an "
                                    "earlier point (tokens dynamic)"
               : isnan(s->compile_ms)
                   ? "AOTInductor package loaded from the cache "
                     "(tokens dynamic)"
                   : "AOTInductor package built at this point (tokens "
                     "dynamic)")
        : s->compiled_by_pilot ? "compiled for this point by the model "
                                 "stacks' pilot, before the points "
                                 "(dynamic shapes)"
        : s->compiled_first    ? "compiled at this point (dynamic shapes)"
                               : "graph reused from an earlier point "
                                 "(dynamic shapes)";
    snprintf(note + used, len - used, "%s%s", used ? "; " : "", what);
    if (recompiles > 0) {
        const size_t u = strlen(note);
        snprintf(note + u, len - u,
                 "; recompiled %ld time%s during timing: the timed calls "
                 "include compilation",
                 recompiles, recompiles == 1 ? "" : "s");
    }
}
