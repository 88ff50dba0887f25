/* test_warmup_cache.c -- the automatic warm-up waits for caches to fill
 * (run/warmup.h, "caches filling"; docs/metrics.md, warmup_cache_s): the
 * settling test on synthetic hit streams, and the user's case of issue 22 (a
 * result cache's hit rate at 20 000 and 300 000 requests). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <gsl/gsl_rng.h>
#include "run/warmup.h"
#include "tbin.h"
#include "tcli.h"
#include "tsim.h"

/* Feeds a stream of lookups whose hit probability at lookup i is P(i) to a
 * settle watcher (one lookup per arrival); returns the arrival at which it
 * called the cache settled, or 0 when it had not by CAP. */
static uint64_t settle_at(double (*p)(uint64_t), uint64_t min_span, uint64_t cap, unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    settle s;
    int pool = 0;
    cr_assert_eq(settle_init(&s, 1, &pool, min_span, cap), 0);
    double v[3] = { 0, 0, 0 };
    uint64_t at = 0;
    for (uint64_t i = 1; i <= cap && !at; i++) {
        double h = gsl_rng_uniform(r) < p(i) ? 1 : 0;
        v[0] += 1;
        v[1] += h;
        v[2] += h;
        if (settle_due(&s)) {
            settle_put(&s, 0, v);
            if (settle_commit(&s, (double) i)) at = i;
        }
    }
    cr_expect(!at || s.settled_s[0] > 0, "a settled cache has its settling time");
    settle_free(&s);
    gsl_rng_free(r);
    return at;
}

static double flat(uint64_t i) { (void) i; return 0.6; }
/* A cache filling over 200 000 lookups: 0.2 rising linearly to 0.8, then flat. */
static double ramp(uint64_t i) { return i >= 200000 ? 0.8 : 0.2 + 0.6 * (double) i / 200000.0; }

Test(warmup_cache, flat_settles_ramp_waits)
{
    for (unsigned long seed = 1; seed <= 5; seed++) {
        /* A steady hit rate: settled once the quarters resolve it to 0.01
         * (2 x 0.24 / q <= 1e-4: q >= 4 800, span >= 19 200) and soon after
         * (a settled stream passes each check with probability 0.69). */
        uint64_t a = settle_at(flat, 1000, 1000000, seed);
        cr_expect(a >= 19200 && a <= 80000, "seed %lu: flat stream settled at %llu", seed, (unsigned long long) a);
        /* A rise of 0.6 over 200 000 lookups: a quarter-to-quarter rise of
         * 0.075 x (span / 100 000), far above 0.5 standard errors of 0.01 at
         * any span past 20 000: not settled before the ramp ends. */
        uint64_t b = settle_at(ramp, 1000, 1000000, seed);
        cr_expect(b > 200000, "seed %lu: a cache still filling settled at %llu", seed, (unsigned long long) b);
        /* The cap: still filling at 100 000 arrivals, not settled. */
        cr_expect_eq(settle_at(ramp, 1000, 100000, seed), 0);
        /* min_span: never before it. */
        cr_expect(settle_at(flat, 150000, 1000000, seed) >= 150000);
    }
}

/* scenarios/gateway_three_models.ini with --set S (NULL: none) and `requests = N`, seed 1. */
static void run3(uint64_t n, const char *set, sim_result *res)
{
    char req[64];
    snprintf(req, sizeof req, "sim.requests=%llu", (unsigned long long) n);
    const char *sets[2] = { req, set };
    tsim_run_file("scenarios/gateway_three_models.ini", sets, set ? 2 : 1, 1, res);
}

/* Issue 22's case: 25 % at 20k, 51 % at 300k in the user's gateway, 0.607 and
 * 0.677 here, before the warm-up waited for the cache. */
Test(warmup_cache, result_cache_20k_300k_agree)
{
    sim_result s, l, old;
    run3(20000, NULL, &s);
    run3(300000, NULL, &l);
    run3(20000, "sim.warmup=2000", &old);
    double hs = tsim_prv(tsim_pool_named(&s, "cache"), "hit_rate");
    double hl = tsim_prv(tsim_pool_named(&l, "cache"), "hit_rate");
    double ho = tsim_prv(tsim_pool_named(&old, "cache"), "hit_rate");
    /* Binomial standard errors of the two windows' hit rates (0.0033 and
     * 0.00085 at p = 0.68); 3 of their combined one: 0.0103. */
    double se = sqrt(hs * (1 - hs) / 20000.0 + hl * (1 - hl) / 300000.0);
    cr_expect(fabs(hs - hl) < 3 * se, "hit rate 20k %.4f vs 300k %.4f (se %.4f)", hs, hl, se);
    /* Without the wait (the old warm-up: 2 000 requests) the short run is far off. */
    cr_expect(hl - ho > 10 * se, "explicit warmup = 2000: %.4f vs %.4f", ho, hl);
    double cache_s = sim_result_get(&s, "", "warmup_cache_s", "value");
    cr_expect(sim_result_row(&s, "", "warmup_cache_s", "value") && sim_result_get(&s, "", "warmup_cache_capped", "value") == 0 &&
              tsim_n(&s, "warmup_requests") > 20000, "warm-up %llu", (unsigned long long) tsim_n(&s, "warmup_requests"));
    cr_expect(cache_s > 0 && cache_s <= tsim_v(&s, "warmup_s") + 1e-9);
    cr_expect_eq(tsim_prv(tsim_pool_named(&s, "cache"), "warmup_settled"), 1);
    /* An explicit warmup is kept as it was: exactly those arrivals, no wait. */
    cr_expect_eq(tsim_n(&old, "warmup_requests"), 2000);
    cr_expect_null(sim_result_row(&old, "", "warmup_cache_s", "value"), "no wait: no warmup_cache rows");
    sim_result_free(&s);
    sim_result_free(&l);
    sim_result_free(&old);
}

static void setup(void) { tcli_setup("/tmp/latsim_wucache_", NULL); }

/* A run too short for the cache: the cap, and one warning line naming it. */
Test(warmup_cache, too_short_warns_once, .init = setup, .fini = tcli_teardown)
{
    result a = run(110, "run", "scenarios/gateway_three_models.ini", "--no-store", "--json", "--set", "sim.requests=2000", NULL);
    cr_assert_eq(a.rc, 0, "%s", a.err);
    cr_expect(strstr(a.out, "\"warmup_cache_capped\": 1") != NULL, "%s", a.out);
    cr_expect(strstr(a.out, "\"warmup_requests\": 22000") != NULL, "cap = 10 x (200 + 2000)");
    const char *line = "[pool cache]: the cache's hit rate had not settled", *w = strstr(a.err, line);
    cr_expect(w != NULL, "%s", a.err);
    cr_expect(w && !strstr(w + strlen(line), "had not settled"), "one line: %s", a.err);
    cr_expect(strstr(a.err, "still rose during the measured window") == NULL, "not a second line: %s", a.err);
    result_free(&a);
    /* Long enough: no warning. */
    result b = run(110, "run", "scenarios/gateway_three_models.ini", "--no-store", "--json", NULL);
    cr_assert_eq(b.rc, 0, "%s", b.err);
    cr_expect(strstr(b.out, "\"warmup_cache_capped\": 0") != NULL);
    cr_expect(strstr(b.err, "had not settled") == NULL && strstr(b.err, "still rose") == NULL, "%s", b.err);
    result_free(&b);
    /* The cache off the requests' path (no lookups): not waited for. */
    result c = run(110, "run", "scenarios/gateway_three_models.ini", "--no-store", "--json", "--set", "pool client.next=gateway", NULL);
    cr_assert_eq(c.rc, 0, "%s", c.err);
    cr_expect(strstr(c.out, "\"warmup_requests\": 2000,") != NULL, "%s", c.out);
    cr_expect(strstr(c.out, "\"warmup_cache_capped\": 0") != NULL);
    result_free(&c);
    /* No cache at all: no warmup_cache rows. */
    result d = run(110, "run", "scenarios/default.ini", "--no-store", "--json", NULL);
    cr_assert_eq(d.rc, 0, "%s", d.err);
    cr_expect(strstr(d.out, "warmup_cache") == NULL);
    result_free(&d);
}
