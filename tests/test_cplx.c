/* test_cplx.c -- tests of sim/core/cplx.c, the complexity router's decision: without
 * classifier error every request goes to its side; with error e a fraction e of
 * each side goes to the other (5 binomial standard errors); the uncertain band
 * goes to the large model. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "core/cplx.h"
#include "engine/rng.h"

Test(cplx, zero_error_sends_every_request_to_its_side)
{
    cplx_cfg c = {.cut = 0.6, .error = 0, .band = 0};
    gsl_rng *scores = rng_stream(1, "scores");
    for (int i = 0; i < 100000; i++) {
        double s = gsl_rng_uniform(scores);
        cr_assert_eq(cplx_route(&c, s, NULL), s < 0.6 ? CPLX_SMALL : CPLX_LARGE);
    }
    cr_assert_eq(cplx_route(&c, 0.6, NULL), CPLX_LARGE);     /* the cut itself is complex */
    gsl_rng_free(scores);
}

Test(cplx, error_misroutes_that_fraction_of_each_side)
{
    cplx_cfg c = {.cut = 0.3, .error = 0.08, .band = 0};
    gsl_rng *scores = rng_stream(2, "scores");
    gsl_rng *r = rng_stream(2, "gateway.classifier");
    long n[2] = {0, 0}, wrong[2] = {0, 0};
    for (int i = 0; i < 200000; i++) {
        double s = gsl_rng_uniform(scores);
        cplx_side truth = cplx_truth(&c, s);
        n[truth]++;
        wrong[truth] += cplx_route(&c, s, r) != truth;
    }
    for (int side = 0; side < 2; side++)
        cr_assert_float_eq((double) wrong[side], 0.08 * n[side],
                           5 * sqrt(n[side] * 0.08 * 0.92), "side %d: %ld of %ld",
                           side, wrong[side], n[side]);
    gsl_rng_free(scores);
    gsl_rng_free(r);
}

Test(cplx, uncertain_band_goes_to_the_large_model)
{
    cplx_cfg c = {.cut = 0.5, .error = 1.0, .band = 0.1};
    gsl_rng *r = rng_stream(3, "gateway.classifier");
    cr_assert_eq(cplx_route(&c, 0.4, r), CPLX_LARGE);
    cr_assert_eq(cplx_route(&c, 0.55, r), CPLX_LARGE);
    cr_assert_eq(cplx_route(&c, 0.39, r), CPLX_LARGE);       /* small side, always wrong */
    cr_assert_eq(cplx_route(&c, 0.6, r), CPLX_SMALL);        /* large side, always wrong */
    char err[128];
    cr_assert_eq(cplx_check(&c, err, sizeof err), 0);
    c.cut = 1.5;
    cr_assert_eq(cplx_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "complexity_cut"), "%s", err);
    c.cut = 0.5;
    c.error = -0.1;
    cr_assert_eq(cplx_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "classifier_error"), "%s", err);
    gsl_rng_free(r);
}
