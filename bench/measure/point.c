/* One point of a run: its rows and the phases that measure them
 * (point.h). */
#define _POSIX_C_SOURCE 200809L
#include "point.h"
#include "affinity.h"
#include "attribution.h"
#include "attribution_pass.h"
#include "code_pages.h"
#include "nvtx_ranges.h"
#include "paired.h"
#include "peer_memory.h"
#include "probe.h"
#include "rounds.h"
#include "stats.h"
#include "stop.h"
#include "timer.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a point's slots */

typedef struct path_slot {
    opcost_path_run run;
    size_t row_index; /* into out->rows (which may move as it grows) */
    opcost_timer_state timer;
    int timing; /* verified and warmed up */
    int member; /* its index in the point's rounds; -1 when not timed */
    /* the slot its ratio is against (its path's paired_with, else the
     * plan's baseline); -1: none, or itself */
    int baseline;
} path_slot;

/* Verifies a prepared path on set 0 with poisoned outputs; *call_us: how
 * long that call took. */
static int verify_path(opcost_path_run *r, char *why, size_t len,
                       double *call_us)
{
    /* a model path's outputs are the model's own new tensors, and
     * deterministic mode would make its compiled graphs compile again */
    const int poison = !r->path->model;
    if (poison) {
        opcost_workload_poison_outputs(r->w);
        rowops_bridge_poison_outputs(1);
    }
    const int64_t t0 = opcost_now_ns();
    int rc = r->path->run(r, 0, why, len);
    if (rc == 0 && r->w->cuda)
        rc = rowops_bridge_cuda_sync(why, len);
    *call_us = (double)(opcost_now_ns() - t0) / 1e3;
    if (rc == 0)
        rc = r->path->verify(r, 0, why, len);
    if (poison)
        rowops_bridge_poison_outputs(0);
    return rc;
}

static int stop_rule_for(opcost_stop_rule *rule, const opcost_plan *run_plan,
                         double call_us, int batch)
{
    char e[128];
    const double sample_us = call_us * batch;
    /* slow calls: a time budget, at least one sample per repetition;
     * fast ones: the noise target within the budget */
    if (sample_us * 6 > run_plan->rep_budget_s * 1e6)
        return opcost_stop_budget(rule, run_plan->rep_budget_s, 1, e, sizeof e);
    return opcost_stop_noise(rule, run_plan->noise_target,
                             run_plan->rep_budget_s, 6,
                             OPCOST_NOISE_CHECK_EVERY_DEFAULT, e, sizeof e);
}

/* The median of the path's layout conversions timed alone (differential
 * attribution): 0 when the layout needs none, NAN when they fail. */
static double conversion_median(const opcost_plan *run_plan, path_slot *s)
{
    if (!s->run.path->convert)
        return 0;
    char e[256];
    const int rc = s->run.path->convert(&s->run, 0, e, sizeof e);
    if (rc == 1)
        return 0; /* this layout needs no conversion */
    double us = NAN;
    opcost_timer_state t;
    memset(&t, 0, sizeof t); /* freed below even when nothing was timed */
    opcost_stop_rule r2;
    memset(&r2, 0, sizeof r2);
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "convert");
    if (rc == 0 && opcost_timing_begin(&t, &s->run, OPCOST_TIME_CONVERT,
                                       run_plan->target_sample_us, 0, 0) == 0) {
        stop_rule_for(&r2, run_plan, t.call_us, t.batch);
        for (int rep = 0; rep < 3; ++rep)
            if (opcost_timing_repetition(&t, &r2) < 0)
                break;
        us = point_median(t.samples, t.n);
    }
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    opcost_timing_end(&t);
    opcost_stop_free(&r2);
    return us;
}

/* The row's parts: measured in an attribution pass with the tracer, or,
 * where it cannot run, differential (the kernel path's median and the
 * conversions timed alone), with the reason in the note. */
static void attribute_row(const opcost_plan *run_plan, const run_device *dev,
                          path_slot *s, opcost_result *row,
                          double kernel_median)
{
    opcost_trace_source gpu;
    const opcost_trace_source *src = &opcost_trace_record_function;
    if (dev->cuda) {
        gpu = opcost_trace_cupti(dev->cupti);
        src = dev->cupti ? &gpu : NULL;
    }
    opcost_attributed a;
    char why[256];
    snprintf(why, sizeof why, "%s", dev->cupti_why);
    opcost_parts p;
    if (src && opcost_attribution_pass(&s->run, src,
                                       opcost_attribution_calls(row->median_us),
                                       &s->timer.next_set, row->median_us, &a,
                                       why, sizeof why) == 0) {
        p = a.parts;
        snprintf(row->attribution_source, sizeof row->attribution_source, "%s",
                 opcost_attribution_source_name(src->kind));
        row->tracer_overhead = a.traced_median_us / row->median_us;
    } else {
        const int is_kernel = s->run.path->takes_variants;
        p = opcost_attribute_differential(
            row->median_us, is_kernel ? row->median_us : kernel_median,
            conversion_median(run_plan, s));
        snprintf(
            row->attribution_source, sizeof row->attribution_source, "%s",
            opcost_attribution_source_name(OPCOST_ATTRIBUTION_DIFFERENTIAL));
        char note[400];
        snprintf(note, sizeof note, "%s: differential attribution", why);
        point_row_note(row, note);
    }
    row->kernel_us = p.kernel_us;
    row->other_kernel_us = p.other_kernel_us;
    row->conversion_us = p.conversion_us;
    row->launch_us = p.launch_us;
    row->dispatch_us = p.dispatch_us;
    row->idle_us = p.idle_us;
}

/* GPU: the SM clock and its event (throttle) reasons after the point was
 * timed, on every timed row of it. */
static void record_gpu_clock(const run_device *dev, run_out *out,
                             const path_slot *slots, int nslots)
{
    opcost_gpu_clock clk;
    char e[256];
    if (!dev->nvml || opcost_nvml_read(dev->nvml, (unsigned)dev->gpu.index,
                                       &clk, e, sizeof e))
        return;
    char reasons[OPCOST_TEXT_MAX] = "";
    if (clk.reasons_known)
        opcost_nvml_reasons_text(clk.reasons, reasons, sizeof reasons);
    for (int i = 0; i < nslots; ++i) {
        opcost_result *row = &out->rows[slots[i].row_index];
        if (!slots[i].timing)
            continue;
        row->sm_clock_mhz = clk.sm_mhz;
        snprintf(row->throttle_reasons, sizeof row->throttle_reasons, "%s",
                 reasons);
    }
}

/* ---- the phases of one point */

/* A point being measured: its workload, one slot per row, the paired
 * probe, and the members of its rounds. */
typedef struct point {
    const point_context *ctx;
    const opcost_case *c;
    int64_t seed;
    run_out *out;
    opcost_workload w;
    int made; /* 0: w exists; else why says why not */
    char why[1024];
    path_slot slots[POINT_ROWS_MAX];
    int nslots;
    path_slot probe;       /* no row: frac_of_peak's member */
    point_probe probed;    /* what it measured */
    opcost_bw_split split; /* its samples of one bandwidth state */
    /* the in-place rows' (paths with in_place, on the CPU) */
    path_slot probe_in_place;
    point_probe probed_in_place;
    opcost_bw_split split_in_place;
    size_t hold_rounds; /* its samples when the hold was first asked */
    int baseline;       /* the slot every ratio is against; -1: none */
    opcost_member members[POINT_ROWS_MAX + 1];
    int nmembers;
    opcost_rounds_result rounds;
    opcost_point_cost cost;
} point;

opcost_status point_start(const opcost_plan *run_plan, int cuda,
                          opcost_path_run *run, opcost_timer_state *timer,
                          char *dispatch_path, size_t dlen, char *why,
                          size_t wl)
{
    if (!opcost_plan_path_runs(run_plan, run->path)) {
        snprintf(why, wl, "%s",
                 cuda ? "this path runs on the CPU only"
                      : "this path runs on a GPU only (--device cuda)");
        return OPCOST_STATUS_SKIPPED;
    }
    opcost_nvtx_push_path(run->path->name, run->variant->name);
    const int prep = run->path->prepare(run, why, wl);
    int ver = 0;
    double first_us = 0;
    run->out_err_units = run->residual_err_units = NAN;
    if (prep == 0) {
        run->w->verified_out_units = run->w->verified_residual_units = NAN;
        opcost_nvtx_push(OPCOST_NVTX_PHASE, "verify");
        ver = verify_path(run, why, wl, &first_us);
        opcost_nvtx_pop(OPCOST_NVTX_PHASE);
        if (ver == 0) {
            run->out_err_units = run->w->verified_out_units;
            run->residual_err_units = run->w->verified_residual_units;
        }
    }
    /* what the path ran, as prepare and verify reported it */
    snprintf(dispatch_path, dlen, "%s", run->dispatch_path);
    const double warmup = run_plan->quick ? 0.001 : 0.005;
    opcost_status st = OPCOST_STATUS_OK;
    if (prep)
        st = prep > 0 ? OPCOST_STATUS_SKIPPED : OPCOST_STATUS_ERROR;
    else if (ver)
        st = ver > 0 ? OPCOST_STATUS_WRONG : OPCOST_STATUS_ERROR;
    else if (opcost_timing_begin(timer, run, OPCOST_TIME_RUN,
                                 run_plan->target_sample_us, warmup,
                                 first_us)) {
        snprintf(why, wl, "%s", timer->error);
        st = OPCOST_STATUS_ERROR;
    }
    opcost_nvtx_pop(OPCOST_NVTX_PATH);
    return st;
}

/* A slot's path made ready to time: prepared, verified on poisoned
 * outputs, warmed up (s->timing). Otherwise the status it ends in
 * (skipped, wrong, error) with the reason in pt->why. */
static opcost_status start_path(point *pt, path_slot *s, char *dispatch_path,
                                size_t dlen)
{
    if (s->run.path->peer &&
        opcost_peer_memory_refused(s->run.w->input_bytes, pt->why,
                                   sizeof pt->why)) {
        s->timing = 0;
        return OPCOST_STATUS_SKIPPED;
    }
    const opcost_status st =
        point_start(pt->ctx->run_plan, pt->ctx->dev->cuda, &s->run, &s->timer,
                    dispatch_path, dlen, pt->why, sizeof pt->why);
    s->timing = st == OPCOST_STATUS_OK;
    return st;
}

static void start_slot(point *pt, path_slot *s, opcost_result *row)
{
    const opcost_status st =
        start_path(pt, s, row->dispatch_path, sizeof row->dispatch_path);
    if (st != OPCOST_STATUS_OK)
        point_row_status(row, st, pt->why);
    row->out_err_units = s->run.out_err_units;
    row->residual_err_units = s->run.residual_err_units;
}

/* The probe paired with the point's rows: streaming stores where the
 * run's ceilings found them the better kind at the level the point's data
 * lives in (DRAM when cold), ordinary stores otherwise (probe.h). Without
 * one (it failed, or moves nothing) frac_of_peak stays empty and the
 * rows say why. */
const opcost_path *point_probe_choose(const point_context *ctx,
                                      const opcost_workload *w,
                                      point_probe *info)
{
    const opcost_mix mix =
        rowops_op_info_of(w->c.op)->fused ? OPCOST_MIX_FUSED : OPCOST_MIX_ROWS;
    opcost_level level = OPCOST_LEVEL_DRAM;
    const opcost_mix_ceiling *m =
        opcost_ceiling_for(ctx->ceiling, mix, w->cache == OPCOST_CACHE_COLD,
                           (double)opcost_case_bytes(&w->c), &level);
    const int streaming =
        ctx->dev->cuda || (m && isfinite(m->nt_gbps) && m->gbps == m->nt_gbps);
    *info = (point_probe){0, level, mix, streaming, NAN, NAN, NAN, NAN};
    return streaming ? &opcost_probe_streaming : &opcost_probe_plain;
}

double point_probe_reference(const point_context *ctx, const point_probe *p,
                             double moved)
{
    if (ctx->dev->cuda || p->level != OPCOST_LEVEL_DRAM || !p->streaming ||
        moved < OPCOST_STREAMING_BYTES ||
        !opcost_bw_dram_sized(moved, ctx->ceiling->llc_bytes))
        return NAN;
    return ctx->full_gbps && *ctx->full_gbps > 0 ? *ctx->full_gbps : 0;
}

void point_probe_measured(point_probe *info, const opcost_member *m,
                          const opcost_workload *w)
{
    if (m->failed || !m->n)
        return;
    double best = INFINITY;
    for (size_t i = 0; i < m->n; ++i)
        best = m->us[i] < best ? m->us[i] : best;
    const double moved = (double)opcost_probe_bytes(w);
    info->measured = 1;
    info->bytes = moved;
    info->best_gbps = moved / (best * 1e-6) / 1e9;
    info->median_gbps = moved / (point_median(m->us, m->n) * 1e-6) / 1e9;
}

static void start_probe(point *pt)
{
    path_slot *s = &pt->probe;
    s->run.path = point_probe_choose(pt->ctx, &pt->w, &pt->probed);
    s->run.variant = &opcost_variant_auto;
    s->run.w = &pt->w;
    s->member = -1;
    char dispatch[128];
    if (start_path(pt, s, dispatch, sizeof dispatch) != OPCOST_STATUS_OK)
        for (int i = 0; i < pt->nslots; ++i) {
            if (pt->slots[i].run.path->model)
                continue; /* never paired with the probe */
            char note[512];
            snprintf(note, sizeof note, "no paired frac_of_peak: %.480s",
                     pt->why);
            point_row_note(&pt->out->rows[pt->slots[i].row_index], note);
        }
}

/* The in-place probe, where a slot's path runs the op in place on the
 * CPU (probe.h): its rows' frac_of_peak is against it. */
static void start_probe_in_place(point *pt)
{
    int any = 0;
    for (int i = 0; i < pt->nslots; ++i)
        any |= pt->slots[i].run.path->in_place;
    path_slot *s = &pt->probe_in_place;
    s->member = -1;
    if (!any || pt->ctx->dev->cuda || !rowops_op_info_of(pt->w.c.op)->fused)
        return;
    opcost_level level = OPCOST_LEVEL_DRAM;
    opcost_ceiling_for(pt->ctx->ceiling, OPCOST_MIX_FUSED_IN_PLACE,
                       pt->w.cache == OPCOST_CACHE_COLD,
                       (double)opcost_case_bytes(&pt->w.c), &level);
    pt->probed_in_place = (point_probe){
        0, level, OPCOST_MIX_FUSED_IN_PLACE, 0, NAN, NAN, NAN, NAN};
    s->run.path = &opcost_probe_in_place;
    s->run.variant = &opcost_variant_auto;
    s->run.w = &pt->w;
    char dispatch[128];
    if (start_path(pt, s, dispatch, sizeof dispatch) != OPCOST_STATUS_OK)
        for (int i = 0; i < pt->nslots; ++i) {
            if (!pt->slots[i].run.path->in_place)
                continue;
            char note[512];
            snprintf(note, sizeof note, "no paired frac_of_peak: %.480s",
                     pt->why);
            point_row_note(&pt->out->rows[pt->slots[i].row_index], note);
        }
}

/* The probe slot s's frac_of_peak is against: the in-place probe for an
 * in-place path where it runs, else the point's. */
static const path_slot *probe_of(const point *pt, const path_slot *s)
{
    return s->run.path->in_place && pt->probe_in_place.run.path
               ? &pt->probe_in_place
               : &pt->probe;
}

/* The slot s pairs with: its path's own baseline (a model path's: the
 * model as shipped), or the plan's; -1 when that is not among the point's
 * slots. */
static int slot_baseline(const point *pt, const path_slot *s)
{
    const char *name = s->run.path->paired_with;
    if (!name)
        return pt->baseline;
    for (int i = 0; i < pt->nslots; ++i)
        if (!strcmp(pt->slots[i].run.path->name, name) &&
            pt->slots[i].run.variant == &opcost_variant_auto)
            return i;
    return -1;
}

/* Phase 1: the workload, then a slot and a row for every (path, variant),
 * each started, and the probe. -1 when memory ran out. */
static int open_point(point *pt, char *err, size_t len)
{
    const point_context *ctx = pt->ctx;
    const opcost_plan *run_plan = ctx->run_plan;
    pt->made = opcost_workload_make(
        &pt->w, pt->c, ctx->dev->rotate_bytes, run_plan->cold,
        run_plan->seed + (uint64_t)pt->seed, pt->why, sizeof pt->why);
    if (pt->made == 0 && ctx->dev->cuda &&
        opcost_workload_to_device(&pt->w, ctx->dev->gpu.arch, pt->why,
                                  sizeof pt->why)) {
        opcost_workload_free(&pt->w);
        pt->made = -1;
    }
    point_row_id ids[POINT_ROWS_MAX];
    const int n = point_row_ids(run_plan, pt->c, ids);
    pt->baseline = -1;
    for (int i = 0; i < n; ++i) {
        const opcost_path *path = ids[i].path;
        path_slot *s = &pt->slots[pt->nslots++];
        opcost_result *row =
            point_row(pt->out, ctx, pt->c, pt->made == 0 ? &pt->w : NULL, path,
                      ids[i].variant);
        if (!row) {
            snprintf(err, len, "out of memory (results)");
            return -1;
        }
        s->run.path = path;
        s->run.variant = ids[i].variant;
        s->run.w = &pt->w;
        s->run.plan = run_plan;
        s->run.first_set = pt->made ? 0 : (int)((int64_t)i * pt->w.nsets / n);
        s->row_index = pt->out->nrows - 1;
        s->member = -1;
        if (path == run_plan->baseline_path &&
            s->run.variant == run_plan->baseline_variant)
            pt->baseline = pt->nslots - 1;
        const opcost_point_plan *plan = ctx->plan;
        if (pt->made) {
            point_row_status(row, OPCOST_STATUS_ERROR, pt->why);
        } else if (path->model && plan && plan->model == OPCOST_MODEL_CUT) {
            point_row_status(row, OPCOST_STATUS_SKIPPED, plan->why);
        } else {
            /* the time budget's narrower model, where it chose one */
            s->run.model_narrow =
                path->model && plan && plan->model == OPCOST_MODEL_NARROW;
            const int64_t t0 = opcost_now_ns();
            start_slot(pt, s, row);
            if (path->model)
                pt->cost.model_setup_s += opcost_seconds_since(t0);
        }
    }
    for (int i = 0; i < pt->nslots; ++i)
        pt->slots[i].baseline = slot_baseline(pt, &pt->slots[i]);
    if (pt->made == 0) {
        start_probe(pt);
        start_probe_in_place(pt);
    }
    return 0;
}

/* A member's sample: one batch of its path's calls. */
static int sample_slot(void *ctx, double *us, double *device_us, char *err,
                       size_t len)
{
    path_slot *s = ctx;
    opcost_nvtx_push_path(s->run.path->name, s->run.variant->name);
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "sample");
    const int rc = opcost_timing_sample(&s->timer, us, device_us);
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    opcost_nvtx_pop(OPCOST_NVTX_PATH);
    if (rc)
        snprintf(err, len, "%s", s->timer.error);
    /* between samples: many placements of the code in a point's samples
     * (code_pages.h) */
    opcost_code_replace_due();
    return rc;
}

static void add_member(point *pt, path_slot *s)
{
    opcost_member *m = &pt->members[pt->nmembers];
    memset(m, 0, sizeof *m);
    m->name = s->run.path->name;
    m->sample = sample_slot;
    m->ctx = s;
    m->cost_us = s->timer.call_us * s->timer.batch;
    s->member = pt->nmembers++;
}

/* The rounds' hold (rounds.h): the probe has fewer samples at full
 * bandwidth than the rounds had when the hold was first asked (what the
 * budget or the target gave), or than OPCOST_PAIRED_MIN: the host's
 * bandwidth was reduced for part of them. */
static int probe_reduced(void *ctx)
{
    point *pt = ctx;
    const opcost_member *p = &pt->members[pt->probe.member];
    if (!pt->hold_rounds)
        pt->hold_rounds = p->n;
    const double moved = (double)opcost_probe_bytes(&pt->w);
    opcost_bw_split s;
    if (p->failed ||
        opcost_bw_split_probe(
            p, moved, point_probe_reference(pt->ctx, &pt->probed, moved), &s))
        return 0;
    const int reduced =
        s.state != OPCOST_BW_NONE &&
        (s.full < OPCOST_PAIRED_MIN || s.full < pt->hold_rounds);
    opcost_bw_split_free(&s);
    return reduced;
}

/* Phase 2: the rounds. Every started slot and the probe are members; the
 * ratios tracked for stopping are each row's against the baseline and
 * against the probe. Their budget: the plan's per-member repetition
 * budget for each repetition of each member. -1 when memory ran out. */
static int time_point(point *pt, char *err, size_t len)
{
    const opcost_plan *run_plan = pt->ctx->run_plan;
    for (int i = 0; i < pt->nslots; ++i)
        if (pt->slots[i].timing)
            add_member(pt, &pt->slots[i]);
    if (pt->probe.timing)
        add_member(pt, &pt->probe);
    if (pt->probe_in_place.timing)
        add_member(pt, &pt->probe_in_place);
    if (!pt->nmembers)
        return 0;
    opcost_rounds_pair pairs[2 * POINT_ROWS_MAX];
    int np = 0;
    for (int i = 0; i < pt->nslots; ++i) {
        const path_slot *s = &pt->slots[i];
        const int m = s->member;
        if (m < 0)
            continue;
        const int base = s->baseline >= 0 ? pt->slots[s->baseline].member : -1;
        if (base >= 0 && m != base)
            pairs[np++] = (opcost_rounds_pair){m, base};
        const path_slot *probe = probe_of(pt, s);
        if (probe->member >= 0 && !s->run.path->model)
            pairs[np++] = (opcost_rounds_pair){probe->member, m};
    }
    const opcost_point_plan *plan = pt->ctx->plan;
    opcost_rounds_rule rule = {
        .target_rel = run_plan->noise_target,
        .budget_s = run_plan->reps * run_plan->rep_budget_s * pt->nmembers *
                    (plan ? plan->rounds_scale : 1),
        .min_rounds = (size_t)(run_plan->reps > 10 ? run_plan->reps : 10),
        .max_rounds = 100000,
        .slow_factor = 8,
        /* no interrupt check: a first signal lets the point finish
         * (journal.h), the second and third find it still running */
        .seed =
            (run_plan->seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)pt->seed,
    };
    for (int i = 0; i < pt->nslots; ++i)
        if (pt->slots[i].member >= 0 && pt->slots[i].run.path->model) {
            /* the time budget's rounds for a verdict, else the setting */
            rule.budget_s += plan && plan->model_rounds_s > 0
                                 ? plan->model_rounds_s
                                 : run_plan->model_budget_s;
            break;
        }
    double *wait = pt->ctx->wait_left_s;
    if (wait && *wait > 0 && pt->probe.member >= 0 &&
        !isnan(point_probe_reference(pt->ctx, &pt->probed,
                                     (double)opcost_probe_bytes(&pt->w)))) {
        rule.hold = probe_reduced;
        rule.hold_ctx = pt;
        rule.hold_s = *wait;
    }
    const int rc = opcost_rounds_run(pt->members, pt->nmembers, pairs, np,
                                     &rule, &pt->rounds, err, len);
    if (wait)
        *wait = *wait > pt->rounds.held_s ? *wait - pt->rounds.held_s : 0;
    return rc;
}

/* The row's paired ratio against the baseline and its verdict. */
static void pair_with_baseline(point *pt, const path_slot *s,
                               opcost_result *row)
{
    if (s->baseline < 0 && s->run.path->paired_with) {
        char note[300];
        snprintf(note, sizeof note,
                 "no paired ratio: its baseline %s is not selected",
                 s->run.path->paired_with);
        point_row_note(row, note);
        return;
    }
    if (s->baseline < 0 || s == &pt->slots[s->baseline])
        return;
    const path_slot *b = &pt->slots[s->baseline];
    char name[OPCOST_TEXT_MAX];
    point_member_name(b->run.path, b->run.variant, name, sizeof name);
    if (b->member < 0) {
        char note[300];
        snprintf(note, sizeof note,
                 "no paired ratio: the baseline %s was not timed", name);
        point_row_note(row, note);
        return;
    }
    opcost_paired e;
    point_row_ratio(pt->ctx->run_plan, row, &pt->members[s->member],
                    &pt->members[b->member], name, &e);
}

/* Phase 3: each timed row's statistics, its paired ratios and every row's
 * ceiling; GPU clocks. Returns the kernel path's median (its auto
 * variant's where it ran), for the differential attribution's fallback;
 * -1 in *oom when memory ran out. */
static double summarize_point(point *pt, int *oom)
{
    const point_context *ctx = pt->ctx;
    double kernel_median = NAN;
    *oom = 0;
    if (pt->probe.member >= 0) {
        const double moved = (double)opcost_probe_bytes(&pt->w);
        if (opcost_bw_split_probe(
                &pt->members[pt->probe.member], moved,
                point_probe_reference(ctx, &pt->probed, moved), &pt->split)) {
            *oom = 1;
            return NAN;
        }
    }
    if (pt->probe_in_place.member >= 0 &&
        opcost_bw_split_probe(&pt->members[pt->probe_in_place.member],
                              (double)opcost_probe_bytes(&pt->w), NAN,
                              &pt->split_in_place)) {
        *oom = 1;
        return NAN;
    }
    for (int i = 0; i < pt->nslots; ++i) {
        path_slot *s = &pt->slots[i];
        opcost_result *row = &pt->out->rows[s->row_index];
        if (s->member >= 0) {
            const opcost_member *m = &pt->members[s->member];
            if (m->failed) {
                point_row_status(row, OPCOST_STATUS_ERROR, m->error);
                s->timing = 0;
            } else if (point_row_samples(ctx->run_plan, row, m, pt->out)) {
                *oom = 1;
                return NAN;
            }
        }
        if (row->status == OPCOST_STATUS_OK && s->member >= 0) {
            pair_with_baseline(pt, s, row);
            const path_slot *probe = probe_of(pt, s);
            if (probe->member >= 0 && !s->run.path->model) {
                point_row_frac(
                    ctx->run_plan, row,
                    probe == &pt->probe ? &pt->split : &pt->split_in_place,
                    &pt->members[s->member], opcost_probe_bytes(&pt->w));
                if (pt->rounds.held_s >= 0.05) {
                    char note[200];
                    snprintf(note, sizeof note,
                             "rounds held %.1f s past their stop for the "
                             "host's full bandwidth (--full-bandwidth-wait-s)",
                             pt->rounds.held_s);
                    point_row_note(row, note);
                }
            }
            snprintf(row->stopped_by, sizeof row->stopped_by, "%s",
                     opcost_rounds_stop_name(pt->rounds.stop));
        }
        if (!s->run.path->model) /* a model moves more than the op's bytes */
            point_set_ceiling(row, ctx->ceiling, ctx->dev->cuda,
                              s->run.path->in_place);
        if (s->timing && s->run.path->takes_variants &&
            (isnan(kernel_median) || s->run.variant == &opcost_variant_auto))
            kernel_median = row->median_us;
    }
    record_gpu_clock(ctx->dev, pt->out, pt->slots, pt->nslots);
    if (pt->probe.member >= 0)
        point_probe_measured(&pt->probed, &pt->members[pt->probe.member],
                             &pt->w);
    if (pt->probe_in_place.member >= 0)
        point_probe_measured(&pt->probed_in_place,
                             &pt->members[pt->probe_in_place.member], &pt->w);
    if (pt->split.state != OPCOST_BW_NONE)
        pt->probed.full_gbps = pt->split.best_rolled_gbps;
    return kernel_median;
}

/* Phase 4: each ok row's parts (attribution), its compile time and the
 * path's own note. */
static void attribute_point(point *pt, double kernel_median)
{
    for (int i = 0; i < pt->nslots; ++i) {
        path_slot *s = &pt->slots[i];
        opcost_result *row = &pt->out->rows[s->row_index];
        const int64_t t0 = opcost_now_ns();
        if (s->timing && row->status == OPCOST_STATUS_OK &&
            !s->run.path->model) {
            opcost_nvtx_push_path(s->run.path->name, s->run.variant->name);
            opcost_nvtx_push(OPCOST_NVTX_PHASE, "attribute");
            attribute_row(pt->ctx->run_plan, pt->ctx->dev, s, row,
                          kernel_median);
            opcost_nvtx_pop(OPCOST_NVTX_PHASE);
            opcost_nvtx_pop(OPCOST_NVTX_PATH);
        }
        if (s->run.priv && s->run.path->compile_ms)
            row->compile_ms = s->run.path->compile_ms(&s->run);
        if (s->run.priv && s->run.path->annotate &&
            row->status == OPCOST_STATUS_OK)
            s->run.path->annotate(&s->run, row->note, sizeof row->note);
        if (s->run.priv && s->run.path->evidence &&
            row->status == OPCOST_STATUS_OK)
            s->run.path->evidence(&s->run, row);
        if (s->run.path->model)
            pt->cost.model_after_s += opcost_seconds_since(t0);
    }
}

/* The point's compile times (its rows' compile_ms), its model members'
 * part of the rounds (their samples' calls, the lead-in included), the
 * rounds held for full bandwidth, and the model pairs' per-round
 * log-ratio spread (their intervals' half-widths over the t quantile,
 * times the square root of their rounds: the median of the pairs). */
static void cost_of_parts(point *pt)
{
    double sigma[POINT_ROWS_MAX];
    int nsigma = 0;
    pt->cost.held_s = pt->rounds.held_s;
    for (int i = 0; i < pt->nslots; ++i) {
        const path_slot *s = &pt->slots[i];
        const double ms = pt->out->rows[s->row_index].compile_ms;
        if (ms > 0 && isfinite(ms)) {
            pt->cost.compile_s += ms / 1e3;
            if (s->run.path->model)
                pt->cost.model_compile_s += ms / 1e3;
        }
        if (s->member < 0 || !s->run.path->model)
            continue;
        const opcost_result *row = &pt->out->rows[s->row_index];
        if (row->rounds != OPCOST_INT_NA && row->rounds > 1 &&
            row->ratio_ci95_rel > 0 && isfinite(row->ratio_ci95_rel))
            sigma[nsigma++] =
                log1p(row->ratio_ci95_rel) / 1.96 * sqrt((double)row->rounds);
        const opcost_member *m = &pt->members[s->member];
        const int lead_in = s->timer.lead_in >= 0
                                ? s->timer.lead_in
                                : s->timer.call_us < OPCOST_LEAD_IN_BELOW_US;
        const double calls = s->timer.batch + lead_in;
        for (size_t k = 0; k < m->n; ++k)
            pt->cost.model_rounds_s += m->us[k] * calls / 1e6;
    }
    pt->cost.model_sigma = nsigma ? point_median(sigma, (size_t)nsigma) : NAN;
    /* a graph the model stacks' pilot compiled is reported by its point
     * but was paid before it: not this point's time */
    if (pt->cost.model_compile_s > pt->cost.model_setup_s) {
        pt->cost.compile_s -= pt->cost.model_compile_s - pt->cost.model_setup_s;
        pt->cost.model_compile_s = pt->cost.model_setup_s;
    }
}

/* Phase 5: every path released, every timer, sample and buffer freed
 * (also after an earlier phase ran out of memory). */
static void close_slot(path_slot *s)
{
    if (s->run.priv)
        s->run.path->release(&s->run);
    opcost_timing_end(&s->timer);
}

static void close_point(point *pt)
{
    for (int i = 0; i < pt->nslots; ++i)
        close_slot(&pt->slots[i]);
    close_slot(&pt->probe);
    close_slot(&pt->probe_in_place);
    opcost_bw_split_free(&pt->split);
    opcost_bw_split_free(&pt->split_in_place);
    for (int i = 0; i < pt->nmembers; ++i)
        opcost_member_free(&pt->members[i]);
    if (pt->made == 0)
        opcost_workload_free(&pt->w);
}

int point_measure(const point_context *ctx, const opcost_case *c,
                  int64_t point_seed, run_out *out, point_probe *probe,
                  opcost_point_cost *cost, char *err, size_t len)
{
    const int64_t start = opcost_now_ns();
    /* large (a slot per selectable path x variant): not on the stack */
    point *pt = calloc(1, sizeof *pt);
    if (!pt) {
        snprintf(err, len, "out of memory (point)");
        return -1;
    }
    pt->ctx = ctx;
    pt->c = c;
    pt->seed = point_seed;
    pt->out = out;
    pt->made = -1;
    pt->probe.member = -1;
    pt->probe_in_place.member = -1;
    opcost_nvtx_pushf(OPCOST_NVTX_SHAPE, "%s B=%lld N=%lld %s %s",
                      rowops_op_name(c->op), (long long)c->B, (long long)c->N,
                      rowops_dtype_name(c->dtype),
                      opcost_layout_name(c->layout));
    int rc = open_point(pt, err, len);
    pt->cost.setup_s = opcost_seconds_since(start);
    if (rc == 0) {
        /* what the paths loaded (the Python extension) on 2 MiB pages too */
        opcost_code_pages cp;
        opcost_code_to_huge_pages(NULL, &cp);
        const int64_t t0 = opcost_now_ns();
        rc = time_point(pt, err, len);
        pt->cost.rounds_s = opcost_seconds_since(t0);
    }
    const int64_t after = opcost_now_ns();
    if (rc == 0) {
        int oom;
        const double kernel_median = summarize_point(pt, &oom);
        if (oom) {
            snprintf(err, len, "out of memory (samples)");
            rc = -1;
        } else {
            attribute_point(pt, kernel_median);
        }
    }
    if (probe) {
        probe[0] = pt->probed;
        probe[1] = pt->probed_in_place;
    }
    cost_of_parts(pt);
    close_point(pt);
    opcost_release_freed_memory();
    pt->cost.after_s = opcost_seconds_since(after);
    pt->cost.total_s = opcost_seconds_since(start);
    if (cost)
        *cost = pt->cost;
    opcost_nvtx_pop(OPCOST_NVTX_SHAPE);
    free(pt);
    return rc;
}

int point_pin_threads(const opcost_plan *run_plan, char *desc, size_t len)
{
    if (run_plan->no_pin) {
        snprintf(desc, len, "not pinned (--no-pin)");
        return 0;
    }
    return opcost_pin_threads(run_plan->threads, rowops_bridge_parallel_for,
                              desc, len);
}
