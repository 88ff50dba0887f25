/* test_fleetsim.c -- fleet dynamics wired into runs (generic pools): every
 * measured request accounted for under failures (served + failed + rejected +
 * timed out = arrivals), availability against the alternating renewal process,
 * retried requests all served, autoscaled pools paying for what runs, the same
 * numbers from the same seed, and scenario errors. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"
#include "sim.h"
#include "store.h"

/* Loads TEXT, resolves it against an in-memory catalog and runs it with SEED. */
static void simulate(const char *text, uint64_t seed, sim_result *out)
{
    char err[1024] = "";
    sqlite3 *db = NULL;
    scenario sc;
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "store_open: %s", err);
    cr_assert_eq(scenario_load_text(&sc, "fleet.ini", text, NULL, 0, err, sizeof err), 0,
                 "scenario_load_text: %s\n%s", err, text);
    cr_assert_eq(scenario_resolve(&sc, db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sim_run(&sc, seed, out, err, sizeof err), 0, "sim_run: %s", err);
    scenario_free(&sc);
    store_close(db);
}

/* The error scenario TEXT gives (an empty string when it loads). */
static void load_error(const char *text, char *err, size_t n)
{
    scenario sc;
    err[0] = '\0';
    if (scenario_load_text(&sc, "bad.ini", text, NULL, 0, err, n) == 0) err[0] = '\0';
    scenario_free(&sc);
}

#define MM8 "[sim]\nrequests = 100000\nwarmup = 10000\n[workload]\nrate = 120\n" \
            "[pool cpu]\nservers = 8\nservice_ms = exp(mean=50)\n"

Test(fleetsim, nothing_lost_under_failures)
{
    sim_result r;
    /* Failures every 20 s on average per server, lost requests failed, a bounded
     * queue and a timeout: every measured request has exactly one outcome. */
    simulate(MM8 "fail_after_s = exp(mean=20)\nrepair_s = exp(mean=2)\non_failure = fail\n"
             "queue_limit = 30\ntimeout_ms = 400\n", 1, &r);
    const pool_result *p = &r.pools[0];
    double failed = pool_metric_get(p, "failed");
    cr_assert_gt(r.failed, 0);
    cr_assert_gt(r.rejected + r.timed_out, 0);
    cr_assert_eq(r.served + r.failed + r.rejected + r.timed_out, r.requests,
                 "%llu + %llu + %llu + %llu != %llu", (unsigned long long) r.served,
                 (unsigned long long) r.failed, (unsigned long long) r.rejected,
                 (unsigned long long) r.timed_out, (unsigned long long) r.requests);
    cr_assert_eq(p->served + (uint64_t) failed + p->rejected + p->timed_out, p->arrivals);
    cr_assert_eq((uint64_t) failed, r.failed);
    /* Availability: 20 / 22 for the alternating process.  About 8 x 830 s / 22 =
     * 300 cycles in the window: sd of the share up ~ sqrt(2) U R / ((U + R)^2
     * sqrt(N)) = sqrt(2) 40 / (484 sqrt(300)) = 0.0067; 4 sd = 0.027. */
    cr_assert_float_eq(pool_metric_get(p, "availability"), 20.0 / 22, 0.027,
                       "availability %g", pool_metric_get(p, "availability"));
    cr_assert_float_eq(pool_metric_get(p, "servers_up_mean"), 8 * 20.0 / 22, 8 * 0.027);
    /* Paid for: all 8 servers all the time (no autoscaling). */
    cr_assert_float_eq(pool_metric_get(p, "server_seconds"), 8 * r.window_s, 1e-6 * 8 * r.window_s);
    sim_result_free(&r);
}

Test(fleetsim, retried_requests_are_served)
{
    sim_result r, r2;
    const char *text = MM8 "fail_after_s = exp(mean=20)\nrepair_s = exp(mean=2)\non_failure = retry\n";
    simulate(text, 3, &r);
    cr_assert_eq(r.failed, 0);
    cr_assert_eq(r.served, r.requests);
    cr_assert_gt(pool_metric_get(&r.pools[0], "failures"), 100);
    /* Failures add queueing: utilisation of the up servers 120 x 0.05 / (8 x
     * 20/22) = 0.825 > 0.75 without them. */
    cr_assert_gt(r.pools[0].utilization, 0.78);
    /* The same seed gives the same run. */
    simulate(text, 3, &r2);
    cr_assert_eq(r.e2e.p99, r2.e2e.p99);
    cr_assert_eq(r.events, r2.events);
    cr_assert_eq(pool_metric_get(&r.pools[0], "failures"), pool_metric_get(&r2.pools[0], "failures"));
    sim_result_free(&r);
    sim_result_free(&r2);
}

Test(fleetsim, autoscaled_pool_pays_for_what_runs)
{
    sim_result r;
    /* Starts with 2 servers for a load that needs about 6 at 1 request per
     * server: scales up after 5 s provisioning, and down after cooldowns. */
    simulate("[sim]\nrequests = 100000\nwarmup = 1000\n[workload]\nrate = 120\n"
             "[pool cpu]\nservers = 2\nservice_ms = exp(mean=50)\nmin_replicas = 1\n"
             "max_replicas = 20\nautoscale_target = 1\nautoscale_interval_s = 5\nprovision_s = 5\n"
             "cooldown_s = 30\nusd_per_hour = 3.6\n", 1, &r);
    const pool_result *p = &r.pools[0];
    double up = pool_metric_get(p, "servers_up_mean"), paid = pool_metric_get(p, "server_seconds");
    cr_assert_gt(pool_metric_get(p, "scale_ups"), 0);
    cr_assert(up > 6 && up < 20, "up %g", up);
    /* Paid >= up x window: starting (5 s each) and draining servers are paid
     * for too.  This queue-driven scaler oscillates (about 20 scale-ups of a few
     * servers in 830 s): the extra stays well under a quarter. */
    cr_assert_geq(paid, up * r.window_s * (1 - 1e-9));
    cr_assert_lt(paid, 1.25 * up * r.window_s);
    /* $3.6 per server-hour: $0.001 per server-second. */
    cr_assert_float_eq(pool_metric_get(p, "cost_usd"), paid * 0.001, 1e-9 * paid);
    cr_assert_eq(r.served, r.requests);
    sim_result_free(&r);
}

Test(fleetsim, bad_input)
{
    char err[1024];
    load_error(MM8 "min_replicas = 9\nmax_replicas = 4\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [pool cpu] min_replicas: min_replicas 9 is above max_replicas 4");
    load_error(MM8 "max_replicas = 4\nprovision_s = -5\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:10: [pool cpu] provision_s: must be >= 0 (a delay), got -5");
    load_error(MM8 "fail_after_s = const(0)\n", err, sizeof err);
    cr_assert_neq(strstr(err, "bad.ini:9: [pool cpu] fail_after_s: mean time to failure must be > 0"), NULL, "%s", err);
    load_error(MM8 "max_replicas = 4\nautoscale = kv\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:10: [pool cpu] autoscale: kv needs a pool with a KV cache (kind = llm)");
    load_error(MM8 "cooldown_s = 10\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [pool cpu] cooldown_s: autoscaling needs min_replicas or max_replicas");
    load_error(MM8 "fail_afer_s = exp(mean=10)\n", err, sizeof err);
    cr_assert_neq(strstr(err, "unknown key"), NULL, "%s", err);
}
