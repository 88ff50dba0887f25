/* test_routeidx.c -- Criterion tests of routing's cost per request (sim/core/route.c,
 * sim/llm/llm.c): policies read only the snapshots they need (round robin and random
 * none, power_of_two two), least-loaded policies over an LLM pool's replicas use
 * an index of loads (route_index) instead of reading every replica, and the
 * index's choice is the scan's, ties included, at every request.
 *
 * Counts come from route_tally (requests routed, snapshots read); the LLM runs
 * are in-process simulations with the pool's sanity checks on (LATSIM_CHECK=1:
 * at every routed request the pool asserts that every replica's key in the
 * index is its current load and that a scan of every replica picks the same).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "core/route.h"
#include "engine/rng.h"
#include "tsim.h"

/* ---- the policies over fake targets ------------------------------------------- */

typedef struct fake {
    station_snap *snaps;      /* the targets' loads */
} fake;

static const station_snap *fake_snap(void *ctx, int i)
{
    return &((fake *) ctx)->snaps[i];
}

#define NT 10000              /* targets */

/* With 10^4 targets: per request, round robin and random read no snapshot,
 * power_of_two two, least_outstanding and least_kv none with an index and every
 * target without one. */
Test(routeidx, snapshot_reads_per_request)
{
    static station_snap snaps[NT];
    for (int i = 0; i < NT; i++) {
        snaps[i].inside = (uint64_t) (i * 7919 % 13);
        snaps[i].kv_free = (double) (i * 104729 % 101) / 100.0;
    }
    fake f = { snaps };
    static const struct { const char *name; int index; double per_request; } C[] = {
        { "round_robin", 0, 0 }, { "random", 0, 0 }, { "power_of_two", 0, 2 },
        { "least_outstanding", 1, 0 }, { "least_kv", 1, 0 },
        { "least_outstanding", 0, NT }, { "least_kv", 0, NT },
    };
    for (int c = 0; c < 7; c++) {
        const route_policy *p = route_find(C[c].name);
        cr_assert_not_null(p);
        route_ctx rc;
        cr_assert_eq(route_open(&rc, p, NT, rng_stream(1, "route test")), 0);
        route_index ix;
        cr_assert_eq(route_index_init(&ix, NT, 0), 0);
        for (int i = 0; i < NT; i++) route_index_set(&ix, i, route_key(p, &snaps[i]));
        route_view v = { fake_snap, &f, C[c].index ? &ix : NULL };
        route_counts before = route_tally;
        int requests = C[c].per_request == NT ? 100 : 100000;
        for (int k = 0; k < requests; k++) {
            int e = route_pick(&rc, NULL, &v);
            cr_assert(e >= 0 && e < NT);
        }
        cr_assert_eq(route_tally.picks - before.picks, (uint64_t) requests);
        double per = (double) (route_tally.snaps - before.snaps) / requests;
        cr_assert_eq(per, C[c].per_request, "%s%s: %g snapshots per request", C[c].name,
                     C[c].index ? " (index)" : "", per);
        route_index_free(&ix);
        route_close(&rc);
    }
}

/* Loads change at random between requests (a few targets at a time, few distinct
 * values, so that ties abound); at every request the index's choice is the scan's. */
Test(routeidx, index_picks_what_a_scan_picks)
{
    static const char *const names[] = { "least_outstanding", "least_kv" };
    static const int sizes[] = { 1, 2, 3, 7, 64, 1000, NT };
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 42);
    for (int pi = 0; pi < 2; pi++)
        for (int si = 0; si < 7; si++) {
            int n = sizes[si];
            const route_policy *p = route_find(names[pi]);
            station_snap *snaps = calloc((size_t) n, sizeof *snaps);
            cr_assert_not_null(snaps);
            for (int i = 0; i < n; i++) snaps[i].kv_free = 1;
            fake f = { snaps };
            route_ctx a, b;
            cr_assert_eq(route_open(&a, p, n, rng_stream(1, "route a")), 0);
            cr_assert_eq(route_open(&b, p, n, rng_stream(1, "route b")), 0);
            route_index ix;
            cr_assert_eq(route_index_init(&ix, n, route_key(p, &snaps[0])), 0);
            route_view with = { fake_snap, &f, &ix }, without = { fake_snap, &f, NULL };
            int requests = n == NT ? 300 : 5000;
            for (int k = 0; k < requests; k++) {
                int changes = 1 + (int) gsl_rng_uniform_int(g, 4);
                for (int c = 0; c < changes; c++) {
                    int i = (int) gsl_rng_uniform_int(g, (unsigned long) n);
                    snaps[i].inside = gsl_rng_uniform_int(g, 4);
                    snaps[i].kv_free = (double) gsl_rng_uniform_int(g, 5) / 4.0;
                    route_index_set(&ix, i, route_key(p, &snaps[i]));
                }
                int x = route_pick(&a, NULL, &with), y = route_pick(&b, NULL, &without);
                cr_assert_eq(x, y, "%s over %d targets, request %d: index %d, scan %d", names[pi], n, k, x, y);
            }
            route_index_free(&ix);
            route_close(&a);
            route_close(&b);
            free(snaps);
        }
    gsl_rng_free(g);
}

/* The index against first principles: the least key, first at or after START. */
Test(routeidx, index_first_min)
{
    route_index ix;
    cr_assert_eq(route_index_init(&ix, 5, 3), 0);
    cr_assert_eq(route_index_first_min(&ix, 0), 0);
    cr_assert_eq(route_index_first_min(&ix, 4), 4);
    route_index_set(&ix, 1, 1);
    route_index_set(&ix, 3, 1);
    cr_assert_eq(route_index_first_min(&ix, 0), 1);
    cr_assert_eq(route_index_first_min(&ix, 2), 3);
    cr_assert_eq(route_index_first_min(&ix, 4), 1);          /* wraps around */
    route_index_set(&ix, 3, -0.5);
    cr_assert_eq(route_index_first_min(&ix, 0), 3);
    cr_assert_eq(route_index_key(&ix, 3), -0.5);
    route_index_set(&ix, 3, 7);
    cr_assert_eq(route_index_first_min(&ix, 2), 1);
    route_index_free(&ix);
}

/* ---- LLM pools ------------------------------------------------------------------ */

static double metric(const sim_result *r, const char *name)
{
    cr_assert_eq(tsim_npools(r), 1);
    return tsim_pv(r, 0, name);
}

/* 10^4 replicas: snapshots read per routed request are 0 for round robin and
 * random, 2 for power_of_two, 0 for least_outstanding and least_kv (the index),
 * and 10^4 for prefix_affinity, which reads every replica's cache.  The checks
 * are off here (their per-step sum over the replicas' queues would dominate);
 * the next test runs them. */
Test(routeidx, llm_10k_replicas_reads_per_request)
{
    unsetenv("LATSIM_CHECK");
    static const struct { const char *policy; double per_request; } C[] = {
        { "round_robin", 0 }, { "random", 0 }, { "power_of_two", 2 }, { "least_outstanding", 0 },
        { "least_kv", 0 }, { "prefix_affinity", NT },
    };
    for (int c = 0; c < 6; c++) {
        char text[1024];
        snprintf(text, sizeof text, "[sim]\nrequests = %d\nwarmup = 200\nseed = 1\n[workload]\nrate = 2000\n"
                 "prompt_tokens = lognormal(mean=300, cv=1.0)\noutput_tokens = lognormal(mean=20, cv=1.0)\n"
                 "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = %d\ntruncate = yes\n"
                 "routing = %s\n%s", C[c].per_request == NT ? 300 : 3000, NT, C[c].policy,
                 C[c].per_request == NT ? "prefix_cache = yes\n" : "");
        route_counts before = route_tally;
        sim_result r;
        tsim_run("routeidx.ini", text, 1, &r);
        uint64_t picks = route_tally.picks - before.picks;
        cr_assert_geq(picks, tsim_n(&r, "requests") + tsim_n(&r, "warmup_requests"), "%s", C[c].policy);
        double per = (double) (route_tally.snaps - before.snaps) / (double) picks;
        cr_assert_eq(per, C[c].per_request, "%s: %g snapshots per request", C[c].policy, per);
        cr_assert_eq(tsim_n(&r, "served"), tsim_n(&r, "requests"), "%s", C[c].policy);
        sim_result_free(&r);
    }
}

/* A randomized run with everything that changes a replica's load: admissions,
 * completions, preemptions (a small KV cache), queue timeouts, prefix-cache hits
 * (shared system prompts) and every scheduler; with the checks on the pool
 * asserts at every request that the index is current and picks what a scan
 * picks.  Preemptions and timeouts must have happened for the run to count. */
Test(routeidx, llm_index_equals_scan_at_every_request)
{
    setenv("LATSIM_CHECK", "1", 1);
    static const char *const policies[] = { "least_outstanding", "least_kv" };
    static const char *const scheds[] = { "continuous", "chunked", "static", "dynamic" };
    for (int p = 0; p < 2; p++)
        for (int s = 0; s < 4; s++)
            for (int pfx = 0; pfx < (s < 2 ? 2 : 1); pfx++) {
                char text[1400];
                snprintf(text, sizeof text, "[sim]\nrequests = 3000\nwarmup = 300\nseed = %d\n[workload]\n"
                         "rate = 120\nprompt_tokens = lognormal(mean=800, cv=1.2)\n"
                         "output_tokens = lognormal(mean=150, cv=1.2)\n"
                         "[class a]\nshare = 1\nsystem_prompt_tokens = 512\n[class b]\nshare = 1\n"
                         "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 12\n"
                         "truncate = yes\nkv_blocks = 600\ntimeout_ms = 400\nscheduler = %s\n"
                         "max_wait_ms = 20\nrouting = %s\nprefix_cache = %s\n", 7 + s, scheds[s], policies[p],
                         pfx ? "yes" : "no");
                sim_result r;
                tsim_run("routeidx.ini", text, 1, &r);
                cr_assert_gt(tsim_n(&r, "timed_out"), 0, "%s %s: no timeouts", policies[p], scheds[s]);
                if (s < 2) cr_assert_gt(metric(&r, "preemptions"), 0, "%s %s: no preemptions", policies[p], scheds[s]);
                cr_assert_eq(tsim_n(&r, "served") + tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"),
                             tsim_n(&r, "requests"));
                sim_result_free(&r);
            }
}
