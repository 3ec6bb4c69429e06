#include "peer_route.h"

#include "rowops.h"
#include "verify.h"

#include <Python.h>
#include <stdio.h>
#include <string.h>

/* Why the peer cannot run this point (a new reference to a str, empty
 * where it can), or NULL on a Python error. */
static PyObject *peer_unavailable(PyObject *peers, const opcost_path_run *r)
{
    const opcost_case *c = &r->w->c;
    return PyObject_CallMethod(
        peers, "unavailable", "(ssssLss)", r->path->name, rowops_op_name(c->op),
        rowops_dtype_name(c->dtype), rowops_dtype_name(c->weight_dtype),
        (long long)c->N, r->w->cuda ? "cuda" : "cpu",
        opcost_layout_name(c->layout));
}

/* Says once per path and run, on stderr, what the peer found: the
 * library it loaded, or why it has none (what make bench's log shows). */
static void say_found(const opcost_path_run *r, const char *what, int ok)
{
    static const opcost_path *said[64];
    for (size_t i = 0; i < sizeof said / sizeof said[0]; ++i) {
        if (said[i] == r->path)
            return;
        if (!said[i]) {
            said[i] = r->path;
            fprintf(stderr, "opcost run: %s: %s%s\n", r->path->name,
                    ok ? "found " : "not here: ", what);
            return;
        }
    }
}

/* Prepares r with the module opcost_peers: skipped (1) with the peer's
 * reason, else the Runner and, as the dispatch path, what the peer
 * loaded. */
static int prepare_with(PyObject *peers, opcost_path_run *r, char *why,
                        size_t len)
{
    PyObject *reason = peer_unavailable(peers, r);
    if (!reason)
        return opcost_python_error(why, len);
    const char *text = PyUnicode_Check(reason) ? PyUnicode_AsUTF8(reason) : "";
    const int skip = text && *text;
    if (skip)
        snprintf(why, len, "%s", text);
    Py_DECREF(reason);
    /* a point it cannot run says nothing of the peer's library */
    if (skip && (strstr(why, "not installed") || strstr(why, "did not") ||
                 strstr(why, "not importable") || strstr(why, "is not in")))
        say_found(r, why, 0);
    if (skip)
        return 1;
    const int rc =
        opcost_python_prepare_calls(r, r->path->name, NULL, why, len);
    if (rc)
        return rc;
    /* what ran: the peer's build and where it was loaded from */
    PyObject *label = PyObject_CallMethod(peers, "label", "(s)", r->path->name);
    const char *l =
        label && PyUnicode_Check(label) ? PyUnicode_AsUTF8(label) : NULL;
    if (l) {
        snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s", l);
        say_found(r, l, 1);
    }
    Py_XDECREF(label);
    PyErr_Clear();
    return 0;
}

int opcost_peer_prepare(opcost_path_run *r, char *why, size_t len)
{
    if (opcost_python_start(why, len))
        return 1; /* no interpreter: skipped, with the reason */
    PyObject *peers = PyImport_ImportModule("opcost_peers");
    if (!peers)
        return opcost_python_error(why, len);
    const int rc = prepare_with(peers, r, why, len);
    Py_DECREF(peers);
    return rc;
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
