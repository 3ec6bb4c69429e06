#include "peer_route.h"

#include "rowops.h"
#include "verify.h"

#include <Python.h>
#include <stdio.h>
#include <string.h>

/* Why the peer cannot run this point (a new reference to a str, empty
 * where it can), or NULL on a Python error. */
static PyObject *peer_unavailable(opcost_path_run *r)
{
    PyObject *mod = PyImport_ImportModule("opcost_peers");
    if (!mod)
        return NULL;
    const opcost_case *c = &r->w->c;
    PyObject *why = PyObject_CallMethod(
        mod, "unavailable", "(ssssLss)", r->path->name, rowops_op_name(c->op),
        rowops_dtype_name(c->dtype), rowops_dtype_name(c->weight_dtype),
        (long long)c->N, "cpu", opcost_layout_name(c->layout));
    Py_DECREF(mod);
    return why;
}

int opcost_peer_prepare(opcost_path_run *r, char *why, size_t len)
{
    if (opcost_python_start(why, len))
        return 1; /* no interpreter: skipped, with the reason */
    PyObject *reason = peer_unavailable(r);
    if (!reason)
        return opcost_python_error(why, len);
    const char *text = PyUnicode_Check(reason) ? PyUnicode_AsUTF8(reason) : "";
    if (text && *text) {
        snprintf(why, len, "%s", text);
        Py_DECREF(reason);
        return 1;
    }
    Py_DECREF(reason);
    const int rc =
        opcost_python_prepare_calls(r, r->path->name, NULL, why, len);
    if (rc)
        return rc;
    /* what ran: the peer's build and where it was loaded from */
    PyObject *mod = PyImport_ImportModule("opcost_peers");
    PyObject *label =
        mod ? PyObject_CallMethod(mod, "label", "(s)", r->path->name) : NULL;
    const char *l =
        label && PyUnicode_Check(label) ? PyUnicode_AsUTF8(label) : NULL;
    if (l)
        snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s", l);
    Py_XDECREF(label);
    Py_XDECREF(mod);
    PyErr_Clear();
    return 0;
}

int opcost_peer_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    opcost_outputs o;
    const int rc =
        opcost_python_outputs(opcost_python_last(r, set), 0, &o, why, len);
    if (rc)
        return rc;
    return opcost_verify_outputs_within(r->w, set, &o, OPCOST_PEER_TOL_SCALE,
                                        why, len);
}

void opcost_peer_annotate(opcost_path_run *r, char *note, size_t len)
{
    opcost_python_annotate(r, note, len);
    const size_t used = strlen(note);
    if (used + 1 < len)
        snprintf(note + used, len - used,
                 "%sverified within %gx the contract's tolerance; no rstd "
                 "(the peer returns none)",
                 used ? "; " : "", (double)OPCOST_PEER_TOL_SCALE);
}

int opcost_fused_only(const opcost_case *c)
{
    return c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
}
