/* test_seednoise.c -- Criterion tests of a single run's seed noise by batch
 * means (run/col_seednoise.c; docs/bands.md), against an exact answer:
 *
 *   seednoise/mm1_intervals_cover   M/M/1 at load 0.8 (mean sojourn 1 / (mu -
 *                                   lambda) = 500 ms, P99 ln(100) / (mu -
 *                                   lambda) = 2302.6 ms): over 40 seeds, each
 *                                   run's own 90 % interval holds the exact
 *                                   mean and P99 in about 90 % of them, where
 *                                   the naive i.i.d. interval (sd / sqrt(n))
 *                                   would not: the requests' autocorrelation is
 *                                   measured (variance inflation well above 1);
 *   seednoise/off_unless_asked      a run not asking for it measures nothing
 *                                   (no seed_noise rows), its numbers are the
 *                                   same either way, and the report leaves the
 *                                   rows out.
 * With 40 seeds the coverage count of a true 90 % interval is binomial(40,
 * 0.9): sd 1.9; the bounds 30..40 (75 %) sit 3.2 sd below.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tsim.h"
#include "latsim/report.h"
#include "latsim/scenario.h"

#define MM1 "[sim]\nrequests = 20000\n[workload]\narrival = poisson\nrate = 8\n[pool q]\nservers = 1\n" \
            "service_ms = exp(mean=100)\n"

/* Runs TEXT with SEED, batch means on (ON), into RES. */
static void run_bm(const char *text, uint64_t seed, int on, sim_result *res)
{
    scenario sc;
    char err[1024];
    cr_assert_eq(tsim_load_resolve("mm1.ini", text, &sc, err, sizeof err), 0, "%s", err);
    scenario_set_batch_means(&sc, on);
    cr_assert_eq(sim_run(&sc, seed, res, err, sizeof err), 0, "sim_run: %s", err);
    scenario_free(&sc);
}

/* R's seed-noise row "seed_noise.NAME" (stat "value"), NAN when absent. */
static double noise(const sim_result *r, const char *name)
{
    char m[64];
    snprintf(m, sizeof m, "seed_noise.%s", name);
    return sim_result_get(r, "", m, "value");
}

/* R's first seed-noise row (seed_noise.batches), NULL when it did not measure its seed noise. */
static const sim_row *noise_row(const sim_result *r) { return sim_result_row(r, "", "seed_noise.batches", "value"); }

Test(seednoise, mm1_intervals_cover, .timeout = 120)
{
    const double mean = 1000.0 / (10 - 8), p99 = log(100.0) * 1000.0 / (10 - 8);
    int n = 40, in_mean = 0, in_p99 = 0, in_naive = 0;
    double phi = 0;
    for (int s = 0; s < n; s++) {
        sim_result r;
        run_bm(MM1, 1000 + (uint64_t) s, 1, &r);
        double batches = noise(&r, "batches"), h_mean = noise(&r, "e2e_mean"), h_p99 = noise(&r, "e2e_p99");
        cr_assert(noise_row(&r) && batches >= 16 && batches <= 32, "batches %g", batches);
        cr_assert(isfinite(h_mean) && isfinite(h_p99) && isfinite(noise(&r, "throughput_rps")), "seed %d", s);
        in_mean += fabs(tsim_sys(&r, "e2e")->mean - mean) <= h_mean;
        in_p99 += fabs(tsim_sys(&r, "e2e")->p99 - p99) <= h_p99;
        in_naive += fabs(tsim_sys(&r, "e2e")->mean - mean) <= 1.6449 * tsim_sys(&r, "e2e")->sd / sqrt((double) tsim_sys(&r, "e2e")->n);
        phi += noise(&r, "phi") / n;
        sim_result_free(&r);
    }
    cr_log_info("mean covered %d / %d, p99 %d / %d, naive %d / %d, mean phi %.3g", in_mean, n, in_p99, n, in_naive, n, phi);
    cr_expect(in_mean >= 30, "the mean's interval covers %d of %d", in_mean, n);
    cr_expect(in_p99 >= 30, "the P99's interval covers %d of %d", in_p99, n);
    cr_expect(phi > 5, "M/M/1 at 0.8: consecutive sojourns are strongly correlated (phi %.3g)", phi);
    cr_expect(in_naive < 30, "the i.i.d. interval would cover only %d of %d", in_naive, n);
}

Test(seednoise, off_unless_asked)
{
    sim_result a, b;
    run_bm(MM1, 7, 0, &a);
    run_bm(MM1, 7, 1, &b);
    cr_expect_null(noise_row(&a));
    cr_expect_not_null(noise_row(&b));
    cr_expect(tsim_sys(&a, "e2e")->mean == tsim_sys(&b, "e2e")->mean && tsim_sys(&a, "e2e")->p99 == tsim_sys(&b, "e2e")->p99 && tsim_n(&a, "events") == tsim_n(&b, "events"), "a collector never changes the run");
    /* The report leaves its rows out: the same rows either way. */
    report ra, rb;
    cr_assert_eq(report_flatten(&a, -1, &ra), 0);
    cr_assert_eq(report_flatten(&b, -1, &rb), 0);
    cr_expect_eq(ra.n, rb.n);
    cr_expect(isnan(report_get(&rb, "", "seed_noise.batches", "value")));
    report_free(&ra);
    report_free(&rb);
    sim_result_free(&a);
    sim_result_free(&b);
}
