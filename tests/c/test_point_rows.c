/* A point's rows from its members' rounds: the paired fraction of peak.
 * A probe slower than the op beyond the interval is no ceiling, so the row
 * gets no frac_of_peak (it read 2 on an H200, where the fused op's probe
 * is two copies, two launches); a probe as fast as the op gives 1. Where
 * the host switches between two bandwidth states in which the op keeps
 * different shares of the probe (bandwidth_state.h), the fraction is the
 * full state's, whatever the mix of states, and the row says which. */
#include "c_samples.h"
#include "plan.h"
#include "point_rows.h"
#include "rounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n samples of base_us through a 2x drift, one per round */
static void member_of(opcost_member *m, double base_us, size_t n)
{
    memset(m, 0, sizeof *m);
    m->name = "synthetic";
    m->us = malloc(n * sizeof *m->us);
    m->round = malloc(n * sizeof *m->round);
    C_CHECK(m->us && m->round);
    for (size_t i = 0; i < n; ++i) {
        const double drift = 1 + 0.5 * (1 + sin((double)i / 17));
        const double noise = 1 + 0.01 * sin((double)i * 7.3);
        m->us[i] = base_us * drift * noise;
        m->round[i] = (int64_t)i;
    }
    m->n = m->cap = n;
}

/* The row of op against probe (each call moving bytes), its rounds
 * classed against reference_gbps (NAN: not classed); frees both. */
static void frac_with(opcost_member *probe, opcost_member *op, int64_t bytes,
                      double reference_gbps, opcost_result *row)
{
    opcost_plan run_plan;
    memset(&run_plan, 0, sizeof run_plan);
    run_plan.seed = 3;
    opcost_result_init(row);
    row->bytes = bytes;
    opcost_bw_split split;
    C_CHECK(opcost_bw_split_probe(probe, (double)bytes, reference_gbps,
                                  &split) == 0);
    point_row_frac(&run_plan, row, &split, op, bytes);
    opcost_bw_split_free(&split);
    opcost_member_free(probe);
    opcost_member_free(op);
}

static void frac(double probe_us, double op_us, opcost_result *row)
{
    opcost_member probe, op;
    member_of(&probe, probe_us, 200);
    member_of(&op, op_us, 200);
    frac_with(&probe, &op, 1000, NAN, row);
}

/* n rounds of a host in two states: full bandwidth (the probe 100 us a
 * call, 10 GB/s for 1e6 bytes) except rounds [slow_from, slow_to), where
 * the probe takes 2x; the op keeps 0.70 of the probe at full bandwidth
 * and 0.93 at reduced (as the streamed float32 kernel did on Zen 5). One
 * probe sample in 40 meets an interrupt (3x). */
static void two_states(opcost_member *probe, opcost_member *op, size_t n,
                       size_t slow_from, size_t slow_to)
{
    memset(probe, 0, sizeof *probe);
    memset(op, 0, sizeof *op);
    probe->name = "probe";
    op->name = "op";
    probe->us = malloc(n * sizeof *probe->us);
    probe->device_us = malloc(n * sizeof *probe->device_us);
    probe->round = malloc(n * sizeof *probe->round);
    op->us = malloc(n * sizeof *op->us);
    op->round = malloc(n * sizeof *op->round);
    C_CHECK(probe->us && probe->device_us && probe->round && op->us &&
            op->round);
    for (size_t i = 0; i < n; ++i) {
        const int slow = i >= slow_from && i < slow_to;
        const double noise = 1 + 0.03 * sin((double)i * 7.3);
        const double p = 100 * (slow ? 2 : 1) * noise;
        probe->us[i] = i % 40 == 7 ? 3 * p : p;
        probe->device_us[i] = NAN;
        probe->round[i] = (int64_t)i;
        op->us[i] = p / (slow ? 0.93 : 0.70) * (1 + 0.02 * cos((double)i));
        op->round[i] = (int64_t)i;
    }
    probe->n = probe->cap = op->n = op->cap = n;
}

static void frac_states(size_t n, size_t slow_from, size_t slow_to,
                        double reference_gbps, opcost_result *row)
{
    opcost_member probe, op;
    two_states(&probe, &op, n, slow_from, slow_to);
    frac_with(&probe, &op, 1000000, reference_gbps, row);
}

static void test_bandwidth_states(void)
{
    opcost_result row;
    /* a third of the rounds slow, in the middle: the full state's 0.70 */
    frac_states(90, 30, 60, 10, &row);
    C_EXPECT(fabs(row.frac_of_peak - 0.70) < 0.01 &&
                 !strcmp(row.probe_state, "full") &&
                 strstr(row.note, "from the 60 probe rounds at full "
                                  "bandwidth") &&
                 strstr(row.note, "30 at reduced bandwidth (5.0 GB/s)"),
             "mixed rounds: frac %g, state '%s', note '%s'", row.frac_of_peak,
             row.probe_state, row.note);
    /* every round slow against the run's ceiling: the reduced state's
     * fraction, said to be one */
    frac_states(60, 0, 60, 10, &row);
    C_EXPECT(fabs(row.frac_of_peak - 0.93) < 0.015 &&
                 !strcmp(row.probe_state, "reduced") &&
                 strstr(row.note, "at reduced bandwidth: the DRAM probe ran "
                                  "at 5.0 GB/s, below 75 % of 10.0, in 60 of "
                                  "60 rounds"),
             "all slow: frac %g, state '%s', note '%s'", row.frac_of_peak,
             row.probe_state, row.note);
    /* the same rounds without a ceiling yet: the point's own best is the
     * reference, so they are all full; the run's settling finds the
     * ceiling and says reduced */
    frac_states(60, 0, 60, 0, &row);
    C_EXPECT(!strcmp(row.probe_state, "full") && !row.note[0],
             "all slow, no ceiling yet: state '%s', note '%s'", row.probe_state,
             row.note);
    point_row_settle_state(&row, 10);
    C_EXPECT(!strcmp(row.probe_state, "reduced") &&
                 strstr(row.note, "its probe's 5.0 GB/s is below 75 % of "
                                  "the run's full DRAM bandwidth, 10.0 GB/s"),
             "settled: state '%s', note '%s'", row.probe_state, row.note);
    /* a full-bandwidth row stays full when settled */
    frac_states(60, 60, 60, 10, &row);
    point_row_settle_state(&row, 10.5);
    C_EXPECT(!strcmp(row.probe_state, "full") && !row.note[0] &&
                 fabs(row.frac_of_peak - 0.70) < 0.01,
             "all fast: frac %g, state '%s', note '%s'", row.frac_of_peak,
             row.probe_state, row.note);
    /* too few of either: every round, said to be mixed */
    frac_states(14, 7, 14, 10, &row);
    C_EXPECT(!strcmp(row.probe_state, "mixed") &&
                 strstr(row.note, "over both bandwidth states"),
             "7 and 7: state '%s', note '%s'", row.probe_state, row.note);
    /* unclassed (NAN reference): no state */
    frac_states(60, 0, 30, NAN, &row);
    C_EXPECT(!row.probe_state[0], "not classed: state '%s'", row.probe_state);
}

static void test_split_window(void)
{
    /* one interrupted probe sample in a fast spell stays full (the window's
     * median), and a spell of 3 slow samples among fast ones is reduced */
    opcost_member probe, op;
    two_states(&probe, &op, 40, 20, 23);
    opcost_bw_split s;
    C_CHECK(opcost_bw_split_probe(&probe, 1e6, 10, &s) == 0);
    C_EXPECT(s.state == OPCOST_BW_FULL && s.full == 37 && s.reduced == 3 &&
                 s.used.n == 37 && fabs(s.reference_gbps - 10) < 0.5,
             "full %zu reduced %zu used %zu ref %g", s.full, s.reduced,
             s.used.n, s.reference_gbps);
    for (size_t i = 0; i < s.used.n; ++i)
        C_EXPECT(s.used.round[i] < 20 || s.used.round[i] >= 23,
                 "round %lld of the slow spell used",
                 (long long)s.used.round[i]);
    opcost_bw_split_free(&s);
    opcost_member_free(&probe);
    opcost_member_free(&op);
}

int main(void)
{
    test_bandwidth_states();
    test_split_window();
    opcost_result row;
    frac(100, 100, &row);
    C_EXPECT(fabs(row.frac_of_peak - 1) < 0.02 &&
                 row.frac_of_peak_ci95_rel < 0.02,
             "a probe as fast as the op: frac %g +-%g", row.frac_of_peak,
             row.frac_of_peak_ci95_rel);
    frac(100, 120, &row);
    C_EXPECT(fabs(row.frac_of_peak - 100.0 / 120) < 0.02,
             "an op 1.2x the probe: frac %g", row.frac_of_peak);
    frac(200, 100, &row);
    C_EXPECT(isnan(row.frac_of_peak) &&
                 strstr(row.note, "the probe ran slower than the op (2.00"),
             "a probe 2x the op: frac %g, note '%s'", row.frac_of_peak,
             row.note);
    return c_report("test_point_rows");
}
