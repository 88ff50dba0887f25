/* test_gwcpu.c -- CPU limits on gateways and result caches (issue 35;
 * fleet/cputier.h): a router's overhead_ms and a result cache's hit_ms /
 * miss_ms as CPU jobs in the cgroups of the pool's `replicas` pods.
 *   - by hand: a lone 250 ms of gateway work on a 0.5-core limit with 100 ms
 *     periods runs 50 ms a period and ends at 450 ms (4 throttled periods of
 *     50 ms); the same for a cache lookup; two requests 1 ms apart on one pod
 *     share its quota (924.5 ms each), on two pods do not (450 and 449 ms);
 *     on a 1-core node with 0.5 cores of background the work runs at half a
 *     core (500 ms), and shares the node with a generic pool;
 *   - closed form: Poisson arrivals and exponential work on one core are an
 *     M/M/1-PS queue, mean sojourn S / (1 - rho);
 *   - bad input: one line with file, line and key. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/scenario.h"
#include "run/sim.h"
#include "tsim.h"

#define TRACE "/tmp/test_gwcpu_w.csv"

/* Arrivals at 0 and 1 ms (the trace's times less the first), then one at
 * 99.999 s, alone. */
static void write_trace(void)
{
    FILE *f = fopen(TRACE, "w");
    cr_assert_not_null(f);
    fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n0.001,100,1\n0.002,100,1\n100,100,1\n", f);
    fclose(f);
}

/* A scenario: N requests (lone: 1000 s apart, on CFS period boundaries; else
 * write_trace()'s three) into pool `gw` of KIND with EXTRA lines, then a
 * generic pool of 1 ms, then TAIL (more sections). */
static void text_of(char *buf, size_t n, int lone, const char *kind, const char *extra, const char *tail)
{
    snprintf(buf, n,
             "[sim]\nrequests = 3\nwarmup = 0\n"
             "[workload]\n%s"
             "target = gw\n"
             "[pool gw]\nkind = %s\nnext = m\n%s"
             "[pool m]\nkind = generic\nservice_ms = const(1)\n%s",
             lone ? "arrival = constant\nrate = 0.001\n" : "arrival = trace\ntrace = test_gwcpu_w.csv\ntime_format = seconds\n",
             kind, extra, tail);
}

static void run(int lone, const char *kind, const char *extra, const char *tail, sim_result *res)
{
    char text[2048];
    if (!lone) write_trace();
    text_of(text, sizeof text, lone, kind, extra, tail);
    tsim_run("/tmp/test_gwcpu.ini", text, 1, res);
    if (!lone) unlink(TRACE);
    cr_assert_eq(tsim_n(res, "served"), 3);
}

Test(gwcpu, router_work_on_half_a_core_by_hand)
{
    sim_result res;
    run(1, "router", "overhead_ms = const(250)\ncpu_limit_cores = 0.5\ncfs_period_ms = 100\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 450, 1e-6, "overhead %.9f", tsim_sys(&res, "overhead")->mean);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->max, 450, 1e-6, "overhead max %.9f",
                       tsim_sys(&res, "overhead")->max);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, 451, 1e-6, "e2e %.9f", tsim_sys(&res, "e2e")->mean);
    tsim_pr gw = tsim_pool_named(&res, "gw");
    cr_expect_float_eq(tsim_prv(gw, "cpu_throttled_periods"), 3 * 4, 1e-9);
    cr_expect_float_eq(tsim_prv(gw, "cpu_throttled_s"), 3 * 0.2, 1e-9);
    cr_expect(isnan(tsim_prv(gw, "node_cpu")), "no node named: no node_cpu");
    sim_result_free(&res);
    /* A 1-core limit: the work runs unhindered. */
    run(1, "router", "overhead_ms = const(250)\ncpu_limit_cores = 1\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 250, 1e-6, "overhead %.9f", tsim_sys(&res, "overhead")->mean);
    cr_expect_float_eq(tsim_prv(tsim_pool_named(&res, "gw"), "cpu_throttled_periods"), 0, 1e-9);
    sim_result_free(&res);
    /* No CPU keys: a delay, as before, and no CPU rows. */
    run(1, "router", "overhead_ms = const(250)\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 250, 1e-6, "overhead %.9f", tsim_sys(&res, "overhead")->mean);
    cr_expect(isnan(tsim_prv(tsim_pool_named(&res, "gw"), "cpu_throttled_periods")));
    sim_result_free(&res);
}

Test(gwcpu, cache_lookup_on_half_a_core_by_hand)
{
    sim_result res;
    run(1, "result_cache", "hit_ms = const(250)\nmiss_ms = const(250)\ncpu_limit_cores = 0.5\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 450, 1e-6, "overhead %.9f", tsim_sys(&res, "overhead")->mean);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->max, 450, 1e-6, "overhead max %.9f",
                       tsim_sys(&res, "overhead")->max);
    cr_expect_float_eq(tsim_prv(tsim_pool_named(&res, "gw"), "cpu_throttled_periods"), 3 * 4, 1e-9);
    sim_result_free(&res);
    run(1, "result_cache", "hit_ms = const(250)\nmiss_ms = const(250)\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 250, 1e-6, "no CPU keys: %.9f",
                       tsim_sys(&res, "overhead")->mean);
    sim_result_free(&res);
}

/* Requests at 0 and 1 ms, 250 ms of work each, 0.5-core limit (50 ms of quota
 * a period).  One pod: the first runs alone for 1 ms, then both at a core each
 * until the quota is used at 25.5 ms (25.5 and 24.5 ms done); then 25 ms each
 * per period; in period 9 (from 900 ms) the first needs 24.5 ms (done at
 * 924.5 ms, 49 ms of quota used), the second 25.5 ms: 24.5 with it and 1 ms
 * alone, done at 925.5 ms: 924.5 ms after its arrival, both.  Two pods (the
 * requests in turn): 450 ms, and 449 ms for the second (its 50 ms a period
 * from 1 ms on: [1, 51), [100, 150), ..., [400, 450)).  The third, alone
 * (99.999 s, 1 ms before a period): 1 + 4 x 50 + 49 ms = 450 ms. */
Test(gwcpu, replicas_by_hand)
{
    sim_result res;
    run(0, "router", "overhead_ms = const(250)\ncpu_limit_cores = 0.5\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->max, 924.5, 1e-6, "one pod: max %.9f",
                       tsim_sys(&res, "overhead")->max);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, (924.5 * 2 + 450) / 3, 1e-6, "one pod: mean %.9f",
                       tsim_sys(&res, "overhead")->mean);
    sim_result_free(&res);
    run(0, "router", "overhead_ms = const(250)\ncpu_limit_cores = 0.5\nreplicas = 2\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->max, 450, 1e-6, "two pods: max %.9f",
                       tsim_sys(&res, "overhead")->max);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->cdf[0], 449, 1e-6, "two pods: min %.9f",
                       tsim_sys(&res, "overhead")->cdf[0]);
    sim_result_free(&res);
    run(0, "result_cache", "hit_ms = const(250)\nmiss_ms = const(250)\ncpu_limit_cores = 0.5\nreplicas = 2\n", "", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->max, 450, 1e-6, "cache, two pods: max %.9f",
                       tsim_sys(&res, "overhead")->max);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->cdf[0], 449, 1e-6, "cache, two pods: min %.9f",
                       tsim_sys(&res, "overhead")->cdf[0]);
    sim_result_free(&res);
}

/* On a 1-core node with a constant 0.5 cores of background the lone work
 * runs at half a core: 500 ms; the node is busy 0.5 cores always and the
 * gateway's 0.25 s per 1000 s besides.  A generic pool on the same node
 * (1 ms of CPU per request, after the gateway's work) adds its share. */
Test(gwcpu, node_background_by_hand)
{
    sim_result res;
    run(1, "router", "overhead_ms = const(250)\nnode = n1\n", "[node n1]\ncores = 1\nbackground_cpu = const(0.5)\n", &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 500, 1e-6, "overhead %.9f", tsim_sys(&res, "overhead")->mean);
    tsim_pr gw = tsim_pool_named(&res, "gw");
    cr_expect_float_eq(tsim_prv(gw, "node_background_cores"), 0.5, 1e-9);
    double busy = tsim_prv(gw, "node_cpu"), want = 0.5 + 3 * 0.25 / tsim_v(&res, "window_s");
    cr_expect_float_eq(busy, want, 1e-6, "node_cpu %.9f, want %.9f (window %g s)", busy, want,
                       tsim_v(&res, "window_s"));
    cr_expect(isnan(tsim_prv(gw, "cpu_throttled_periods")), "no limit: no throttling rows");
    sim_result_free(&res);
    /* The generic pool on the node: its 1 ms of CPU at half a core, 2 ms. */
    char tail[256];
    snprintf(tail, sizeof tail, "node = n1\n[node n1]\ncores = 1\nbackground_cpu = const(0.5)\n");
    run(1, "router", "overhead_ms = const(250)\nnode = n1\n", tail, &res);
    cr_expect_float_eq(tsim_sys(&res, "e2e")->mean, 502, 1e-6, "e2e %.9f", tsim_sys(&res, "e2e")->mean);
    sim_result_free(&res);
}

/* Poisson arrivals of exponential gateway work (mean S = 10 ms) on a node of
 * one core, no limit: jobs share the core equally (one cgroup), an M/M/1-PS
 * queue whose mean sojourn is S / (1 - rho).  At rho = 0.5 (50/s) over 60000
 * requests (1200 s) the time-average number in system has sd
 * sqrt(2 rho (1 + rho) / (mu (1 - rho)^4) / T) = 1.4 % of its mean (Whitt
 * 1989, as test_cpunode.c): 6 % is over 4 sd. */
Test(gwcpu, mm1_ps_mean_sojourn)
{
    const char *text = "[sim]\nrequests = 60000\nwarmup = 5000\n[workload]\nrate = 50\ntarget = gw\n"
                       "[pool gw]\nkind = router\noverhead_ms = exp(mean=10)\nnode = n1\nnext = m\n"
                       "[pool m]\nkind = generic\nservers = 100\nservice_ms = const(0.001)\n"
                       "[node n1]\ncores = 1\n";
    sim_result res;
    tsim_run("/tmp/test_gwcpu.ini", text, 7, &res);
    cr_expect_float_eq(tsim_sys(&res, "overhead")->mean, 20, 0.06 * 20, "mean %g ms, want 20",
                       tsim_sys(&res, "overhead")->mean);
    cr_expect_float_eq(tsim_prv(tsim_pool_named(&res, "gw"), "node_cpu"), 0.5, 0.03, "node_cpu %g",
                       tsim_prv(tsim_pool_named(&res, "gw"), "node_cpu"));
    sim_result_free(&res);
}

/* The error the lone scenario with EXTRA in pool gw (of KIND) gives ("" when none). */
static void load_error(const char *kind, const char *extra, char *err, size_t n)
{
    char text[2048];
    text_of(text, sizeof text, 1, kind, extra, "");
    tsim_load_error("bad.ini", text, err, n);
}

Test(gwcpu, bad_input)
{
    char err[1024];
    /* pool gw's extra lines start at line 11 */
    load_error("router", "cpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:11: [pool gw] cpu_limit_cores: needs overhead_ms (the gateway's CPU work per request, "
                          "on one core)");
    load_error("router", "overhead_ms = const(1)\ncpu_limit_cores = 0.5\nservers_per_replica = 2\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:13: [pool gw] servers_per_replica: not supported by kind = router pools: each "
                          "request's work is a CPU job of its own in one of the pool's replicas (pods); set replicas");
    load_error("router", "overhead_ms = const(1)\nreplicas = 2\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:12: [pool gw] replicas: needs cpu_limit_cores, cpu_request_cores or node (without "
                          "CPU keys a gateway's work is a delay with no capacity to divide among pods)");
    load_error("router", "overhead_ms = const(1)\ncpu_limit_cores = 0.5\nreplicas = 0\n", err, sizeof err);
    cr_expect_not_null(strstr(err, "bad.ini:13: [pool gw] replicas: "), "%s", err);
    load_error("router", "overhead_ms = const(1)\ncpu_limit_cores = 0.5\nmemory_limit_gib = 1\n", err, sizeof err);
    cr_expect_not_null(strstr(err, "bad.ini:13: [pool gw] memory_limit_gib: "), "%s", err);
    load_error("router", "overhead_ms = const(1)\ncpu_limit_cores = -1\n", err, sizeof err);
    cr_expect_not_null(strstr(err, "bad.ini:12: [pool gw] cpu_limit_cores: "), "%s", err);
    load_error("router", "overhead_ms = const(1)\nnode = n9\n", err, sizeof err);
    cr_expect_not_null(strstr(err, "bad.ini:12: [pool gw] node: "), "%s", err);
    load_error("result_cache", "embed_model = bert-base-uncased\nembed_gpu = h100\ncpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_str_eq(err, "bad.ini:13: [pool gw] cpu_limit_cores: not with embed_model: the lookup is the encoder's "
                          "pass on its own device, not CPU work (give hit_ms and miss_ms as CPU time instead)");
    load_error("result_cache", "autoscale = queue\ncpu_limit_cores = 0.5\n", err, sizeof err);
    cr_expect_not_null(strstr(err, "[pool gw] autoscale: "), "%s", err);
    /* Accepted: the keys on both kinds. */
    load_error("result_cache", "cpu_request_cores = 0.5\ncpu_limit_cores = 1\ncfs_period_ms = 50\nreplicas = 3\n", err,
               sizeof err);
    cr_expect_str_eq(err, "");
}
