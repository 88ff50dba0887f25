/* test_fleetsim.c -- fleet dynamics wired into runs (generic pools): every
 * measured request accounted for under failures (served + failed + rejected +
 * timed out = arrivals), availability against the alternating renewal process,
 * retried requests all served, autoscaled pools paying for what runs, the same
 * numbers from the same seed, and scenario errors. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "run/scenario.h"
#include "run/sim.h"
#include "store/store.h"
#include "tbin.h"
#include "tsim.h"

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
    tsim_pr p = tsim_pool_at(&r, 0);
    double failed = tsim_prv(p, "failed");
    cr_assert_gt(tsim_n(&r, "failed"), 0);
    cr_assert_gt(tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"), 0);
    cr_assert_eq(tsim_n(&r, "served") + tsim_n(&r, "failed") + tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"),
                 tsim_n(&r, "requests"),
                 "%llu + %llu + %llu + %llu != %llu", (unsigned long long) tsim_n(&r, "served"),
                 (unsigned long long) tsim_n(&r, "failed"), (unsigned long long) tsim_n(&r, "rejected"),
                 (unsigned long long) tsim_n(&r, "timed_out"), (unsigned long long) tsim_n(&r, "requests"));
    cr_assert_eq(tsim_prv(p, "served") + (uint64_t) failed + tsim_prv(p, "rejected") + tsim_prv(p, "timed_out"), tsim_prv(p, "arrivals"));
    cr_assert_eq((uint64_t) failed, tsim_n(&r, "failed"));
    /* Availability: 20 / 22 for the alternating process.  About 8 x 830 s / 22 =
     * 300 cycles in the window: sd of the share up ~ sqrt(2) U R / ((U + R)^2
     * sqrt(N)) = sqrt(2) 40 / (484 sqrt(300)) = 0.0067; 4 sd = 0.027. */
    cr_assert_float_eq(tsim_prv(p, "availability"), 20.0 / 22, 0.027,
                       "availability %g", tsim_prv(p, "availability"));
    cr_assert_float_eq(tsim_prv(p, "servers_up_mean"), 8 * 20.0 / 22, 8 * 0.027);
    /* Paid for: the servers running, i.e. up (no cold start: a repaired server is
     * up at once); with paid_while_down, all 8 all the time (no autoscaling). */
    cr_assert_float_eq(tsim_prv(p, "server_seconds"),
                       tsim_prv(p, "servers_up_mean") * tsim_v(&r, "window_s"),
                       1e-6 * 8 * tsim_v(&r, "window_s"));
    sim_result_free(&r);
    simulate(MM8 "fail_after_s = exp(mean=20)\nrepair_s = exp(mean=2)\non_failure = fail\n"
             "queue_limit = 30\ntimeout_ms = 400\npaid_while_down = yes\n", 1, &r);
    cr_assert_float_eq(tsim_pv(&r, 0, "server_seconds"), 8 * tsim_v(&r, "window_s"),
                       1e-6 * 8 * tsim_v(&r, "window_s"));
    sim_result_free(&r);
}

Test(fleetsim, retried_requests_are_served)
{
    sim_result r, r2;
    const char *text = MM8 "fail_after_s = exp(mean=20)\nrepair_s = exp(mean=2)\non_failure = retry\n";
    simulate(text, 3, &r);
    cr_assert_eq(tsim_n(&r, "failed"), 0);
    cr_assert_eq(tsim_n(&r, "served"), tsim_n(&r, "requests"));
    cr_assert_gt(tsim_pv(&r, 0, "failures"), 100);
    /* Failures add queueing: utilisation of the up servers 120 x 0.05 / (8 x
     * 20/22) = 0.825 > 0.75 without them. */
    cr_assert_gt(tsim_pv(&r, 0, "busy_share"), 0.78);
    /* The same seed gives the same run. */
    simulate(text, 3, &r2);
    cr_assert_eq(tsim_sys(&r, "e2e")->p99, tsim_sys(&r2, "e2e")->p99);
    cr_assert_eq(tsim_n(&r, "events"), tsim_n(&r2, "events"));
    cr_assert_eq(tsim_pv(&r, 0, "failures"), tsim_pv(&r2, 0, "failures"));
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
    tsim_pr p = tsim_pool_at(&r, 0);
    double up = tsim_prv(p, "servers_up_mean"), paid = tsim_prv(p, "server_seconds");
    cr_assert_gt(tsim_prv(p, "scale_ups"), 0);
    cr_assert(up > 6 && up < 20, "up %g", up);
    /* Paid >= up x window: starting (5 s each) and draining servers are paid
     * for too.  This queue-driven scaler oscillates (about 20 scale-ups of a few
     * servers in 830 s): the extra stays well under a quarter. */
    cr_assert_geq(paid, up * tsim_v(&r, "window_s") * (1 - 1e-9));
    cr_assert_lt(paid, 1.25 * up * tsim_v(&r, "window_s"));
    /* $3.6 per server-hour: $0.001 per server-second. */
    cr_assert_float_eq(tsim_prv(p, "cost_usd"), paid * 0.001, 1e-9 * paid);
    cr_assert_eq(tsim_n(&r, "served"), tsim_n(&r, "requests"));
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

/* ---- the time series of a run ---------------------------------------------- */

#include "report/tsalert.h"
#include "run/tseries.h"

static void simulate_ts(const char *text, double interval_s, sim_result *out)
{
    char err[1024] = "";
    sqlite3 *db = NULL;
    scenario sc;
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_load_text(&sc, "ts.ini", text, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(&sc, db, err, sizeof err), 0, "%s", err);
    sc.ts_interval_s = interval_s;
    cr_assert_eq(sim_run(&sc, 1, out, err, sizeof err), 0, "sim_run: %s", err);
    scenario_free(&sc);
    store_close(db);
}

Test(fleetsim, time_series_changes_no_number)
{
    sim_result a, b;
    simulate_ts(MM8, 0, &a);
    simulate_ts(MM8, 10, &b);
    cr_assert_null(a.ts);
    cr_assert_not_null(b.ts);
    /* Only the count of events differs (one per interval boundary). */
    cr_assert_eq(tsim_sys(&a, "e2e")->p99, tsim_sys(&b, "e2e")->p99);
    cr_assert_eq(tsim_sys(&a, "e2e")->mean, tsim_sys(&b, "e2e")->mean);
    cr_assert_eq(tsim_n(&a, "served"), tsim_n(&b, "served"));
    cr_assert_eq(tsim_v(&a, "window_s"), tsim_v(&b, "window_s"));
    size_t n = ts_count(b.ts);
    const ts_row *r = ts_rows(b.ts);
    cr_assert_eq(tsim_n(&b, "events") - tsim_n(&a, "events"), n - 1,
                 "one event per closed interval (the last closes at the end)");
    /* Contiguous intervals from 0 to the end of the run; every arrival and every
     * request served counted once (warm-up included). */
    uint64_t arrivals = 0, served = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(r[i].t0_s, i * 10.0);
        cr_assert_eq(r[i].t1_s, i + 1 < n ? (i + 1) * 10.0 : tsim_v(&b, "sim_time_s"));
        arrivals += r[i].arrivals;
        served += r[i].served;
        cr_assert_eq(r[i].replicas, 8);
    }
    cr_assert_geq(arrivals, tsim_n(&b, "requests") + 10000);
    cr_assert_geq(served, tsim_n(&b, "served"));
    cr_assert_leq(served, arrivals);
    /* Utilisation per interval around 120 x 0.05 / 8 = 0.75: the mean over the
     * intervals is within 0.02 of it (about 90 intervals of 1200 requests). */
    double u = 0;
    for (size_t i = 0; i + 1 < n; i++) u += r[i].utilization;
    cr_assert_float_eq(u / (double) (n - 1), 0.75, 0.02);
    sim_result_free(&a);
    sim_result_free(&b);
}

Test(fleetsim, alerts_from_the_slo_terms)
{
    /* A synthetic series: P99 of E2E 900 ms in intervals 4..23 (20 intervals),
     * 500 ms elsewhere; TTFT not measured.  [slo] e2e_p99_ms = 800 fires at the
     * end of interval 4 + 15 - 1 = 18 (t = 19 x 60 s) and ends at 24 x 60 s. */
    ts_row rows[40];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 40; i++) {
        rows[i].t0_s = 60.0 * i;
        rows[i].t1_s = 60.0 * (i + 1);
        rows[i].e2e_p99_ms = i >= 4 && i < 24 ? 900 : 500;
        rows[i].e2e_p50_ms = 100;
        rows[i].ttft_p99_ms = NAN;
    }
    cfg c;
    char err[512];
    cr_assert_eq(cfg_load_string(&c, "s.ini", "[slo]\ne2e_p99_ms = 800\ne2e_p50_ms = 200\nerror_rate = 0.01\n",
                                 err, sizeof err), 0, "%s", err);
    slo_spec slo;
    cr_assert_eq(slo_parse(&c, 0, NULL, 0, &slo, err, sizeof err), 0, "%s", err);
    cr_assert_eq(ts_alert_terms(&slo), 2);
    ts_alert *a;
    size_t n;
    cr_assert_eq(ts_alerts(rows, 40, &slo, 15, &a, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(a[0].series, "e2e_p99_ms");
    cr_assert_eq(a[0].since_s, 240);
    cr_assert_eq(a[0].fired_s, 19 * 60);
    cr_assert_eq(a[0].until_s, 24 * 60);
    cr_assert_eq(a[0].open, 0);
    free(a);
    /* 14 intervals above: no alert. */
    for (int i = 18; i < 24; i++) rows[i].e2e_p99_ms = 500;
    cr_assert_eq(ts_alerts(rows, 40, &slo, 15, &a, &n), 0);
    cr_assert_eq(n, 0);
    slo_free(&slo);
    cfg_free(&c);
}

/* ---- LLM pools ---------------------------------------------------------------- */

#define LLM4 "[sim]\nrequests = 6000\nwarmup = 600\n[workload]\nrate = 20\n" \
             "prompt_tokens = lognormal(mean=800, cv=1.0)\noutput_tokens = lognormal(mean=200, cv=1.0)\n" \
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 4\nmax_seq_len = 8192\ntruncate = yes\n"

Test(fleetsim, llm_replicas_fail_nothing_lost)
{
    sim_result r;
    setenv("LATSIM_CHECK", "1", 1);   /* the replicas' sanity checks at every step */
    simulate(LLM4 "fail_after_s = exp(mean=60)\nrepair_s = exp(mean=20)\non_failure = fail\n", 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    cr_assert_gt(tsim_n(&r, "failed"), 0);
    cr_assert_eq(tsim_n(&r, "served") + tsim_n(&r, "failed") + tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"),
                 tsim_n(&r, "requests"));
    cr_assert_eq(tsim_prv(p, "served") + (uint64_t) tsim_prv(p, "failed") + tsim_prv(p, "rejected") + tsim_prv(p, "timed_out"), tsim_prv(p, "arrivals"));
    cr_assert_lt(tsim_prv(p, "availability"), 1);
    sim_result_free(&r);
    simulate(LLM4 "fail_after_s = exp(mean=60)\nrepair_s = exp(mean=20)\non_failure = retry\n", 1, &r);
    cr_assert_eq(tsim_n(&r, "failed"), 0);
    cr_assert_eq(tsim_n(&r, "served"), tsim_n(&r, "requests"));
    cr_assert_gt(tsim_pv(&r, 0, "failures"), 0);
    unsetenv("LATSIM_CHECK");
    sim_result_free(&r);
}

Test(fleetsim, llm_autoscaled_cost_is_replica_seconds)
{
    sim_result r;
    simulate(LLM4 "max_replicas = 8\nmin_replicas = 1\nautoscale = kv\nautoscale_target = 0.05\n"
             "provision_s = 20\ncooldown_s = 60\nstorage = nvme\ncold_factor = 3\ncold_requests = 5\n", 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    double rs = tsim_prv(p, "replica_seconds");
    cr_assert_gt(tsim_prv(p, "scale_ups") + tsim_prv(p, "scale_downs"), 0);
    /* The H100's catalog price per GPU-hour, one GPU per replica: cost is the
     * integral of running replicas times it. */
    double price = tsim_prv(p, "cost_per_hour") * tsim_v(&r, "window_s") / rs;
    cr_assert_gt(price, 0);
    cr_assert_float_eq(tsim_prv(p, "cost_usd"), rs * price / 3600, 1e-9 * rs * price);
    cr_assert_geq(rs, tsim_prv(p, "replicas_up_mean") * tsim_v(&r, "window_s") * (1 - 1e-9));
    cr_assert_eq(tsim_n(&r, "served") + tsim_n(&r, "rejected"), tsim_n(&r, "requests"));
    sim_result_free(&r);
}

Test(fleetsim, llm_batch_schedulers_refused)
{
    char err[1024];
    load_error(LLM4 "scheduler = static\nfail_after_s = exp(mean=60)\n", err, sizeof err);
    cr_assert_neq(strstr(err, "[pool chat] fail_after_s: replica failures, autoscaling and cold starts are modelled for "
                         "scheduler = continuous or chunked"), NULL, "%s", err);
}

/* ---- clients: timeouts and retries ------------------------------------------------ */

#define CLIENT(rate, retries) "[sim]\nrequests = 40000\nwarmup = 4000\n[workload]\nrate = " rate "\n" \
    "[pool cpu]\nservers = 8\nservice_ms = exp(mean=50)\n" \
    "[client]\ntimeout_ms = 300\nretries = " retries "\nbackoff_ms = 50\n"

Test(fleetsim, retries_counted_and_visible_in_offered_load)
{
    sim_result r, again;
    /* 8 servers at 0.8: a few waits pass 300 ms, and those are retried. */
    simulate(CLIENT("128", "3"), 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    double retries = sim_result_get(&r, "", "retries", "value"), attempts = sim_result_get(&r, "", "attempts", "value");
    double wasted = sim_result_get(&r, "", "wasted", "value");
    cr_assert_gt(retries, 0);
    cr_assert_eq(attempts, (double) tsim_n(&r, "requests") + retries);
    cr_assert_eq((double) tsim_prv(p, "arrivals"), attempts, "every attempt enters the pool");
    cr_assert_eq(tsim_n(&r, "served") + tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"), tsim_n(&r, "requests"));
    /* Abandoned attempts are still served (for nothing). */
    cr_assert_gt(wasted, 0);
    cr_assert_eq((double) tsim_prv(p, "served"), (double) tsim_n(&r, "served") + wasted + ((double) tsim_prv(p, "arrivals") - attempts));
    /* The offered load is measured from the pool's inflow, retries included. */
    cr_assert_float_eq(tsim_prv(p, "offered_load"), (double) tsim_prv(p, "arrivals") / tsim_v(&r, "window_s") * 0.05 / 8,
                       0.05 * tsim_prv(p, "offered_load"));
    simulate(CLIENT("128", "3"), 1, &again);
    cr_assert_eq(retries, sim_result_get(&again, "", "retries", "value"));
    cr_assert_eq(tsim_sys(&r, "e2e")->p99, tsim_sys(&again, "e2e")->p99);
    sim_result_free(&r);
    sim_result_free(&again);
}

Test(fleetsim, retry_storm)
{
    sim_result calm, storm;
    /* At 0.94 (rate 150), waits often pass 300 ms.  Without retries the
     * clients give up (timed out) and the servers keep up; with 3 retries the
     * abandoned attempts stay queued while their retries join them: the
     * offered load passes 1 and the run saturates (a metastable retry storm). */
    simulate(CLIENT("150", "0"), 1, &calm);
    simulate(CLIENT("150", "3"), 1, &storm);
    cr_assert_eq(tsim_sat(&calm), 0);
    cr_assert_gt(tsim_n(&calm, "timed_out"), 0);
    cr_assert_eq(tsim_sat(&storm), 1);
    cr_assert_gt(tsim_pv(&storm, 0, "offered_load"), 1.5, "offered load %g", tsim_pv(&storm, 0, "offered_load"));
    double attempts = sim_result_get(&storm, "", "attempts", "value");
    cr_assert_gt(attempts, 2.0 * (double) tsim_n(&storm, "requests"));
    cr_assert_eq(attempts, (double) tsim_n(&storm, "requests") + sim_result_get(&storm, "", "retries", "value"));
    sim_result_free(&calm);
    sim_result_free(&storm);
}

Test(fleetsim, client_bad_input)
{
    char err[1024];
    load_error(MM8 "[client]\nretries = 2\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:10: [client] retries: retries need a timeout_ms to give up on an attempt");
    load_error(MM8 "[client]\ntimeout_ms = 100\nbackoff_ms = -5\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:11: [client] backoff_ms: must be >= 0 (a delay), got -5");
    load_error(MM8 "[client]\ntimeout_ms = 100\nretrys = 1\n", err, sizeof err);
    cr_assert_neq(strstr(err, "did you mean 'retries'"), NULL, "%s", err);
}

/* ---- slow servers, pauses, CPU contention --------------------------------------- */

Test(fleetsim, slow_servers_and_pauses)
{
    sim_result r;
    /* Every server slow by 2: the mean service is 100 ms (SE 100 / sqrt(1e5) =
     * 0.32 ms; 4 SE = 1.3 ms). */
    simulate("[sim]\nrequests = 100000\n[workload]\nrate = 50\n[pool cpu]\nservers = 8\n"
             "service_ms = exp(mean=50)\nslow_fraction = 1\nslow_factor = 2\n", 1, &r);
    cr_assert_float_eq(tsim_sys(&r, "service")->mean, 100, 1.3);
    sim_result_free(&r);
    /* A pause of 200 ms about every 10.2 s of each server: a service of 50 ms
     * meets one with probability 0.05 / 10.2, so the mean service grows by
     * 0.98 ms (SE of the mean about 0.16 ms + the pauses' own spread). */
    simulate("[sim]\nrequests = 100000\n[workload]\nrate = 100\n[pool cpu]\nservers = 8\n"
             "service_ms = exp(mean=50)\npause_every_s = exp(mean=10)\npause_s = const(0.2)\n", 1, &r);
    cr_assert(tsim_sys(&r, "service")->mean > 50.3 && tsim_sys(&r, "service")->mean < 51.7, "service mean %g",
              tsim_sys(&r, "service")->mean);
    sim_result_free(&r);
}

Test(fleetsim, cpu_contention_cliff)
{
    sim_result below, above;
    const char *curve = "cpu_contention = 0:1, 0.7:1, 0.8:3, 1:5\n";
    char text[512];
    /* At 62.5 % the 10 s mean utilisation stays below the knee at 70 %: factor
     * 1, the service times of the pool without contention. */
    snprintf(text, sizeof text, "[sim]\nrequests = 100000\nwarmup = 10000\n[workload]\nrate = 100\n"
             "[pool cpu]\nservers = 8\nservice_ms = exp(mean=50)\n%s", curve);
    simulate(text, 1, &below);
    cr_assert_eq(tsim_sat(&below), 0);
    cr_assert_float_eq(tsim_sys(&below, "service")->mean, 50, 0.7);
    /* At 72 %, past the knee, the overhead share (25 %) grows 1.4-5x, which
     * raises the utilisation further: the pool tips into overload. */
    snprintf(text, sizeof text, "[sim]\nrequests = 100000\nwarmup = 10000\n[workload]\nrate = 115\n"
             "[pool cpu]\nservers = 8\nservice_ms = exp(mean=50)\n%s", curve);
    simulate(text, 1, &above);
    cr_assert_eq(tsim_sat(&above), 1);
    cr_assert_gt(tsim_sys(&above, "service")->n ? tsim_sys(&above, "service")->mean : 60, 55);
    sim_result_free(&below);
    sim_result_free(&above);
    char err[1024];
    load_error(MM8 "cpu_contention = 0:1, 0.8:3, 0.9:2\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [pool cpu] cpu_contention: not increasing: factor 2 at 0.9 is below 3 at 0.8");
    load_error(MM8 "pause_every_s = exp(mean=10)\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:6: [pool cpu] pause_s: missing: pause_every_s needs pause_s (the length of a pause)");
    load_error(MM8 "slow_fraction = 1.5\n", err, sizeof err);
    cr_assert_neq(strstr(err, "[pool cpu] slow_fraction: must be a share in [0, 1]"), NULL, "%s", err);
}

Test(fleetsim, failures_beyond_the_clock_never_come)
{
    sim_result a, b;
    /* A mean time to failure of 10^12 s: every draw is past the clock's 146
     * years, so no failure happens and the run is the plain M/M/8's. */
    simulate(MM8, 1, &a);
    simulate(MM8 "fail_after_s = exp(mean=1e12)\n", 1, &b);
    cr_assert_eq(tsim_pv(&b, 0, "failures"), 0);
    cr_assert_eq(tsim_sys(&a, "e2e")->p99, tsim_sys(&b, "e2e")->p99);
    cr_assert_eq(tsim_n(&a, "served"), tsim_n(&b, "served"));
    sim_result_free(&a);
    sim_result_free(&b);
}

Test(fleetsim, cold_and_warm_reported_apart)
{
    sim_result r;
    /* Servers restart after every failure; their first 10 requests take 4x: the
     * cold requests' E2E is reported apart from the warm ones'. */
    simulate(MM8 "fail_after_s = exp(mean=30)\nrepair_s = const(1)\nstartup_s = 2\ncold_factor = 4\n"
             "cold_requests = 10\n", 1, &r);
    double cold = sim_result_get(&r, "", "served_cold", "value"), warm = sim_result_get(&r, "", "served_warm", "value");
    cr_assert_eq(cold, tsim_pv(&r, 0, "cold_served"));
    cr_assert_eq(cold + warm, (double) tsim_n(&r, "served"));
    cr_assert_gt(cold, 1000);
    /* A cold service is 4 x 50 ms on average: well above the warm E2E. */
    cr_assert_gt(sim_result_get(&r, "", "e2e_cold", "mean"), 2 * sim_result_get(&r, "", "e2e_warm", "mean"));
    sim_result_free(&r);
    /* LLM replicas: TTFT apart too, for the same requests as E2E.  A cold
     * replica's steps take 3x, so its prefill does (TTFT well above warm). */
    simulate("[sim]\nrequests = 6000\n[workload]\nrate = 8\nprompt_tokens = const(2000)\noutput_tokens = const(50)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 2\nfail_after_s = exp(mean=60)\n"
             "repair_s = const(1)\nstorage = nvme\ncold_factor = 3\ncold_requests = 20\n", 1, &r);
    /* The latencies' summaries ride on their "mean" rows. */
    const sim_row *tc = sim_result_row(&r, "", "ttft_cold", "mean"), *tw = sim_result_row(&r, "", "ttft_warm", "mean");
    cr_assert(tc && tc->dist && tw && tw->dist, "an LLM pool with cold starts reports ttft_cold and ttft_warm");
    cr_assert_eq((double) tc->dist->n, sim_result_get(&r, "", "served_cold", "value"));
    cr_assert_eq((double) tw->dist->n, sim_result_get(&r, "", "served_warm", "value"));
    cr_assert_gt(tc->dist->n, 100);
    cr_assert_gt(tc->value, 2 * tw->value, "cold %g warm %g", tc->value, tw->value);
    sim_result_free(&r);
}

/* ---- the time series through the program: CSV, database, plot ------------------- */

#include <sys/wait.h>
#include <unistd.h>

/* Runs the shell command CMD; returns its exit status. */
static int sh(const char *cmd)
{
    int st = system(cmd);
    cr_assert_neq(st, -1, "system() failed");
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(fleetsim, timeseries_csv_db_and_plot)
{
    char dir[] = "/tmp/latsim_ts_XXXXXX", cmd[1024];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, LATSIM_SH " run scenarios/fleet_failures.ini --set sim.requests=50000 --db %s/t.db "
             "--timeseries %s/t.csv --interval 60s --alert-intervals 2 > %s/out.txt 2>&1", dir, dir, dir);
    cr_assert_eq(sh(cmd), 0);
    /* The CSV has a header and one line per stored row. */
    snprintf(cmd, sizeof cmd, "test \"$(($(wc -l < %s/t.csv) - 1))\" = \"$(sqlite3 %s/t.db "
             "'SELECT count(*) FROM run_timeseries WHERE run_id = 1' 2>/dev/null || echo none)\" || "
             "command -v sqlite3 >/dev/null || exit 0", dir, dir);
    cr_assert_eq(sh(cmd), 0, "CSV lines and database rows differ");
    snprintf(cmd, sizeof cmd, "grep -q '^alerts (above the SLO for 2 consecutive intervals of 60 s)' %s/out.txt", dir);
    cr_assert_eq(sh(cmd), 0, "the report lists the alerts");
    cr_assert_eq(sh("command -v gnuplot >/dev/null"), 0, "gnuplot (gnuplot-nox) is a dependency: make deps");
    snprintf(cmd, sizeof cmd, LATSIM_SH " plot 1 --kind timeseries --db %s/t.db --out %s/t.png >/dev/null 2>&1", dir, dir);
    cr_assert_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "head -c 8 %s/t.png | od -An -tx1 | tr -d ' \\n' | grep -q '^89504e470d0a1a0a$'", dir);
    cr_assert_eq(sh(cmd), 0, "not a PNG");
    /* A run without a time series: a one-line error, exit 2. */
    snprintf(cmd, sizeof cmd, LATSIM_SH " run scenarios/default.ini --set sim.requests=1000 --db %s/t.db >/dev/null 2>&1 && "
             LATSIM_SH " plot 2 --kind timeseries --db %s/t.db --out %s/u.png 2>%s/err.txt; test $? = 2 && "
             "grep -q 'has no time series' %s/err.txt", dir, dir, dir, dir, dir);
    cr_assert_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
}

Test(fleetsim, failed_per_class)
{
    sim_result r;
    simulate(MM8 "fail_after_s = exp(mean=20)\nrepair_s = exp(mean=2)\non_failure = fail\n"
             "[class a]\nshare = 3\n[class b]\nshare = 1\n", 1, &r);
    cr_assert_eq(tsim_nclasses(&r), 2);
    double failed = 0;
    for (int c = 0; c < 2; c++) {
        const char *k = tsim_class_name(&r, c);
        double f = tsim_class(&r, k, "failed");
        cr_assert_eq(tsim_class(&r, k, "served") + f + tsim_class(&r, k, "rejected") + tsim_class(&r, k, "timed_out"),
                     tsim_class(&r, k, "requests"), "class %s", k);
        failed += f;
    }
    cr_assert_gt(failed, 0);
    cr_assert_eq(failed, (double) tsim_n(&r, "failed"));
    sim_result_free(&r);
}

Test(fleetsim, scale_to_zero_and_back)
{
    sim_result r;
    /* 20 requests/s, almost nothing for 10 minutes, then 20 again: a utilisation
     * autoscaler with min_replicas = 0 goes to zero servers and must come back
     * for the requests that arrive meanwhile (no server busy is still load). */
    simulate_ts("[sim]\nrequests = 20000\nwarmup = 100\n[workload]\nrate = schedule(0s:20, 5m:0.01, 15m:20)\n"
                "[pool cpu]\nservers = 1\nservice_ms = exp(mean=50)\nmin_replicas = 0\nmax_replicas = 4\n"
                "autoscale = utilization\nautoscale_target = 0.5\ncooldown_s = 30\nprovision_s = 5\n", 60, &r);
    cr_assert_eq(tsim_n(&r, "served"), tsim_n(&r, "requests"));
    cr_assert_gt(tsim_pv(&r, 0, "scale_downs"), 0);
    cr_assert_gt(tsim_pv(&r, 0, "scale_ups"), 0);
    /* In the quiet minutes the pool spends most of its time at zero servers. */
    const ts_row *row = ts_rows(r.ts);
    int quiet = 0;
    for (size_t i = 7; i < 14 && i < ts_count(r.ts); i++) quiet += row[i].replicas < 0.5;
    cr_assert_geq(quiet, 4, "intervals 7-13 min mostly at zero servers");
    sim_result_free(&r);
}

/* A generic pool's cold start loads weights_gb from storage: one server fails at
 * 100 s, is repaired in 10 s and loads 2.1 GB at 1.05 GB/s (2 s) before serving
 * again.  The request arriving at 100 s (constant arrivals every 100 ms) waits
 * exactly 12 s; the server is paid for while starting, not while down (10 s),
 * unless paid_while_down; it is unavailable for the 12 s. */
Test(fleetsim, generic_cold_start_loads_its_weights)
{
    static const char *text =
        "[sim]\nrequests = 2000\nwarmup = 10\n[workload]\narrival = constant\nrate = 10\n"
        "[pool cpu]\nservers = 1\nservice_ms = const(1)\nfail_after_s = const(100)\nrepair_s = const(10)\n"
        "storage_gbs = 1.05\nweights_gb = 2.1\n%s";
    char t[512];
    sim_result r;
    snprintf(t, sizeof t, text, "");
    simulate(t, 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    cr_assert_float_eq(tsim_prl(p, "queue")->max, 12000, 1e-6, "max wait %g ms", tsim_prl(p, "queue")->max);
    cr_assert_float_eq(tsim_prv(p, "server_seconds"), tsim_v(&r, "window_s") - 10, 1e-6);
    cr_assert_float_eq(tsim_prv(p, "availability"), (tsim_v(&r, "window_s") - 12) / tsim_v(&r, "window_s"),
                       1e-5);
    sim_result_free(&r);
    snprintf(t, sizeof t, text, "paid_while_down = yes\n");
    simulate(t, 1, &r);
    cr_assert_float_eq(tsim_pv(&r, 0, "server_seconds"), tsim_v(&r, "window_s"), 1e-6);
    sim_result_free(&r);
    /* Weights need a bandwidth; an llm pool's come from its model. */
    char err[512];
    load_error("[workload]\nrate = 1\n[pool cpu]\nservice_ms = const(1)\nweights_gb = 2\n", err, sizeof err);
    cr_assert(strstr(err, "bad.ini:5: [pool cpu] weights_gb: needs storage or storage_gbs"), "%s", err);
    load_error("[workload]\nrate = 1\n[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nstorage = nvme\n"
               "weights_gb = 2\n", err, sizeof err);
    cr_assert(strstr(err, "[pool chat] weights_gb: an llm pool's weight bytes come from its model"), "%s", err);
    load_error("[workload]\nrate = 1\n[pool cpu]\nservice_ms = const(1)\npaid_while_down = yes\n", err, sizeof err);
    cr_assert(strstr(err, "paid_while_down: needs fail_after_s"), "%s", err);
}

/* Errors (5xx) as a rate on a generic pool: each service ends in an error with
 * probability 0.1, and the client retries twice.  A request fails only if its
 * three attempts all err: 0.001 of 10^5 = 100 (sd 10); retries = 10^5 x (0.1 +
 * 0.01) = 11 000 (sd about 100); every error is a rejection of the pool.  The
 * SLO's error_rate counts the requests that failed. */
Test(fleetsim, generic_error_rate_with_retries)
{
    sim_result r;
    simulate("[sim]\nrequests = 100000\n[workload]\nrate = 50\n[client]\ntimeout_ms = 60000\nretries = 2\n"
             "[pool web]\nservers = 4\nservice_ms = exp(mean=20)\nerror_rate = 0.1\n", 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    cr_assert_float_eq((double) tsim_n(&r, "rejected"), 100, 50, "rejected %llu",
                       (unsigned long long) tsim_n(&r, "rejected"));
    double retries = sim_result_get(&r, "", "retries", "value");
    cr_assert_float_eq(retries, 11000, 500, "retries %g", retries);
    cr_assert_eq(tsim_prv(p, "errors"), (double) tsim_prv(p, "rejected"));
    cr_assert_eq(tsim_prv(p, "served") + tsim_prv(p, "rejected"), tsim_prv(p, "arrivals"));
    cr_assert_eq(tsim_n(&r, "served") + tsim_n(&r, "rejected"), tsim_n(&r, "requests"));
    sim_result_free(&r);
    char err[512];
    load_error("[workload]\nrate = 1\n[pool web]\nservice_ms = const(1)\nerror_rate = 1.5\n", err, sizeof err);
    cr_assert(strstr(err, "[pool web] error_rate: must be <= 1"), "%s", err);
}

/* ---- memory over the limit (swapping) ------------------------------------------- */

/* Arrivals every 10 ms, a constant 25 ms service, 4 servers: request k starts
 * at 10k ms on arrival with k-2, k-1 and itself in service (k-2 ends at
 * 10k + 5), 3 requests in service and never a queue. */
#define SWAP "[sim]\nrequests = 2000\nwarmup = 100\n[workload]\narrival = constant\nrate = 100\n" \
             "[pool cpu]\nservers = 4\nservice_ms = const(25)\n"

Test(fleetsim, swapping_by_hand)
{
    sim_result plain, roomy, tight;
    simulate(SWAP, 1, &plain);
    /* 3 x 1 GiB + 0.4 GiB base = 3.4 GiB in a 3.5 GiB limit: never over it,
     * the numbers of the pool without the keys to the last digit. */
    simulate(SWAP "memory_gib = 3.5\nmemory_base_gib = 0.4\nmemory_per_request_mib = 1024\n", 1, &roomy);
    cr_assert_eq(tsim_sys(&plain, "service")->mean, 25);
    cr_assert_eq(tsim_sys(&roomy, "service")->mean, tsim_sys(&plain, "service")->mean);
    cr_assert_eq(tsim_sys(&roomy, "e2e")->p99, tsim_sys(&plain, "e2e")->p99);
    cr_assert_eq(tsim_sys(&roomy, "e2e")->mean, tsim_sys(&plain, "e2e")->mean);
    cr_assert_eq(tsim_n(&roomy, "served"), tsim_n(&plain, "served"));
    cr_assert_eq(tsim_pv(&roomy, 0, "swapped"), 0);
    cr_assert_eq(tsim_pv(&roomy, 0, "swap_share"), 0);
    /* A 3.3 GiB limit: the third request in service swaps.  Request 0 starts
     * alone (25 ms), 1 with 0 (25 ms, ends at 35), 2 at 20 ms with 0 (ends at
     * 25) and 1: 3 in service, 1.2 x 25 = 30 ms, ends at 50; from then on k starts at 10k with k-2 (ends at 10k + 10)
     * and k-1: 3 in service, every service 30 ms, still at most 3 at once. */
    simulate(SWAP "memory_gib = 3.3\nmemory_base_gib = 0.4\nmemory_per_request_mib = 1024\nswap_factor = 1.2\n",
             1, &tight);
    cr_assert_float_eq(tsim_sys(&tight, "service")->mean, 30, 1e-9, "service mean %.17g",
                       tsim_sys(&tight, "service")->mean);
    cr_assert_float_eq(tsim_sys(&tight, "service")->max, 30, 1e-9);
    cr_assert_float_eq(tsim_sys(&tight, "e2e")->mean, 30, 1e-9, "e2e mean %.17g", tsim_sys(&tight, "e2e")->mean);
    cr_assert_eq(tsim_pv(&tight, 0, "swap_share"), 1);
    cr_assert_eq(tsim_pv(&tight, 0, "swapped"), (double) tsim_n(&tight, "served"));
    sim_result_free(&plain);
    sim_result_free(&roomy);
    sim_result_free(&tight);
    char err[1024];
    load_error(MM8 "memory_gib = 0\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [pool cpu] memory_gib: must be > 0 (a memory limit, GiB), got 0");
    load_error(MM8 "memory_gib = 4\nmemory_base_gib = -1\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:10: [pool cpu] memory_base_gib: must be >= 0 (GiB), got -1");
    load_error(MM8 "memory_gib = 4\nmemory_per_request_mib = -2\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:10: [pool cpu] memory_per_request_mib: must be >= 0 (MiB), got -2");
    load_error(MM8 "memory_gib = 4\nswap_factor = 0.5\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:10: [pool cpu] swap_factor: must be >= 1 (a slowdown), got 0.5");
    load_error(MM8 "swap_factor = 3\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [pool cpu] swap_factor: needs memory_gib (the memory limit)");
}

/* ---- gateway pauses ---------------------------------------------------------------- */

/* A router before 100 servers of a constant 10 ms: never a queue, E2E = 10 ms
 * plus the wait for the gateway. */
#define GW "[sim]\nrequests = 2000\nwarmup = 0\n[workload]\narrival = constant\nrate = 100\ntarget = gw\n" \
           "[pool gw]\nkind = router\nnext = cpu\n%s[pool cpu]\nservers = 100\nservice_ms = const(10)\n"

Test(fleetsim, gateway_pauses_by_hand)
{
    sim_result plain, never, paused;
    char text[1024];
    snprintf(text, sizeof text, GW, "");
    simulate(text, 1, &plain);
    /* Pauses past the clock: the numbers of the gateway without them. */
    snprintf(text, sizeof text, GW, "pause_every_s = const(1e12)\npause_s = const(0.25)\n");
    simulate(text, 1, &never);
    cr_assert_eq(tsim_sys(&plain, "e2e")->mean, 10);
    cr_assert_eq(tsim_sys(&never, "e2e")->mean, tsim_sys(&plain, "e2e")->mean);
    cr_assert_eq(tsim_sys(&never, "e2e")->p99, tsim_sys(&plain, "e2e")->p99);
    cr_assert_eq(tsim_v(&never, "sim_time_s"), tsim_v(&plain, "sim_time_s"));
    /* Pause k runs from 1000.3 + 1250.3 k ms for 250 ms (1.0003 s running
     * between pauses: no arrival at 10 i ms meets a pause's start or end);
     * request i arrives at 10 i ms and, inside a pause, waits for its end. */
    snprintf(text, sizeof text, GW, "pause_every_s = const(1.0003)\npause_s = const(0.25)\n");
    simulate(text, 1, &paused);
    double sum = 0, max = 0;
    for (int i = 0; i < 2000; i++) {
        double t = 10.0 * i, wait = 0;
        for (int k = 0; k < 20; k++) {
            double s = 1000.3 + 1250.3 * k;
            if (t >= s && t < s + 250) wait = s + 250 - t;
        }
        sum += 10 + wait;
        if (10 + wait > max) max = 10 + wait;
    }
    cr_assert_float_eq(tsim_sys(&paused, "e2e")->mean, sum / 2000, 1e-6, "e2e mean %.17g, by hand %.17g",
                       tsim_sys(&paused, "e2e")->mean, sum / 2000);
    cr_assert_float_eq(tsim_sys(&paused, "e2e")->max, max, 1e-6, "e2e max %.17g, by hand %.17g",
                       tsim_sys(&paused, "e2e")->max, max);
    cr_assert_eq(tsim_n(&paused, "served"), tsim_n(&paused, "requests"));   /* none lost in a pause */
    cr_assert_eq(tsim_pv(&paused, 0, "pauses"), 16);   /* by 19.99 s: starts 1.0003 ... 19.7548 s */
    sim_result_free(&plain);
    sim_result_free(&never);
    sim_result_free(&paused);
    char err[1024];
    load_error("[workload]\ntarget = gw\n[pool gw]\nkind = router\nnext = cpu\npause_every_s = exp(mean=1)\n"
               "[pool cpu]\nservice_ms = const(1)\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:6: [pool gw] pause_every_s: needs pause_s (the length of a pause)");
    load_error("[workload]\ntarget = gw\n[pool gw]\nkind = router\nnext = cpu\npause_every_s = const(0)\npause_s = const(1)\n"
               "[pool cpu]\nservice_ms = const(1)\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:6: [pool gw] pause_every_s: mean must be > 0 (else the gateway pauses without end)");
}

/* ---- pauses of LLM replicas ------------------------------------------------------- */

#define LONE "[sim]\nrequests = 1\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.1\n" \
             "prompt_tokens = const(500)\noutput_tokens = const(100)\n[pool chat]\nkind = llm\nmodel = llama-3-8b\n" \
             "gpu = h100\nreplicas = 1\nmax_seq_len = 8192\nscheduler = continuous\n"

Test(fleetsim, llm_pauses_by_hand)
{
    sim_result plain, paused;
    simulate(LONE, 1, &plain);
    /* One request alone (the next arrives 10 s later): 0.3 s pauses at 0.2,
     * 0.7 and 1.2 s (0.2 s of running between them) each stall the step in
     * flight; the request, done at 0.774 s without them, ends exactly 0.9 s
     * later (1.674 s, before the pause at 1.7 s), its first token (15 ms) not. */
    simulate(LONE "pause_every_s = const(0.2)\npause_s = const(0.3)\n", 1, &paused);
    cr_assert(tsim_sys(&plain, "e2e")->mean > 700 && tsim_sys(&plain, "e2e")->mean < 900, "e2e %g",
              tsim_sys(&plain, "e2e")->mean);
    cr_assert_float_eq(tsim_sys(&paused, "e2e")->mean, tsim_sys(&plain, "e2e")->mean + 900, 1e-6,
                       "e2e %.17g vs %.17g + 900",
                       tsim_sys(&paused, "e2e")->mean, tsim_sys(&plain, "e2e")->mean);
    cr_assert_eq(tsim_sys(&paused, "ttft")->mean, tsim_sys(&plain, "ttft")->mean);
    cr_assert_eq(tsim_n(&paused, "served"), 1);
    cr_assert_eq(tsim_n(&paused, "served") + tsim_n(&paused, "failed") + tsim_n(&paused, "rejected") +
                 tsim_n(&paused, "timed_out"), tsim_n(&paused, "requests"));
    sim_result_free(&plain);
    sim_result_free(&paused);
    /* Four replicas under load, pausing 0.2 s about every 5 s (LATSIM_CHECK's
     * sanity checks run every step): every request served, later on average. */
    simulate(LLM4, 1, &plain);
    simulate(LLM4 "pause_every_s = exp(mean=5)\npause_s = const(0.2)\n", 1, &paused);
    cr_assert_eq(tsim_n(&paused, "served"), tsim_n(&paused, "requests"));
    cr_assert_gt(tsim_sys(&paused, "e2e")->mean, tsim_sys(&plain, "e2e")->mean);
    sim_result_free(&plain);
    sim_result_free(&paused);
}

Test(fleetsim, llm_contention_by_hand)
{
    sim_result plain, busy;
    simulate(LONE, 1, &plain);
    /* A flat curve (x2 at any utilisation) on a 25 % overhead share: every
     * step of the lone request takes 1 - 0.25 + 0.25 x 2 = 1.25 times as
     * long, so its TTFT and E2E do (to the ns each step is rounded to). */
    simulate(LONE "cpu_contention = 0:2, 1:2\ncontention_share = 0.25\n", 1, &busy);
    cr_assert_float_eq(tsim_sys(&busy, "e2e")->mean, 1.25 * tsim_sys(&plain, "e2e")->mean, 1e-4,
                       "e2e %.17g vs 1.25 x %.17g",
                       tsim_sys(&busy, "e2e")->mean, tsim_sys(&plain, "e2e")->mean);
    cr_assert_float_eq(tsim_sys(&busy, "ttft")->mean, 1.25 * tsim_sys(&plain, "ttft")->mean, 1e-5);
    cr_assert_eq(tsim_n(&busy, "served"), tsim_n(&busy, "requests"));
    sim_result_free(&plain);
    sim_result_free(&busy);
    /* Under load with the seeds' curve: every request served (conservation). */
    simulate(LLM4 "cpu_contention = 0:1, 0.7:1, 0.8:3, 1:5\n", 1, &busy);
    cr_assert_eq(tsim_n(&busy, "served") + tsim_n(&busy, "failed") + tsim_n(&busy, "rejected") +
                 tsim_n(&busy, "timed_out"), tsim_n(&busy, "requests"));
    sim_result_free(&busy);
}
