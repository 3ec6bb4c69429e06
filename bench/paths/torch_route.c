#include "torch_route.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct torch_state {
    rowops_bridge_route route;
    rowops_bridge_tensor **x, **residual, **weight;
    /* per set: its last call's outputs, alive until the next call on the
     * same set replaces them (the sets' outputs span the cold rotation,
     * as the C paths' do) */
    rowops_bridge_result *results;
    rowops_bridge_result scratch;
} torch_state;

int opcost_torch_prepare(opcost_path_run *r, rowops_bridge_route route,
                         char *why, size_t len)
{
    opcost_workload *w = r->w;
    if (opcost_torch_route_is_add(route) &&
        w->c.op != ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        snprintf(why, len, "torch.add calibration: fused_add_rms_norm only");
        return 1;
    }
    torch_state *s = calloc(1, sizeof *s);
    if (!s)
        goto oom;
    r->priv = s;
    s->route = route;
    const size_t n = (size_t)w->nsets;
    s->x = calloc(n, sizeof *s->x);
    s->residual = calloc(n, sizeof *s->residual);
    s->weight = calloc(n, sizeof *s->weight);
    s->results = calloc(n, sizeof *s->results);
    if (!s->x || !s->residual || !s->weight || !s->results)
        goto oom;
    const int fused = w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    for (size_t i = 0; i < n; ++i) {
        const opcost_set *set = &w->sets[i];
        if (!(s->x[i] = rowops_bridge_wrap(&set->x, why, len)))
            return -1;
        if (fused &&
            (!(s->residual[i] = rowops_bridge_wrap(&set->residual, why, len)) ||
             !(s->weight[i] = rowops_bridge_wrap(&set->weight, why, len))))
            return -1;
    }
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s",
             route == ROWOPS_BRIDGE_NATIVE ? "aten add + rms_norm"
             : route == ROWOPS_BRIDGE_REFERENCE
                 ? "rowops reference (aten composite)"
             : route == ROWOPS_BRIDGE_TORCH_ADD ? "aten add (dispatcher)"
                                                : "dispatcher");
    return 0;
oom:
    snprintf(why, len, "cannot allocate tensor handles for %d sets", w->nsets);
    return -1;
}

int opcost_torch_run(opcost_path_run *r, int set, char *err, size_t len)
{
    torch_state *s = r->priv;
    return rowops_bridge_call(s->route, r->w->c.op, s->x[set], s->residual[set],
                              s->weight[set], r->w->c.eps, &s->results[set],
                              err, len);
}

int opcost_torch_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    torch_state *s = r->priv;
    const int fused = r->w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    opcost_outputs o;
    memset(&o, 0, sizeof o);
    const rowops_tensor *d = s->results[set].desc;
    const int count = s->results[set].count;
    if (opcost_torch_route_is_add(s->route)) {
        o.residual_out = d[0]; /* h only */
        return opcost_verify_outputs(r->w, set, &o, why, len);
    }
    o.out = d[0];
    if (s->route == ROWOPS_BRIDGE_NATIVE) {
        if (fused)
            o.residual_out = d[1]; /* no rstd: aten::rms_norm keeps it */
    } else if (fused && count == 3) {
        o.residual_out = d[1];
        o.rstd = d[2];
    } else if (!fused && count == 2) {
        o.rstd = d[1];
    }
    if (s->route == ROWOPS_BRIDGE_ROWOPS)
        snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s",
                 rowops_bridge_last_dispatch());
    /* The final output must be contiguous, whatever the path did inside. */
    const rowops_tensor *t = &o.out;
    if (t->rank == 2 && t->sizes[0] > 1 &&
        (t->strides[1] != 1 || t->strides[0] != t->sizes[1])) {
        snprintf(why, len, "out is not contiguous (strides %lld, %lld)",
                 (long long)t->strides[0], (long long)t->strides[1]);
        return 1;
    }
    return opcost_verify_outputs(r->w, set, &o, why, len);
}

int opcost_torch_convert_x(opcost_path_run *r, int set, char *err, size_t len)
{
    if (r->w->c.layout != OPCOST_TRANSPOSED)
        return 1;
    torch_state *s = r->priv;
    return rowops_bridge_contiguous(s->x[set], &s->scratch, err, len);
}

void opcost_torch_release(opcost_path_run *r)
{
    torch_state *s = r->priv;
    if (!s)
        return;
    for (int i = 0; s->results && i < r->w->nsets; ++i)
        rowops_bridge_result_clear(&s->results[i]);
    free(s->results);
    rowops_bridge_result_clear(&s->scratch);
    for (int i = 0; i < r->w->nsets; ++i) {
        if (s->x)
            rowops_bridge_release(s->x[i]);
        if (s->residual)
            rowops_bridge_release(s->residual[i]);
        if (s->weight)
            rowops_bridge_release(s->weight[i]);
    }
    free(s->x);
    free(s->residual);
    free(s->weight);
    free(s);
    r->priv = NULL;
}
