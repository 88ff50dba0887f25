/* test_stats.c -- tests of sim/engine/stats.c: exact count/mean/sd/max, and histogram
 * quantiles within 0.1 % of the exact sample quantile.
 *
 * The exact quantile of rank k (1-based) is the k-th smallest sample, found by
 * sorting a copy with gsl_sort; stats.c reports rank ceil(q n).  Bins are a
 * factor 1.001 wide and a quantile is reported at the geometric middle of its
 * bin, so it is within sqrt(1.001) - 1 = 4.9988e-4 of the exact one: QTOL asserts
 * that bound (stats.h's 0.05 %), which also covers the required 0.1 %.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "engine/rng.h"
#include "engine/stats.h"

#define QTOL 5e-4   /* relative error allowed for a quantile, see above */

/* Relative error of GOT against WANT (both > 0). */
static double rel_err(double got, double want)
{
    return fabs(got / want - 1);
}

Test(stats, lognormal_million_quantiles_exact_moments)
{
    enum { N = 1000000 };
    double *x = malloc(N * sizeof *x);
    cr_assert_not_null(x);
    stat_acc *s = stat_new();
    cr_assert_not_null(s);
    gsl_rng *r = rng_stream(7, "stats-lognormal");
    /* Mean 50 ms, cv 2: sigma^2 = ln 5, a long tail like real latencies. */
    double s2 = log(5.0);
    for (int i = 0; i < N; i++) {
        x[i] = gsl_ran_lognormal(r, log(50.0) - s2 / 2, sqrt(s2));
        stat_add(s, x[i]);
    }
    cr_assert_eq(stat_count(s), N);
    /* gsl_rstat's running mean/sd differ from the two-pass ones only by rounding. */
    cr_assert(rel_err(stat_mean(s), gsl_stats_mean(x, 1, N)) < 1e-10);
    stat_summary sum;
    stat_summarize(s, &sum);
    cr_assert_eq(sum.n, N);
    cr_assert(rel_err(sum.mean, gsl_stats_mean(x, 1, N)) < 1e-10);
    cr_assert(rel_err(sum.sd, gsl_stats_sd(x, 1, N)) < 1e-9);

    gsl_sort(x, 1, N);
    cr_assert_eq(sum.max, x[N - 1], "max must be exact");
    cr_assert_eq(stat_quantile(s, 1.0), x[N - 1]);
    cr_assert_eq(stat_quantile(s, 0.0), x[0], "q = 0 is the exact min");
    /* Ranks ceil(q n) for q = 0.5, 0.9, 0.95, 0.99, 0.999 are whole here. */
    const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};
    const long ranks[] = {500000, 900000, 950000, 990000, 999000};
    const double got[] = {sum.p50, sum.p90, sum.p95, sum.p99, sum.p999};
    for (int i = 0; i < 5; i++) {
        double exact = x[ranks[i] - 1];
        cr_assert(rel_err(got[i], exact) <= QTOL, "p%g: %.9g vs exact %.9g", 100 * qs[i], got[i], exact);
        cr_assert_eq(stat_quantile(s, qs[i]), got[i], "summary and stat_quantile disagree");
    }
    /* And at many other ranks. */
    for (int k = 1; k <= 999; k++) {
        double q = k / 1000.0, v = stat_quantile(s, q);
        double exact = x[(long) ceil(q * N * (1 - 1e-12)) - 1];
        cr_assert(rel_err(v, exact) <= QTOL, "q %g: %.9g vs exact %.9g", q, v, exact);
    }
    gsl_rng_free(r);
    stat_free(s);
    free(x);
}

/* Values spread log-uniformly over 14 decades, from below 1 us to ~1e9 ms: every
 * region of the histogram is used. */
Test(stats, wide_range_quantiles)
{
    enum { N = 200000 };
    double *x = malloc(N * sizeof *x);
    stat_acc *s = stat_new();
    gsl_rng *r = rng_stream(8, "stats-wide");
    for (int i = 0; i < N; i++) {
        x[i] = exp(gsl_ran_flat(r, log(2e-6), log(1e9)));
        stat_add(s, x[i]);
    }
    gsl_sort(x, 1, N);
    for (int k = 1; k <= 200; k++) {
        long rank = (long) k * N / 200;   /* exactly ceil(q N) for q = rank / N */
        double q = (double) rank / N, v = stat_quantile(s, q);
        cr_assert(rel_err(v, x[rank - 1]) <= QTOL, "rank %ld: %.9g vs %.9g", rank, v, x[rank - 1]);
    }
    gsl_rng_free(r);
    stat_free(s);
    free(x);
}

/* Values on bin edges, STAT_MIN_MS * 1.001^k, all the way to just below
 * STAT_MAX_MS: none may be lost or land in a far bin through log rounding. */
Test(stats, bin_edges_and_range_ends)
{
    stat_acc *s = stat_new();
    double v = STAT_MIN_MS;
    long n = 0;
    while (v < STAT_MAX_MS) {
        stat_add(s, v);
        n++;
        v *= 1.001;
    }
    double top = nextafter(STAT_MAX_MS, 0);
    stat_add(s, top);
    n++;
    cr_assert_eq(stat_count(s), (uint64_t) n);
    cr_assert_eq(stat_quantile(s, 1), top);
    cr_assert_eq(stat_quantile(s, 0), STAT_MIN_MS);
    /* The k-th smallest value is STAT_MIN_MS * 1.001^(k-1), k <= n - 1. */
    for (long k = 2; k < n - 1; k += 97) {
        double q = (double) k / (double) n;
        double want = STAT_MIN_MS * pow(1.001, (double) (k - 1));
        double got = stat_quantile(s, q);
        cr_assert(rel_err(got, want) <= QTOL, "rank %ld: %.12g vs %.12g", k, got, want);
    }
    stat_free(s);
}

Test(stats, zeros_and_tiny_values_count_as_zero)
{
    stat_acc *s = stat_new();
    for (int i = 0; i < 100; i++)
        stat_add(s, 0.0);
    for (int i = 0; i < 50; i++)
        stat_add(s, 1e-9);       /* below STAT_MIN_MS */
    for (int i = 0; i < 50; i++)
        stat_add(s, -1e-15);     /* rounding noise below 0 */
    for (int i = 0; i < 200; i++)
        stat_add(s, 5.0);
    cr_assert_eq(stat_count(s), 400);
    cr_assert_float_eq(stat_mean(s), (200 * 5.0 + 50 * 1e-9) / 400, 1e-12);
    cr_assert_eq(stat_quantile(s, 0), 0);
    cr_assert_eq(stat_quantile(s, 0.5), 0);        /* rank 200 is a zero */
    cr_assert(rel_err(stat_quantile(s, 0.51), 5.0) <= QTOL);   /* rank 204 is a 5 */
    stat_summary sum;
    stat_summarize(s, &sum);
    cr_assert(rel_err(sum.p90, 5.0) <= QTOL);
    cr_assert(sum.p90 <= 5.0, "quantiles never exceed the exact max");
    cr_assert_eq(sum.max, 5.0);
    stat_free(s);
}

Test(stats, small_samples)
{
    stat_acc *s = stat_new();
    for (int i = 1; i <= 10; i++)
        stat_add(s, (double) i);
    cr_assert_eq(stat_count(s), 10);
    cr_assert_float_eq(stat_mean(s), 5.5, 1e-12);
    for (int k = 1; k <= 10; k++) {
        double got = stat_quantile(s, k / 10.0);
        cr_assert(rel_err(got, k) <= QTOL, "rank %d: %g", k, got);
    }
    cr_assert(rel_err(stat_quantile(s, 0.05), 1) <= QTOL);   /* ceil(0.5) = rank 1 */
    cr_assert(rel_err(stat_quantile(s, 0.51), 6) <= QTOL);   /* ceil(5.1) = rank 6 */
    stat_summary sum;
    stat_summarize(s, &sum);
    cr_assert_float_eq(sum.sd, sqrt(55.0 / 6.0), 1e-12);   /* sample sd of 1..10 */
    cr_assert_eq(sum.max, 10);
    stat_free(s);
}

Test(stats, empty_and_reset)
{
    stat_acc *s = stat_new();
    stat_summary sum;
    stat_summarize(s, &sum);
    cr_assert_eq(sum.n, 0);
    cr_assert_eq(sum.mean, 0);
    cr_assert_eq(sum.sd, 0);
    cr_assert_eq(sum.p50, 0);
    cr_assert_eq(sum.p999, 0);
    cr_assert_eq(sum.max, 0);
    cr_assert_eq(stat_mean(s), 0);
    cr_assert_eq(stat_quantile(s, 0.5), 0);
    stat_add(s, 100);
    stat_add(s, 0);
    stat_add(s, 1e12);
    stat_reset(s);
    cr_assert_eq(stat_count(s), 0);
    cr_assert_eq(stat_quantile(s, 0.99), 0);
    stat_add(s, 3);
    cr_assert_eq(stat_count(s), 1);
    cr_assert_eq(stat_quantile(s, 0.5), 3);
    cr_assert_eq(stat_mean(s), 3);
    stat_summarize(s, &sum);
    cr_assert_eq(sum.sd, 0);
    stat_free(s);
    stat_free(NULL);
}

/* Values beyond STAT_MAX_MS share the top bin; the exact max still bounds them. */
Test(stats, values_above_range)
{
    stat_acc *s = stat_new();
    stat_add(s, 1.0);
    stat_add(s, 2e10);
    stat_add(s, 3e12);
    stat_add(s, INFINITY);
    cr_assert_eq(stat_count(s), 4);
    cr_assert_eq(stat_quantile(s, 1), INFINITY);
    double p75 = stat_quantile(s, 0.75);
    cr_assert(rel_err(p75, STAT_MAX_MS) <= QTOL, "top bin reported as %g", p75);
    cr_assert(rel_err(stat_quantile(s, 0.25), 1.0) <= QTOL);
    stat_free(s);
}
