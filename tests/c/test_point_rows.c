/* A point's rows from its members' rounds: the paired fraction of peak.
 * A probe slower than the op beyond the interval is no ceiling, so the row
 * gets no frac_of_peak (it read 2 on an H200, where the fused op's probe
 * is two copies, two launches); a probe as fast as the op gives 1. */
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

static void frac(double probe_us, double op_us, opcost_result *row)
{
    opcost_member probe, op;
    member_of(&probe, probe_us, 200);
    member_of(&op, op_us, 200);
    opcost_plan cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = 3;
    opcost_result_init(row);
    row->bytes = 1000;
    point_row_frac(&cfg, row, &probe, &op, 1000);
    opcost_member_free(&probe);
    opcost_member_free(&op);
}

int main(void)
{
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
