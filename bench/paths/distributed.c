/* `distributed`: the op on a DTensor sharded over two CPU ranks (gloo), as a
 * tensor- or sequence-parallel model calls it. Rank 0 is the embedded
 * interpreter; rank 1 a child process started once per run
 * (opcost_bench.distributed_peer). Each point's input sets are sharded
 * over the two ranks (copies: the local shards are contiguous), then the
 * timed call is rank 0's torch.ops.rowops...(dtensors..., eps) from C: the
 * DTensor dispatch, any redistribution (communication with rank 1) and the
 * kernel on rank 0's shard. $OPCOST_DISTRIBUTED_PLACEMENT chooses x's
 * placement: rows (Shard(0), default: no communication), hidden (Shard(1):
 * redistributed first, an all-gather on gloo), replicate.
 *
 * A placement that communicates needs rank 1 in every call: it is granted
 * calls ahead (in doubling batches, so the timed calls rarely pay for the
 * grant) and waits inside each call's collective for rank 0; the calls
 * granted but not made are made by rank 0, untimed, before verification
 * and release. Verification: both ranks call on the set once more, the
 * outputs are gathered whole and checked against the reference, and rank
 * 0's share must equal its share of the timed call. Skipped, with the
 * reason, where torch.distributed, gloo or the second rank is missing;
 * every wait on rank 1 is bounded (bench/python/opcost_bench.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "path.h"
#include "python_embed.h"
#include "python_route.h"
#include "rowops_bridge.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { MAX_GRANT = 64 };

typedef struct dist_state {
    PyObject *runner, *fn, *args, *last;
    int mirror;          /* rank 1 makes every call too */
    int failed;          /* a call failed: the ranks are out of step */
    long calls, granted; /* by rank 0; granted to rank 1 */
    long grant;          /* the next grant's size */
} dist_state;

/* Argument a of a set: x, residual, weight. */
static const rowops_tensor *arg_of(const opcost_set *set, int a)
{
    return a == 0 ? &set->x : a == 1 ? &set->residual : &set->weight;
}

/* The bytes from each set's argument a to the next set's (the driver lays
 * the sets out evenly), or -1 where they are not evenly spaced. */
static ptrdiff_t set_step(const opcost_workload *w, int a)
{
    const char *first = arg_of(&w->sets[0], a)->data;
    const ptrdiff_t step = (const char *)arg_of(&w->sets[1], a)->data - first;
    for (int i = 2; i < w->nsets; ++i)
        if ((const char *)arg_of(&w->sets[i], a)->data - first !=
            step * (ptrdiff_t)i)
            return -1;
    return step > 0 ? step : -1;
}

static int fail(char *why, size_t len)
{
    return opcost_python_error(why, len);
}

static int dist_prepare(opcost_path_run *r, char *why, size_t len)
{
    if (opcost_python_start(why, len))
        return 1; /* no interpreter: skipped, with the reason */
    dist_state *s = PyMem_Calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    r->priv = s;
    s->grant = 1;
    const opcost_workload *w = r->w;
    const int nargs = rowops_op_info_of(w->c.op)->tensor_args;
    PyObject *columns = PyList_New(nargs);
    for (int a = 0; columns && a < nargs; ++a) {
        const ptrdiff_t step = w->nsets > 1 ? set_step(w, a) : 0;
        if (step < 0) {
            Py_DECREF(columns);
            snprintf(why, len, "input sets not evenly spaced in memory");
            return -1;
        }
        PyObject *col = Py_BuildValue(
            "(Nn)", opcost_python_tensor_spec(arg_of(&w->sets[0], a)),
            (Py_ssize_t)step);
        if (!col) {
            Py_DECREF(columns);
            return fail(why, len);
        }
        PyList_SET_ITEM(columns, a, col);
    }
    if (!columns)
        return fail(why, len);
    PyObject *made = PyObject_CallMethod(
        opcost_python_bench_module(), "distributed_runner", "(sssdiN)",
        rowops_op_name(w->c.op), rowops_dtype_name(w->c.dtype),
        opcost_layout_name(w->c.layout), w->c.eps, w->nsets, columns);
    if (!made)
        return fail(why, len);
    PyObject *runner = PyTuple_GetItem(made, 0);      /* borrowed */
    PyObject *unavailable = PyTuple_GetItem(made, 1); /* borrowed */
    if (!runner || !unavailable) {
        Py_DECREF(made);
        return fail(why, len);
    }
    if (runner == Py_None) {
        const char *text = PyUnicode_AsUTF8(unavailable);
        snprintf(why, len, "%s", text ? text : "distributed: unavailable");
        Py_DECREF(made);
        PyErr_Clear();
        return 1; /* skipped, with the reason */
    }
    Py_INCREF(runner);
    s->runner = runner;
    Py_DECREF(made);
    s->fn = PyObject_GetAttrString(s->runner, "fn");
    s->args = PyObject_GetAttrString(s->runner, "args");
    PyObject *mirror = PyObject_GetAttrString(s->runner, "mirror");
    if (!s->fn || !s->args || !mirror) {
        Py_XDECREF(mirror);
        return fail(why, len);
    }
    s->mirror = PyObject_IsTrue(mirror);
    Py_DECREF(mirror);
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "dtensor");
    return 0;
}

static int dist_run(opcost_path_run *r, int set, char *err, size_t len)
{
    dist_state *s = r->priv;
    if (s->mirror && s->calls == s->granted) {
        PyObject *ok = PyObject_CallMethod(s->runner, "grant", "(l)", s->grant);
        if (!ok) {
            s->failed = 1;
            return fail(err, len);
        }
        Py_DECREF(ok);
        s->granted += s->grant;
        s->grant = s->grant < MAX_GRANT ? 2 * s->grant : MAX_GRANT;
    }
    PyObject *res = PyObject_Call(s->fn, PyList_GET_ITEM(s->args, set), NULL);
    if (!res) {
        s->failed = 1;
        return fail(err, len);
    }
    s->calls++;
    Py_XDECREF(s->last); /* the previous call's outputs are freed now */
    s->last = res;
    return 0;
}

/* Rank 0 makes the calls granted to rank 1 but not made: then both have
 * made the same calls. */
static int settle(dist_state *s, const char *method, char *why, size_t len)
{
    PyObject *ok =
        PyObject_CallMethod(s->runner, method, "(l)", s->granted - s->calls);
    if (!ok)
        return fail(why, len);
    Py_DECREF(ok);
    s->granted = s->calls;
    s->grant = 1;
    return 0;
}

static int dist_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    dist_state *s = r->priv;
    if (!s->last) {
        snprintf(why, len, "no call to verify");
        return -1;
    }
    if (settle(s, "settle", why, len))
        return -1;
    PyObject *full =
        PyObject_CallMethod(s->runner, "verify", "(iO)", set, s->last);
    if (!full)
        return fail(why, len);
    if (full == Py_None) {
        Py_DECREF(full);
        snprintf(why, len,
                 "rank 0's outputs of the timed call differ from the same "
                 "call made again");
        return 1;
    }
    opcost_outputs o;
    const int rc = opcost_python_outputs(full, 0, &o, why, len);
    Py_DECREF(full);
    if (rc)
        return rc;
    const char *ran = rowops_bridge_last_dispatch();
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "dtensor: %s",
             *ran ? ran : "dispatcher");
    /* the gathered outputs stay alive in the runner until released */
    return opcost_verify_outputs(r->w, set, &o, why, len);
}

static void dist_release(opcost_path_run *r)
{
    dist_state *s = r->priv;
    if (!s)
        return;
    Py_CLEAR(s->last);
    if (s->runner && s->failed) {
        PyObject *ok = PyObject_CallMethod(s->runner, "abandon", "(s)",
                                           "a timed call failed");
        Py_XDECREF(ok);
        PyErr_Clear();
    } else if (s->runner) {
        char why[256];
        if (settle(s, "release", why, sizeof why))
            fprintf(stderr, "opcost: distributed: %s\n", why);
    }
    Py_XDECREF(s->args);
    Py_XDECREF(s->fn);
    Py_XDECREF(s->runner);
    PyMem_Free(s);
    r->priv = NULL;
}

static void dist_annotate(opcost_path_run *r, char *note, size_t len)
{
    dist_state *s = r->priv;
    if (!s)
        return;
    PyObject *text = PyObject_CallMethod(s->runner, "note", NULL);
    const char *t = text ? PyUnicode_AsUTF8(text) : NULL;
    const size_t used = strlen(note);
    if (t)
        snprintf(note + used, len - used, "%s%s", used ? "; " : "", t);
    Py_XDECREF(text);
    PyErr_Clear();
}

const opcost_path opcost_path_distributed = {
    .name = "distributed",
    .devices = OPCOST_ON_CPU,
    .description =
        "the op on a DTensor over 2 CPU ranks (gloo): rank 0's call timed, "
        "communication included ($OPCOST_DISTRIBUTED_PLACEMENT: rows, "
        "hidden, replicate)",
    .takes_variants = 0,
    /* rank 1 shares the cores: in a run with other paths it slowed them
     * (kernel at B = 10: 4.9 -> 31 us), so it runs only when named */
    .named_only = 1,
    .needs_torch = 1,
    .prepare = dist_prepare,
    .run = dist_run,
    .verify = dist_verify,
    .convert = NULL,
    .release = dist_release,
    .compile_ms = NULL,
    .annotate = dist_annotate,
};
