/* `cuda-graph` (GPU only): the eager op (rowops::<op> through the
 * dispatcher) captured once per input set in a CUDA graph and replayed:
 * what one call costs when a model's step is a graph, the launch floor.
 * Graphs are captured for up to OPCOST_GRAPH_SETS of the point's input
 * sets; the rotation runs over those (the note says when fewer than all). */
#include "path.h"
#include "rowops_bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPCOST_GRAPH_SETS 64

typedef struct graph_state {
    rowops_bridge_graph *g[OPCOST_GRAPH_SETS];
    rowops_bridge_tensor *in[OPCOST_GRAPH_SETS][3];
    int n;
} graph_state;

/* Fills a graph's outputs with NaN bytes before its first replay, so the
 * verification replay must write every element. */
static int poison(const rowops_bridge_graph *g, char *why, size_t len)
{
    const rowops_bridge_result *o = rowops_bridge_graph_outputs(g);
    for (int i = 0; i < o->count; ++i) {
        const rowops_tensor *t = &o->desc[i];
        size_t elems = 1;
        for (int d = 0; d < t->rank; ++d)
            elems *= (size_t)t->sizes[d];
        if (rowops_bridge_cuda_memset(
                t->data, 0xFF, elems * rowops_dtype_size(t->dtype), why, len))
            return -1;
    }
    return 0;
}

static int graph_prepare(opcost_path_run *r, char *why, size_t len)
{
    opcost_workload *w = r->w;
    if (!w->cuda) {
        snprintf(why, len, "cuda-graph: CUDA only (--device cuda)");
        return 1;
    }
    graph_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, len, "out of memory");
        return -1;
    }
    r->priv = s;
    const int fused = w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const int n = w->nsets < OPCOST_GRAPH_SETS ? w->nsets : OPCOST_GRAPH_SETS;
    for (int i = 0; i < n; ++i) {
        const opcost_set *set = &w->sets[i];
        rowops_bridge_tensor **in = s->in[i];
        if (!(in[0] = rowops_bridge_wrap(&set->x, why, len)) ||
            (fused &&
             (!(in[1] = rowops_bridge_wrap(&set->residual, why, len)) ||
              !(in[2] = rowops_bridge_wrap(&set->weight, why, len)))))
            return -1;
        s->g[i] = rowops_bridge_graph_capture(w->c.op, in[0], in[1], in[2],
                                              w->c.eps, why, len);
        if (!s->g[i] || poison(s->g[i], why, len))
            return -1;
        s->n = i + 1;
    }
    snprintf(r->dispatch_path, sizeof r->dispatch_path,
             "CUDA graph of the eager op (%d of %d input sets)", s->n,
             w->nsets);
    return 0;
}

static int graph_run(opcost_path_run *r, int set, char *err, size_t len)
{
    graph_state *s = r->priv;
    return rowops_bridge_graph_replay(s->g[set % s->n], err, len);
}

static int graph_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    graph_state *s = r->priv;
    const rowops_bridge_result *o =
        rowops_bridge_graph_outputs(s->g[set % s->n]);
    opcost_outputs out;
    memset(&out, 0, sizeof out);
    out.out = o->desc[0];
    if (o->count == 3) {
        out.residual_out = o->desc[1];
        out.rstd = o->desc[2];
    } else if (o->count == 2) {
        out.rstd = o->desc[1];
    }
    char e[256];
    if (rowops_bridge_cuda_sync(e, sizeof e)) {
        snprintf(why, len, "%s", e);
        return -1;
    }
    return opcost_verify_outputs(r->w, set % s->n, &out, why, len);
}

static void graph_release(opcost_path_run *r)
{
    graph_state *s = r->priv;
    if (!s)
        return;
    for (int i = 0; i < OPCOST_GRAPH_SETS; ++i) {
        rowops_bridge_graph_release(s->g[i]);
        for (int k = 0; k < 3; ++k)
            rowops_bridge_release(s->in[i][k]);
    }
    free(s);
    r->priv = NULL;
}

const opcost_path opcost_path_cuda_graph = {
    .name = "cuda-graph",
    .devices = OPCOST_ON_CUDA,
    .description = "the eager op captured in a CUDA graph and replayed "
                   "(the launch floor)",
    .takes_variants = 0,
    .needs_torch = 1,
    .prepare = graph_prepare,
    .run = graph_run,
    .verify = graph_verify,
    .convert = NULL,
    .release = graph_release,
};
