/* test_api.c -- tests of sim/gateway/api.c: token buckets admit exactly the configured
 * rate over a long run, queueing waits, request timing by hand, errors at
 * their rate, prices, and checks. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "gateway/api.h"
#include "engine/rng.h"

#define MS(x) simtime_from_ms(x)

/* 600 requests per minute offered one every millisecond for an hour: the bucket
 * starts with a minute's allowance (600), then admits 10 per second, so by time T
 * exactly 600 + floor(10 T) requests have been admitted, give or take the one
 * in progress. */
Test(api, bucket_admits_exactly_the_rate_over_a_long_run)
{
    api_bucket b;
    api_bucket_init(&b, 600);
    uint64_t admitted = 0;
    const int64_t T_MS = 3600 * 1000;
    for (int64_t t = 0; t < T_MS; t++) {
        admitted += api_bucket_take(&b, MS(t), 1) == 0;
        if (t % 60000 == 59999) {
            double expect = 600 + 10.0 * (double) (t + 1) / 1000;
            cr_assert_float_eq((double) admitted, expect, 1.0, "at %ld ms: %lu admitted",
                               (long) t, (unsigned long) admitted);
        }
    }
    cr_assert_float_eq((double) admitted, 600 + 36000, 1.0);
}

/* Tokens per minute: 90000 tpm, requests of 1500 tokens every 100 ms (15000 tpm
 * ... 900000 tpm offered): admitted tokens by T = 90000 + 1500 T / s, to within
 * one request's tokens. */
Test(api, token_bucket_admits_the_token_rate)
{
    api_bucket b;
    api_bucket_init(&b, 90000);
    uint64_t tokens = 0;
    for (int64_t t = 0; t < 600 * 1000; t += 100)
        if (api_bucket_take(&b, MS(t), 1500) == 0)
            tokens += 1500;
    cr_assert_float_eq((double) tokens, 90000 + 1500.0 * 600, 1500);
    cr_assert_eq(api_bucket_wait(&b, MS(600000), 90001), SIMTIME_NEVER);
}

Test(api, queued_requests_wait_for_the_bucket)
{
    api_bucket b;
    api_bucket_init(&b, 60);                       /* one per second, burst 60 */
    for (int i = 0; i < 60; i++)
        cr_assert_eq(api_bucket_take(&b, 0, 1), 0);
    cr_assert_eq(api_bucket_take(&b, 0, 1), 1);
    cr_assert_eq(api_bucket_wait(&b, 0, 1), MS(1000));
    cr_assert_eq(api_bucket_wait(&b, MS(400), 1), MS(600));
    cr_assert_eq(api_bucket_wait(&b, MS(400), 2), MS(1600));
    /* a queue served as the bucket allows: 100 requests leave one per second */
    simtime_t now = MS(400);
    for (int i = 0; i < 100; i++) {
        now += api_bucket_wait(&b, now, 1);
        cr_assert_eq(api_bucket_take(&b, now, 1), 0);
    }
    cr_assert_eq(now, MS(100000));
    /* unlimited */
    api_bucket u;
    api_bucket_init(&u, 0);
    cr_assert_eq(api_bucket_wait(&u, 0, 1000000), 0);
    cr_assert_eq(api_bucket_take(&u, 0, 1000000), 0);
}

static void cfg(api_cfg *c, const char *ttft, const char *tpot)
{
    memset(c, 0, sizeof *c);
    char err[128];
    cr_assert_eq(dist_parse(&c->ttft_ms, ttft, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(dist_parse(&c->tpot_ms, tpot, NULL, err, sizeof err), 0, "%s", err);
    c->price_in_per_1k = 0.005;
    c->price_out_per_1k = 0.015;
    cr_assert_eq(api_check(c, err, sizeof err), 0, "%s", err);
}

Test(api, timing_and_price_by_hand)
{
    api_cfg c;
    cfg(&c, "const(400)", "const(20)");
    gsl_rng *r = rng_stream(1, "api");
    double first, last;
    cr_assert_eq(api_sample(&c, 101, r, &first, &last), 0);
    cr_assert_float_eq(first, 400, 1e-12);
    cr_assert_float_eq(last, 400 + 100 * 20, 1e-9);
    cr_assert_eq(api_sample(&c, 1, r, &first, &last), 0);
    cr_assert_float_eq(last, 400, 1e-12);
    cr_assert_float_eq(api_price(&c, 2000, 500), 2 * 0.005 + 0.5 * 0.015, 1e-15);
    /* per-token gaps: 10 tokens of const 5 ms after the first */
    char err[128];
    cr_assert_eq(dist_parse(&c.token_ms, "const(5)", NULL, err, sizeof err), 0);
    c.has_token_ms = 1;
    cr_assert_eq(api_sample(&c, 11, r, &first, &last), 0);
    cr_assert_float_eq(last, 450, 1e-9);
    gsl_rng_free(r);
    api_cfg_free(&c);
}

/* 20000 requests at error rate 0.05: 5 binomial standard errors. */
Test(api, errors_at_their_rate)
{
    api_cfg c;
    cfg(&c, "exp(mean=300)", "const(20)");
    c.error_rate = 0.05;
    gsl_rng *r = rng_stream(2, "api");
    const int n = 20000;
    int errors = 0;
    for (int i = 0; i < n; i++) {
        double first, last;
        int e = api_sample(&c, 50, r, &first, &last);
        errors += e;
        if (e)
            cr_assert_eq(first, last);
        else
            cr_assert_gt(last, first);
    }
    cr_assert_float_eq(errors, 0.05 * n, 5 * sqrt(n * 0.05 * 0.95));
    gsl_rng_free(r);
    api_cfg_free(&c);
}

Test(api, check_rejects_bad_numbers)
{
    api_cfg c;
    cfg(&c, "const(1)", "const(1)");
    char err[128];
    c.rpm = -1;
    cr_assert_eq(api_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "rpm"), "%s", err);
    c.rpm = 10.5;
    cr_assert_eq(api_check(&c, err, sizeof err), -1);
    c.rpm = 0;
    c.tpm = 1e9;
    cr_assert_eq(api_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "tpm"), "%s", err);
    c.tpm = 0;
    c.error_rate = 1;
    cr_assert_eq(api_check(&c, err, sizeof err), -1);
    cr_assert(strstr(err, "error_rate"), "%s", err);
    c.error_rate = 0;
    c.price_out_per_1k = -0.1;
    cr_assert_eq(api_check(&c, err, sizeof err), -1);
    api_cfg_free(&c);
}
