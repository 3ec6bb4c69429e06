/* Measured attribution on one point per path (a --quick-sized run through
 * opcost_run): every ok row is attributed by the RecordFunction source and
 * its parts add up to its median; the kernel path is all kernel (about no
 * dispatch); eager-cpp is our kernel plus dispatch, with no other compute
 * and no conversion; reference and native show aten's compute as compute
 * (a large share of the median); native on transposed inputs shows its copy
 * as conversion; the compiled paths show our kernel (compiled-python) or
 * Inductor's kernel (compiled-python-reference) beside the wrapper. */
#include "c_samples.h"
#include "c_tempdir.h"
#include "config.h"
#include "results_csv.h"
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const opcost_result *find(const opcost_result *rows, size_t n,
                                 const char *path, const char *layout)
{
    for (size_t i = 0; i < n; ++i)
        if (!strcmp(rows[i].path, path) && !strcmp(rows[i].layout, layout))
            return &rows[i];
    return NULL;
}

static double sum_parts(const opcost_result *r)
{
    return r->kernel_us + r->other_kernel_us + r->conversion_us + r->launch_us +
           r->dispatch_us + r->idle_us;
}

int main(void)
{
    char shapes[512], out[512], err[1024];
    c_write_file("attribution.csv",
                 "op,B,N,dtype,layout,freq\n"
                 "fused_add_rms_norm,64,1024,float32,contiguous,1\n"
                 "fused_add_rms_norm,64,1024,float32,transposed,1\n",
                 shapes, sizeof shapes);
    /* not the shape file's name: the run's output may not be its input
     * (it used to be, and replaced the shapes with the results) */
    snprintf(out, sizeof out, "%s/attribution-run.csv",
             c_tempdir("test_attribution_paths"));
    char *argv[] = {
        "run", "--shapes", shapes, "--paths",
        "kernel,kernel-e2e,eager-cpp,reference,native,eager-python,"
        "reference-python,compiled-python,compiled-python-reference,"
        "compiled-aoti",
        "--out", out, "--reps", "5", "--rep-budget-ms", "2", "--threads", "1",
        /* unpinned: under ctest -j every one-thread run would take CPU 0 */
        "--no-pin",
        /* a small cache assumed: rotation and probes stay small */
        "--llc-mib", "32"};
    opcost_plan run_plan;
    C_EXPECT(opcost_config_parse(&run_plan, 16, argv, err, sizeof err) == 0,
             "%s", err);
    C_EXPECT(opcost_run(&run_plan) == 0, "opcost run failed");
    opcost_result *rows = NULL;
    size_t n = 0;
    C_EXPECT(opcost_results_read(out, &rows, &n, err, sizeof err) == 0, "%s",
             err);
    C_EXPECT(n == 20, "20 rows (got %zu)", n);
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *r = &rows[i];
        C_EXPECT(r->status == OPCOST_STATUS_OK, "%s %s: %s: %s", r->path,
                 r->layout, opcost_status_name(r->status), r->note);
        if (r->status != OPCOST_STATUS_OK)
            continue;
        C_EXPECT(!strcmp(r->attribution_source, "record_function"),
                 "%s %s: attributed by '%s' (%s)", r->path, r->layout,
                 r->attribution_source, r->note);
        /* each of the seven numbers is written with 6 significant digits
         * (each off by at most 5e-6 of itself) */
        C_EXPECT(fabs(sum_parts(r) - r->median_us) <= 3.5e-5 * r->median_us,
                 "%s %s: parts sum to %.6g, the median is %.6g", r->path,
                 r->layout, sum_parts(r), r->median_us);
        C_EXPECT(r->kernel_us >= 0 && r->other_kernel_us >= 0 &&
                     r->conversion_us >= 0 && r->dispatch_us >= 0 &&
                     r->launch_us == 0 && r->idle_us == 0,
                 "%s %s: parts >= 0, no launch or idle on the CPU", r->path,
                 r->layout);
        C_EXPECT(r->tracer_overhead > 0, "%s %s: tracer overhead %g", r->path,
                 r->layout, r->tracer_overhead);
        /* the ceiling of the row's own mix and level (a 64 x 1024 float32
         * point is 1 MiB: cold rotates it out of every cache level) */
        const char *want =
            r->cache_state == OPCOST_CACHE_COLD ? "dram fused " : "fused";
        C_EXPECT(strstr(r->ceiling_kind, want) == r->ceiling_kind ||
                     (r->cache_state != OPCOST_CACHE_COLD &&
                      strstr(r->ceiling_kind, want)),
                 "%s %s: ceiling '%s' (%s)", r->path, r->layout,
                 r->ceiling_kind, opcost_cache_state_name(r->cache_state));
        C_EXPECT(r->working_set_bytes == r->bytes &&
                     fabs(r->frac_of_peak_best - r->gbps / r->ceiling_gbps) <=
                         1e-5 * r->frac_of_peak_best,
                 "%s %s: frac_of_peak_best from its own ceiling", r->path,
                 r->layout);
        /* the paired fraction: against the probe of the same rounds */
        C_EXPECT(r->frac_of_peak > 0 && r->frac_of_peak_ci95_rel >= 0 &&
                     r->probe_gbps > 0,
                 "%s %s: paired frac_of_peak %g +-%g (probe %g GB/s)", r->path,
                 r->layout, r->frac_of_peak, r->frac_of_peak_ci95_rel,
                 r->probe_gbps);
        printf("%-26s %-11s median %9.2f kernel %8.2f other %8.2f conv %8.2f "
               "dispatch %8.2f us (tracer x%.2f)\n",
               r->path, r->layout, r->median_us, r->kernel_us,
               r->other_kernel_us, r->conversion_us, r->dispatch_us,
               r->tracer_overhead);
    }
    for (int t = 0; t < 2; ++t) {
        const char *layout = t ? "transposed" : "contiguous";
        const opcost_result *k = find(rows, n, "kernel", layout);
        C_EXPECT(k && k->kernel_us >= 0.9 * k->median_us &&
                     k->dispatch_us <= 0.1 * k->median_us,
                 "%s: kernel is our kernel: %.2f of %.2f us, dispatch %.2f",
                 layout, k ? k->kernel_us : NAN, k ? k->median_us : NAN,
                 k ? k->dispatch_us : NAN);
        const opcost_result *e = find(rows, n, "eager-cpp", layout);
        C_EXPECT(e && e->kernel_us > 0.3 * e->median_us &&
                     e->other_kernel_us == 0 && e->conversion_us == 0 &&
                     e->dispatch_us > 0,
                 "%s: eager-cpp is our kernel and dispatch", layout);
        for (int p = 0; p < 2; ++p) {
            const opcost_result *r =
                find(rows, n, p ? "native" : "reference", layout);
            /* (allocating and freeing fresh outputs, page faults and
             * unmapping, also lands outside aten's records: dispatch can
             * be large too. Its share is the host's: the reference's
             * compute was 0.22 of the median on a loaded host, so the
             * check is that aten's kernels are counted as other compute,
             * not how much of the time they take) */
            C_EXPECT(r && r->kernel_us == 0 && r->other_kernel_us > 0,
                     "%s %s: aten's compute is compute: other %.2f, "
                     "dispatch %.2f us",
                     p ? "native" : "reference", layout,
                     r ? r->other_kernel_us : NAN, r ? r->dispatch_us : NAN);
        }
        const opcost_result *c = find(rows, n, "compiled-python", layout);
        C_EXPECT(c && c->kernel_us > 0 && c->dispatch_us > 0,
                 "%s: compiled-python shows our kernel and its wrapper",
                 layout);
        const opcost_result *i =
            find(rows, n, "compiled-python-reference", layout);
        C_EXPECT(i && i->other_kernel_us > 0 && i->kernel_us == 0,
                 "%s: compiled-python-reference shows Inductor's kernel",
                 layout);
        const opcost_result *a = find(rows, n, "compiled-aoti", layout);
        C_EXPECT(a && a->kernel_us > 0,
                 "%s: compiled-aoti shows our kernel inside the package",
                 layout);
    }
    /* native makes the transposed output contiguous: a copy */
    const opcost_result *nt = find(rows, n, "native", "transposed");
    C_EXPECT(nt && nt->conversion_us > 0,
             "native transposed: its copy is conversion (%.3f us)",
             nt ? nt->conversion_us : NAN);
    free(rows);
    return c_report("test_attribution_paths");
}
