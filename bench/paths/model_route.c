#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "model_route.h"
#include "plan.h"
#include "row.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* opcost_model (imported on first use: it imports transformers). */
static PyObject *model_module(void)
{
    static PyObject *m;
    if (!m)
        m = PyImport_ImportModule("opcost_model");
    return m;
}

/* The fused op's contiguous points: B tokens of hidden size N, as the
 * model holds its hidden states (the op's other points have no model
 * rows). */
int opcost_model_applies(const opcost_case *c)
{
    return c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM &&
           c->layout == OPCOST_CONTIGUOUS;
}

int opcost_model_prepare(opcost_path_run *r, char *why, size_t len)
{
    const opcost_workload *w = r->w;
    const opcost_plan *plan = r->plan;
    const long given = plan ? plan->model_max_tokens : -1;
    const long max_tokens = given >= 0 ? given
                            : w->cuda  ? 0
                                       : OPCOST_MODEL_MAX_TOKENS_CPU;
    if (max_tokens > 0 && w->c.B > max_tokens) {
        snprintf(why, len,
                 "a model path at %lld tokens: beyond --model-max-tokens %ld "
                 "(%s), the tokens a model stack is timed at here",
                 (long long)w->c.B, max_tokens,
                 given >= 0 ? "as given"
                            : "the CPU's default: a 2-layer 8B stack takes "
                              "about 70 ms a call at 41 tokens, seconds at "
                              "thousands");
        return 1;
    }
    if (opcost_python_start(why, len))
        return 1; /* no interpreter: skipped, with the reason */
    PyObject *m = model_module();
    if (!m)
        return opcost_python_error(why, len);
    PyObject *sets = PyList_New(w->nsets);
    for (int i = 0; sets && i < w->nsets; ++i) {
        const rowops_call c = opcost_workload_call(w, i);
        PyObject *one = Py_BuildValue("[N]", opcost_python_tensor_spec(&c.x));
        if (!one) {
            Py_CLEAR(sets);
            break;
        }
        PyList_SET_ITEM(sets, i, one);
    }
    if (!sets)
        return opcost_python_error(why, len);
    PyObject *made = PyObject_CallMethod(
        m, "model_runner", "(ssNsizi)", r->path->name,
        rowops_dtype_name(w->c.dtype), sets, w->c.distribution,
        plan ? plan->model_all_dtypes : 0,
        r->model_narrow ? OPCOST_MODEL_NARROW_CONFIG : NULL, r->pilot);
    if (!made)
        return opcost_python_error(why, len);
    PyObject *runner = NULL, *skip = NULL;
    if (!PyArg_ParseTuple(made, "OO", &runner, &skip)) {
        Py_DECREF(made);
        return opcost_python_error(why, len);
    }
    if (runner == Py_None) {
        const char *text = PyUnicode_Check(skip) ? PyUnicode_AsUTF8(skip) : 0;
        snprintf(why, len, "%s", text ? text : "no model for this point");
        Py_DECREF(made);
        PyErr_Clear();
        return 1;
    }
    Py_INCREF(runner);
    Py_DECREF(made);
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s%s",
             "transformers LlamaDecoderLayer stack",
             r->model_narrow ? " of " OPCOST_MODEL_NARROW_CONFIG
                               " (narrowed for --time-budget)"
                             : "");
    return opcost_python_adopt(r, runner, why, len);
}

int opcost_model_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    PyObject *runner = opcost_python_runner(r);
    PyObject *last = opcost_python_last(r, set);
    if (!runner || !last) {
        snprintf(why, len, "no output to verify");
        return -1;
    }
    PyObject *res = PyObject_CallMethod(runner, "verify", "(iO)", set, last);
    if (!res)
        return opcost_python_error(why, len);
    int rc = 0;
    if (res != Py_None) {
        const char *text = PyUnicode_AsUTF8(res);
        snprintf(why, len, "%s", text ? text : "wrong");
        PyErr_Clear();
        rc = 1;
    }
    Py_DECREF(res);
    /* timing follows: compilations from now on are recompilations */
    PyObject *begun = PyObject_CallMethod(runner, "timing_begins", NULL);
    Py_XDECREF(begun);
    PyErr_Clear();
    return rc;
}

/* d[key] as a number into *x (NAN when absent or None). */
static double number_of(PyObject *d, const char *key)
{
    PyObject *v = PyDict_GetItemString(d, key); /* borrowed */
    if (!v || v == Py_None)
        return NAN;
    const double x = PyFloat_AsDouble(v);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return NAN;
    }
    return x;
}

static int64_t count_of(PyObject *d, const char *key)
{
    const double x = number_of(d, key);
    return isfinite(x) ? (int64_t)x : OPCOST_INT_NA;
}

void opcost_model_evidence(opcost_path_run *r, struct opcost_result *row)
{
    PyObject *runner = opcost_python_runner(r);
    if (!runner)
        return;
    PyObject *n = PyObject_CallMethod(runner, "recompiles", NULL);
    if (n && strstr(r->path->name, "-compiled"))
        row->recompiles = PyLong_AsLongLong(n);
    Py_XDECREF(n);
    PyErr_Clear();
    PyObject *d = PyObject_CallMethod(runner, "evidence", NULL);
    if (!d || !PyDict_Check(d)) {
        char why[400] = "evidence() did not return a dict";
        if (!d)
            opcost_python_error(why, sizeof why);
        char note[512];
        snprintf(note, sizeof note, "no model evidence: %s", why);
        const size_t u = strlen(row->note);
        snprintf(row->note + u, sizeof row->note - u, "%s%s", u ? "; " : "",
                 note);
        Py_XDECREF(d);
        return;
    }
    row->norm_share = number_of(d, "norm_share");
    row->graph_breaks = count_of(d, "graph_breaks");
    row->op_calls = count_of(d, "op_calls");
    row->copies_around = count_of(d, "copies_around");
    PyObject *b = PyDict_GetItemString(d, "fusion_boundary"); /* borrowed */
    const char *text = b && PyUnicode_Check(b) ? PyUnicode_AsUTF8(b) : NULL;
    snprintf(row->fusion_boundary, sizeof row->fusion_boundary, "%s",
             text ? text : "");
    PyErr_Clear();
    Py_DECREF(d);
}
