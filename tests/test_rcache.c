/* test_rcache.c -- tests of sim/gateway/rcache.c: Zipf intents, the unbounded cache's hit
 * rate against its exact expectation, the bounded cache against an independent
 * LRU simulation written here, TTL expiry, flushes and false hits.
 *
 * Statistical checks use fixed seeds and 5-standard-error tolerances, the
 * standard errors computed exactly (Zipf) or from the binomial law. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/rcache.h"
#include "core/zipf.h"
#include "engine/rng.h"

#define S(x) simtime_from_s(x)

Test(rcache, zipf_probabilities_and_frequencies)
{
    zipf *z = zipf_new(100, 1.2);
    cr_assert_not_null(z);
    double h = 0;
    for (int k = 1; k <= 100; k++)
        h += pow(k, -1.2);
    for (size_t i = 0; i < 100; i++)
        cr_assert_float_eq(zipf_prob(z, i), pow((double) (i + 1), -1.2) / h, 1e-12);
    gsl_rng *r = rng_stream(3, "intents");
    const int n = 200000;
    int first = 0, tenth = 0;
    for (int i = 0; i < n; i++) {
        size_t k = zipf_sample(z, r);
        cr_assert_lt(k, 100);
        first += k == 0;
        tenth += k == 9;
    }
    double p0 = zipf_prob(z, 0), p9 = zipf_prob(z, 9);
    cr_assert_float_eq(first, n * p0, 5 * sqrt(n * p0 * (1 - p0)));
    cr_assert_float_eq(tenth, n * p9, 5 * sqrt(n * p9 * (1 - p9)));
    gsl_rng_free(r);
    zipf_free(z);
    cr_assert_null(zipf_new(0, 1));
    cr_assert_null(zipf_new(10, 0));
    cr_assert_null(zipf_new(10, -1));
}

/* Unbounded capacity, infinite TTL: every lookup after the first of its intent
 * hits, so hits = N - D with D the number of distinct intents among N draws.
 * E[D] = sum_k 1 - (1 - p_k)^N, and Var[D] = sum_k q_k (1 - q_k)
 * + 2 sum_{j<k} [(1 - p_j - p_k)^N - q_j q_k] with q_k = (1 - p_k)^N (the
 * indicator variables "intent k never drawn"), both exact. */
Test(rcache, unbounded_hit_rate_is_the_zipf_expectation)
{
    const size_t K = 2000;
    const int N = 20000;
    zipf *z = zipf_new(K, 0.9);
    double *q = malloc(K * sizeof *q);
    double ed = 0, var = 0;
    for (size_t k = 0; k < K; k++) {
        q[k] = exp(N * log1p(-zipf_prob(z, k)));
        ed += 1 - q[k];
        var += q[k] * (1 - q[k]);
    }
    for (size_t j = 0; j < K; j++)
        for (size_t k = j + 1; k < K; k++) {
            double pj = zipf_prob(z, j), pk = zipf_prob(z, k);
            var += 2 * (exp(N * log1p(-pj - pk)) - q[j] * q[k]);
        }
    free(q);

    rcache *c = rcache_new(0, 0, NULL, 0);
    gsl_rng *r = rng_stream(11, "intents");
    int hits = 0;
    for (int i = 0; i < N; i++) {
        uint64_t key = zipf_sample(z, r);
        simtime_t now = S(i);
        rcache_result res = rcache_lookup(c, key, now, NULL);
        cr_assert_neq(res, RCACHE_FALSE_HIT);
        if (res == RCACHE_HIT)
            hits++;
        else
            cr_assert_eq(rcache_store(c, key, now, now, SIMTIME_NEVER), 0);
    }
    cr_assert(rcache_sane(c));
    double expect = N - ed;
    cr_assert_float_eq(hits, expect, 5 * sqrt(var), "hits %d, expected %.1f +- %.1f",
                       hits, expect, sqrt(var));
    cr_assert_eq(rcache_get_stats(c)->hits, (uint64_t) hits);
    cr_assert_eq(rcache_size(c), (size_t) (N - hits));
    gsl_rng_free(r);
    rcache_free(c);
    zipf_free(z);
}

/* An independent LRU: keys[0] most recent, linear search; O(capacity) per use. */
typedef struct lru_sim { uint64_t *keys; size_t n, cap; } lru_sim;

static int lru_use(lru_sim *s, uint64_t key)
{
    size_t i = 0;
    while (i < s->n && s->keys[i] != key)
        i++;
    int hit = i < s->n;
    if (!hit) {
        if (s->n == s->cap)
            s->n--;                      /* evict the least recently used */
        i = s->n++;
    }
    memmove(s->keys + 1, s->keys, i * sizeof *s->keys);
    s->keys[0] = key;
    return hit;
}

Test(rcache, capacity_matches_an_independent_lru)
{
    const size_t cap = 150;
    zipf *z = zipf_new(3000, 1.0);
    rcache *c = rcache_new(cap, 0, NULL, 0);
    lru_sim s = {calloc(cap, sizeof(uint64_t)), 0, cap};
    gsl_rng *r = rng_stream(5, "intents");
    int hits = 0;
    for (int i = 0; i < 50000; i++) {
        uint64_t key = zipf_sample(z, r);
        simtime_t now = S(i);
        int expect = lru_use(&s, key);
        rcache_result res = rcache_lookup(c, key, now, NULL);
        cr_assert_eq(res == RCACHE_HIT, expect, "request %d key %lu", i, (unsigned long) key);
        if (res == RCACHE_MISS)
            cr_assert_eq(rcache_store(c, key, now, now, SIMTIME_NEVER), 0);
        hits += expect;
        cr_assert_leq(rcache_size(c), cap);
        if (i % 997 == 0)
            cr_assert(rcache_sane(c));
    }
    cr_assert_gt(hits, 0);
    cr_assert_eq(rcache_get_stats(c)->evictions, rcache_get_stats(c)->stores - cap);
    free(s.keys);
    gsl_rng_free(r);
    rcache_free(c);
    zipf_free(z);
}

Test(rcache, ttl_expiry)
{
    rcache *c = rcache_new(0, 0, NULL, 0);
    cr_assert_eq(rcache_store(c, 1, 0, 0, S(10)), 0);           /* fact: 10 s here */
    cr_assert_eq(rcache_store(c, 2, 0, 0, 0), 0);               /* time-sensitive: never */
    cr_assert_eq(rcache_store(c, 3, 0, 0, SIMTIME_NEVER), 0);
    cr_assert_eq(rcache_size(c), 2);
    cr_assert_eq(rcache_lookup(c, 2, 1, NULL), RCACHE_MISS);
    cr_assert_eq(rcache_lookup(c, 1, S(10) - 1, NULL), RCACHE_HIT);
    cr_assert_eq(rcache_lookup(c, 1, S(10), NULL), RCACHE_MISS);  /* expires at 10 s */
    cr_assert_eq(rcache_get_stats(c)->expired, 1);
    cr_assert_eq(rcache_size(c), 1);
    cr_assert_eq(rcache_lookup(c, 3, S(1e9), NULL), RCACHE_HIT);
    /* a hit does not extend the TTL; a new store does */
    cr_assert_eq(rcache_store(c, 1, S(20), S(20), S(10)), 0);
    cr_assert_eq(rcache_lookup(c, 1, S(25), NULL), RCACHE_HIT);
    cr_assert_eq(rcache_lookup(c, 1, S(30), NULL), RCACHE_MISS);
    cr_assert_eq(rcache_store(c, 1, S(31), S(31), S(10)), 0);
    cr_assert_eq(rcache_store(c, 1, S(35), S(35), S(10)), 0);
    cr_assert_eq(rcache_lookup(c, 1, S(44), NULL), RCACHE_HIT);
    cr_assert(rcache_sane(c));
    rcache_free(c);
}

Test(rcache, flushes_empty_it_and_retire_old_answers)
{
    simtime_t flush[] = {S(5), S(8)};
    rcache *c = rcache_new(0, 0, flush, 2);
    for (uint64_t k = 0; k < 100; k++)
        cr_assert_eq(rcache_store(c, k, 0, S(1), SIMTIME_NEVER), 0);
    cr_assert_eq(rcache_lookup(c, 7, S(4), NULL), RCACHE_HIT);
    cr_assert_eq(rcache_lookup(c, 7, S(5), NULL), RCACHE_MISS);
    cr_assert_eq(rcache_size(c), 0);
    cr_assert_eq(rcache_get_stats(c)->flushes, 1);
    /* asked before the flush, answered after it: the old model's answer is not kept */
    cr_assert_eq(rcache_store(c, 7, S(4.5), S(6), SIMTIME_NEVER), 0);
    cr_assert_eq(rcache_get_stats(c)->stale_stores, 1);
    cr_assert_eq(rcache_lookup(c, 7, S(6), NULL), RCACHE_MISS);
    cr_assert_eq(rcache_store(c, 7, S(5), S(6), SIMTIME_NEVER), 0);
    cr_assert_eq(rcache_lookup(c, 7, S(7), NULL), RCACHE_HIT);
    /* a store that is the first call after the second flush applies it first */
    cr_assert_eq(rcache_store(c, 8, S(9), S(9), SIMTIME_NEVER), 0);
    cr_assert_eq(rcache_get_stats(c)->flushes, 2);
    cr_assert_eq(rcache_size(c), 1);
    cr_assert(rcache_sane(c));
    rcache_free(c);
    simtime_t bad[] = {S(8), S(5)};
    cr_assert_null(rcache_new(0, 0, bad, 2));
    cr_assert_null(rcache_new(0, 1.5, NULL, 0));
    cr_assert_null(rcache_new(0, -0.1, NULL, 0));
}

/* Lookups of never-repeated keys in a non-empty cache: each is a false hit with
 * probability 0.1; 20000 of them, tolerance 5 binomial standard errors. */
Test(rcache, false_hits_at_their_rate)
{
    rcache *c = rcache_new(10, 0.1, NULL, 0);
    gsl_rng *r = rng_stream(9, "cache");
    cr_assert_eq(rcache_lookup(c, 1, 0, r), RCACHE_MISS);    /* empty: never false */
    cr_assert_eq(rcache_store(c, 0, 0, 0, SIMTIME_NEVER), 0);
    const int n = 20000;
    int f = 0;
    for (int i = 0; i < n; i++)
        f += rcache_lookup(c, 1000 + (uint64_t) i, 1, r) == RCACHE_FALSE_HIT;
    cr_assert_float_eq(f, 0.1 * n, 5 * sqrt(n * 0.1 * 0.9));
    cr_assert_eq(rcache_get_stats(c)->false_hits, (uint64_t) f);
    gsl_rng_free(r);
    rcache_free(c);
}
