/* test_dist.c -- tests of sim/engine/rng.c (per-entity streams) and sim/core/dist.c
 * (parsing, moments and sampling of scenario distributions).
 *
 * Statistical checks use fixed seeds, so they pass or fail the same way on every
 * run; their tolerances are five standard errors of the estimate, so that a
 * correct implementation would fail them for fewer than one seed in a million.
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sf_gamma.h>

#include "core/dist.h"
#include "engine/rng.h"

/* ---- rng ---------------------------------------------------------------- */

Test(rng, same_seed_and_name_give_identical_streams)
{
    gsl_rng *a = rng_stream(12345, "replica-7");
    gsl_rng *b = rng_stream(12345, "replica-7");
    cr_assert_not_null(a);
    cr_assert_not_null(b);
    for (int i = 0; i < 10000; i++)
        cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "draw %d differs", i);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

/* Counts equal draws among the first 1000 of two streams.  Independent 32-bit
 * streams agree on a draw with probability 2^-32, so any count above 1 means the
 * streams are related. */
static int common_draws(uint64_t seed1, const char *name1, uint64_t seed2, const char *name2)
{
    gsl_rng *a = rng_stream(seed1, name1);
    gsl_rng *b = rng_stream(seed2, name2);
    cr_assert(a != NULL && b != NULL);
    int same = 0;
    for (int i = 0; i < 1000; i++)
        same += gsl_rng_get(a) == gsl_rng_get(b);
    gsl_rng_free(a);
    gsl_rng_free(b);
    return same;
}

Test(rng, different_names_or_seeds_give_different_streams)
{
    cr_assert_leq(common_draws(1, "replica-1", 1, "replica-2"), 1);
    cr_assert_leq(common_draws(1, "workload", 1, "workload2"), 1);
    cr_assert_leq(common_draws(1, "workload", 2, "workload"), 1);
    cr_assert_leq(common_draws(0, "", 0, "a"), 1);
}

Test(rng, seed_zero_and_empty_name_work)
{
    gsl_rng *r = rng_stream(0, "");
    cr_assert_not_null(r);
    unsigned long first = gsl_rng_get(r);
    int repeats = 0;
    for (int i = 0; i < 100; i++)
        repeats += gsl_rng_get(r) == first;
    cr_assert_leq(repeats, 1, "a stream seeded from (0, \"\") must still vary");
    gsl_rng_free(r);
}

/* Pinned outputs of the derivation (splitmix64 finaliser twice over seed XOR
 * FNV-1a(name), checked against an independent Python implementation): changing
 * them silently would change every published run. */
Test(rng, derivation_is_pinned)
{
    cr_assert_eq(rng_derive(0, ""), UINT64_C(2448385507222971125));
    cr_assert_eq(rng_derive(42, "workload"), UINT64_C(2537915879046845860));
    cr_assert_eq(rng_derive(42, "replica-1"), UINT64_C(4829994093376137850));
    gsl_rng *r = rng_stream(42, "workload");
    cr_assert_eq(gsl_rng_get(r), 3296716297UL);
    cr_assert_eq(gsl_rng_get(r), 2078953843UL);
    gsl_rng_free(r);
}

/* Orders 64-bit words for qsort. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return (x > y) - (x < y);
}

Test(rng, derived_seeds_of_many_names_are_distinct)
{
    /* 10^5 random 64-bit values collide with probability ~3e-10. */
    enum { N = 100000 };
    uint64_t *u = malloc(N * sizeof *u);
    cr_assert_not_null(u);
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "replica-%d", i);
        u[i] = rng_derive(7, name);
    }
    qsort(u, N, sizeof *u, cmp_u64);
    for (int i = 1; i < N; i++)
        cr_assert_neq(u[i - 1], u[i], "two replica names share a derived seed");
    free(u);
}

/* ---- dist: moments of samples ------------------------------------------- */

/* Draws N values of SPEC from a fixed stream and checks the sample mean and cv
 * against the requested MEAN and CV.  KURT is the distribution's (non-excess)
 * kurtosis.  Standard errors: the sample mean has relative SE cv/sqrt(n); the
 * sample sd has relative SE ~ sqrt((kurt-1)/(4n)); the sample cv's relative SE is
 * at most about the root sum of squares of the two (ignoring their correlation,
 * which is positive for right-skewed laws and only shrinks it).  Each check
 * allows 5 SE. */
static void check_moments(const char *spec, double mean, double cv, double kurt)
{
    enum { N = 400000 };
    dist d;
    char err[256];
    cr_assert_eq(dist_parse(&d, spec, NULL, err, sizeof err), 0, "%s: %s", spec, err);
    cr_assert_float_eq(d.mean, mean, 1e-12 * mean, "%s: d.mean %g", spec, d.mean);
    cr_assert_float_eq(d.cv, cv, 1e-12, "%s: d.cv %g", spec, d.cv);
    gsl_rng *r = rng_stream(2024, spec);
    double s = 0, s2 = 0;
    for (int i = 0; i < N; i++) {
        double x = dist_sample(&d, r);
        cr_assert(x >= 0 && x <= dist_max(&d), "%s: draw %g out of range", spec, x);
        s += x;
        s2 += x * x;
    }
    double m = s / N;
    double sd = sqrt((s2 - N * m * m) / (N - 1));
    double se_mean = cv / sqrt(N);                               /* relative */
    double se_cv = sqrt((kurt - 1) / (4.0 * N) + se_mean * se_mean);  /* relative */
    cr_assert(fabs(m / mean - 1) < 5 * se_mean + 1e-12,
              "%s: sample mean %g vs %g (5 SE = %g relative)", spec, m, mean, 5 * se_mean);
    if (cv > 0)
        cr_assert(fabs(sd / m / cv - 1) < 5 * se_cv,
                  "%s: sample cv %g vs %g (5 SE = %g relative)", spec, sd / m, cv, 5 * se_cv);
    gsl_rng_free(r);
    dist_free(&d);
}

Test(dist, exp_moments)
{
    check_moments("exp(mean=20)", 20, 1, 9);
}

Test(dist, lognormal_moments)
{
    /* Lognormal kurtosis: w^4 + 2w^3 + 3w^2 - 3 with w = 1 + cv^2. */
    double w = 1.25;
    check_moments("lognormal(mean=10, cv=0.5)", 10, 0.5, w * w * w * w + 2 * w * w * w + 3 * w * w - 3);
}

Test(dist, gamma_moments)
{
    /* Gamma of shape 4 (cv 0.5): kurtosis 3 + 6/4. */
    check_moments("gamma(mean=3, cv=0.5)", 3, 0.5, 4.5);
    dist d;
    char err[128];
    cr_assert_eq(dist_parse(&d, "gamma(mean=3, cv=0.5)", NULL, err, sizeof err), 0);
    cr_assert_float_eq(d.a, 4.0, 1e-12);    /* shape 1/cv^2 */
    cr_assert_float_eq(d.b, 0.75, 1e-12);   /* scale mean cv^2 */
}

Test(dist, weibull_moments)
{
    /* Weibull near shape 2.1: kurtosis ~3.2; 4 bounds it. */
    check_moments("weibull(mean=7, cv=0.5)", 7, 0.5, 4);
    /* Heavy tailed: shape 0.5 has cv sqrt(5) and kurtosis 87.72. */
    check_moments("weibull(mean=1, cv=2.2360679774997897)", 1, 2.2360679774997897, 87.72);
}

Test(dist, uniform_moments)
{
    /* Uniform kurtosis 1.8; cv of U[2, 6) is (4/sqrt(12))/4. */
    check_moments("uniform(min=2, max=6)", 4, 1 / sqrt(12.0), 1.8);
}

Test(dist, const_is_constant)
{
    dist d;
    char err[128];
    cr_assert_eq(dist_parse(&d, "const(2.5)", NULL, err, sizeof err), 0, "%s", err);
    gsl_rng *r = rng_stream(1, "c");
    for (int i = 0; i < 100; i++)
        cr_assert_eq(dist_sample(&d, r), 2.5);
    cr_assert_eq(d.mean, 2.5);
    cr_assert_eq(d.cv, 0);
    cr_assert_eq(dist_max(&d), 2.5);
    cr_assert_eq(dist_parse(&d, "const(0)", NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(dist_sample(&d, r), 0);
    gsl_rng_free(r);
}

/* ---- dist: Weibull shape solve ------------------------------------------ */

/* The cv of a Weibull of shape k. */
static double weibull_cv(double k)
{
    double g1 = gsl_sf_gamma(1 + 1 / k), g2 = gsl_sf_gamma(1 + 2 / k);
    return sqrt(g2 / (g1 * g1) - 1);
}

Test(dist, weibull_shape_solve)
{
    dist d;
    char err[128];
    /* cv 1 is the exponential: shape exactly 1, scale = mean. */
    cr_assert_eq(dist_parse(&d, "weibull(mean=5, cv=1)", NULL, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(d.b, 1.0, 1e-9);
    cr_assert_float_eq(d.a, 5.0, 1e-8);
    /* Shape 2 (Rayleigh) has cv sqrt(4/pi - 1). */
    char spec[128];
    snprintf(spec, sizeof spec, "weibull(mean=1, cv=%.17g)", sqrt(4 / M_PI - 1));
    cr_assert_eq(dist_parse(&d, spec, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(d.b, 2.0, 1e-9);
    cr_assert_float_eq(d.a, 2 / sqrt(M_PI), 1e-9);   /* mean / Gamma(1.5) */
    /* Round trip over a range of cvs: the solved shape reproduces the cv, and the
     * scale reproduces the mean. */
    const double cvs[] = {0.01, 0.1, 0.3, 0.5, 0.8, 1.5, 3, 10, 50};
    for (size_t i = 0; i < sizeof cvs / sizeof cvs[0]; i++) {
        snprintf(spec, sizeof spec, "weibull(mean=4, cv=%g)", cvs[i]);
        cr_assert_eq(dist_parse(&d, spec, NULL, err, sizeof err), 0, "%s: %s", spec, err);
        cr_assert_float_eq(weibull_cv(d.b) / cvs[i], 1.0, 1e-9, "%s: shape %g", spec, d.b);
        cr_assert_float_eq(d.a * gsl_sf_gamma(1 + 1 / d.b), 4.0, 1e-9, "%s", spec);
    }
}

/* ---- dist: empirical ----------------------------------------------------- */

/* tests/data/sharegpt_lengths.csv: the first 1000 rows of the ShareGPT length
 * statistics; num_prefill_tokens sums to 2388078, ranges over [4, 8014], and its
 * population cv is 0.8750841205821146 (computed with Python's statistics module). */
Test(dist, empirical_from_csv)
{
    dist d;
    char err[512];
    cr_assert_eq(dist_parse(&d, "empirical( column = num_prefill_tokens , file=sharegpt_lengths.csv )",
                            "tests/data", err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.family, DIST_EMPIRICAL);
    cr_assert_eq(d.nvalues, 1000);
    cr_assert_float_eq(d.mean, 2388.078, 1e-9);
    cr_assert_float_eq(d.cv, 0.8750841205821146, 1e-12);
    cr_assert_eq(dist_max(&d), 8014);
    cr_assert_eq(d.a, 4);
    /* Resampled mean within 5 SE (SE = sd / sqrt(n) = 0.875 * 2388 / sqrt(2e5)). */
    enum { N = 200000 };
    gsl_rng *r = rng_stream(99, "empirical");
    double s = 0;
    for (int i = 0; i < N; i++) {
        double x = dist_sample(&d, r);
        cr_assert(x >= 4 && x <= 8014 && x == floor(x), "draw %g is not a value of the column", x);
        s += x;
    }
    double se = d.cv * d.mean / sqrt(N);
    cr_assert(fabs(s / N - d.mean) < 5 * se, "resampled mean %g vs %g", s / N, d.mean);
    gsl_rng_free(r);
    dist_free(&d);
    cr_assert_null(d.values);

    /* An absolute path ignores the base directory. */
    char abs[4096];
    cr_assert_not_null(realpath("tests/data/sharegpt_lengths.csv", abs));
    char spec[4200];
    snprintf(spec, sizeof spec, "empirical(file=\"%s\", column=pd_ratio)", abs);
    cr_assert_eq(dist_parse(&d, spec, "/nonexistent", err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.nvalues, 1000);
    cr_assert_float_eq(d.mean, 14.930409666609506, 1e-9);
    cr_assert_float_eq(dist_max(&d), 1602.8, 1e-9);
    dist_free(&d);
}

Test(dist, empirical_errors)
{
    dist d;
    char err[512];
    cr_assert_eq(dist_parse(&d, "empirical(file=nosuch.csv, column=x)", "tests/data", err, sizeof err), -1);
    cr_assert(strstr(err, "tests/data/nosuch.csv") && strstr(err, "cannot open"), "%s", err);
    cr_assert_eq(dist_parse(&d, "empirical(file=sharegpt_lengths.csv, column=x)", "tests/data", err,
                            sizeof err), -1);
    cr_assert(strstr(err, "no column 'x'") && strstr(err, "num_prefill_tokens"), "%s", err);
    cr_assert_null(d.values);
}

/* ---- dist: parsing ------------------------------------------------------- */

Test(dist_parse, spaces_and_key_order)
{
    dist d;
    char err[128];
    cr_assert_eq(dist_parse(&d, "  lognormal (  cv = 0.5 ,mean=  10 )  ", NULL, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(d.family, DIST_LOGNORMAL);
    cr_assert_eq(d.mean, 10);
    cr_assert_eq(d.cv, 0.5);
    /* sigma^2 = ln(1 + cv^2), zeta = ln(mean) - sigma^2 / 2 */
    cr_assert_float_eq(d.b * d.b, log(1.25), 1e-12);
    cr_assert_float_eq(d.a, log(10) - log(1.25) / 2, 1e-12);
    cr_assert_eq(dist_parse(&d, "exp(mean=1e3)", NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.mean, 1000);
    cr_assert_eq(d.cv, 1);
    cr_assert_eq(dist_max(&d), INFINITY);
    cr_assert_eq(dist_parse(&d, "uniform(max=3,min=3)", NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(d.mean, 3);
    cr_assert_eq(d.cv, 0);
    cr_assert_eq(dist_max(&d), 3);
}

Test(dist_parse, errors_give_minus_one_and_a_message)
{
    static const struct { const char *spec, *want; } cases[] = {
        {"foo(mean=1)", "unknown distribution 'foo'"},
        {"normal(mean=1, cv=1)", "lognormal, gamma, weibull, uniform, empirical"},
        {"", "expected FAMILY(...)"},
        {"42 ms", "expected FAMILY(...)"},
        {"-1", "const: value must be >= 0"},         /* a bare number is const(X), validated as such */
        {"exp mean=1", "expected '('"},
        {"exp(mean=1", "missing ')'"},
        {"exp(mean=1) x", "unexpected text after ')'"},
        {"lognormal(mean=1)", "missing parameter 'cv'"},
        {"exp()", "missing parameter 'mean'"},
        {"exp(mean=1, cv=2)", "unknown parameter 'cv' (expected mean)"},
        {"gamma(mean=1, sd=2)", "unknown parameter 'sd' (expected mean, cv)"},
        {"exp(mean=1, mean=2)", "'mean' given twice"},
        {"exp(mean=1,)", "empty parameter"},
        {"exp(mean)", "'mean' has no value"},
        {"exp(mean=)", "'mean' has no value"},
        {"exp(mean=abc)", "mean 'abc' is not a number"},
        {"exp(mean=5ms)", "mean '5ms' is not a number"},
        {"exp(mean=1e999)", "is not a number"},
        {"exp(mean=0)", "mean must be > 0"},
        {"lognormal(mean=-2, cv=1)", "mean must be > 0"},
        {"lognormal(mean=2, cv=-1)", "cv must be >= 0"},
        {"gamma(mean=2, cv=0)", "cv must be > 0"},
        {"weibull(mean=2, cv=0)", "cv must be > 0"},
        {"weibull(mean=2, cv=1e6)", "cv must be between"},
        {"uniform(min=5, max=1)", "min 5 is greater than max 1"},
        {"uniform(min=-1, max=1)", "min must be >= 0"},
        {"const(-1)", "must be >= 0"},
        {"const(x)", "'x' is not a number"},
        {"const()", "missing value"},
        {"const(value=3)", "takes one number"},
        {"const(1, 2)", "takes one number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dist d;
        char err[256] = "";
        int rc = dist_parse(&d, cases[i].spec, NULL, err, sizeof err);
        cr_assert_eq(rc, -1, "'%s' was accepted", cases[i].spec);
        cr_assert_not_null(strstr(err, cases[i].want), "'%s': got \"%s\", want \"%s\"",
                           cases[i].spec, err, cases[i].want);
        cr_assert_null(strchr(err, '\n'), "'%s': message spans lines", cases[i].spec);
        cr_assert_null(d.values);
    }
}

Test(dist_parse, small_error_buffer_is_safe)
{
    dist d;
    char err[8];
    cr_assert_eq(dist_parse(&d, "unknownfamily(a=1)", NULL, err, sizeof err), -1);
    cr_assert_eq(strlen(err), 7);
    cr_assert_eq(dist_parse(&d, "bad", NULL, NULL, 0), -1);
}

Test(dist_parse, family_names)
{
    const char *specs[] = {"const(1)", "exp(mean=1)", "lognormal(mean=1,cv=1)", "gamma(mean=1,cv=1)",
                           "weibull(mean=1,cv=1)", "uniform(min=0,max=1)"};
    const char *names[] = {"const", "exp", "lognormal", "gamma", "weibull", "uniform"};
    for (size_t i = 0; i < 6; i++) {
        dist d;
        char err[128];
        cr_assert_eq(dist_parse(&d, specs[i], NULL, err, sizeof err), 0, "%s", err);
        cr_assert_str_eq(dist_family_name(d.family), names[i]);
    }
    cr_assert_str_eq(dist_family_name(DIST_EMPIRICAL), "empirical");
}

Test(dist_parse, free_is_safe_on_zeroed_dist)
{
    dist d;
    memset(&d, 0, sizeof d);
    dist_free(&d);
    dist_free(&d);
    dist_free(NULL);
}
