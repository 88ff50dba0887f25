/* test_cpunode.c -- CPU as a mechanism (fleet/cpunode.h): CFS throttling by
 * hand (a lone 250 ms job on a 0.5-core limit ends at 450 ms), weighted
 * processor sharing and background load by hand, and, through whole runs of
 * generic pools on a [node], the M/M/1-PS mean sojourn S / (1 - rho), the
 * node's busy share, the same numbers from the same seed and the scenario
 * errors (one line with file, line and key). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/evq.h"
#include "fleet/cpunode.h"
#include "tsim.h"

/* ---- the node by hand ------------------------------------------------------- */

typedef struct ends {
    simtime_t at[8];          /* when job I ended, ns (-1: not yet) */
} ends;

static evq *cur_q;            /* the calendar of the test in progress */

static void ended(void *ctx, int64_t arg)
{
    ends *e = ctx;
    e->at[arg] = evq_now(cur_q);
}

/* A pool's CPU keys on a host of its own (unlimited cores). */
static cpu_cfg own_host(double limit, double request, double period_ms)
{
    cpu_cfg c;
    memset(&c, 0, sizeof c);
    c.on = 1;
    c.limit_cores = limit;
    c.request_cores = request;
    c.period_ms = period_ms;
    c.node.cores = INFINITY;
    return c;
}

/* Starts job I of WORK_MS in cgroup G of N at time AT_MS. */
typedef struct start { cpu_node *n; int g; double work_ms; ends *e; int i; } start;
static void on_start(evq *q, void *subject, int64_t arg)
{
    (void) q;
    (void) arg;
    start *s = subject;
    cr_assert_gt(cpu_job_start(s->n, s->g, s->work_ms, ended, s->e, s->i), 0);
}

Test(cpunode, lone_job_on_half_a_core_ends_at_450_ms)
{
    /* 250 ms of CPU, 50 ms of quota per 100 ms period: 50 ms run in each of
     * the periods [0,100), ..., [300,400) (200 ms), the last 50 ms in
     * [400,450): done at 450 ms exactly, throttled 4 times for 50 ms each. */
    cur_q = evq_new();
    cpu_nodes *ns = cpu_nodes_new(cur_q, 1);
    cpu_cfg c = own_host(0.5, 0, 100);
    cpu_node *n = cpu_nodes_get(ns, &c);
    int g = cpu_group_new(n, &c);
    ends e = { { -1, -1 } };
    cpu_node_window_open(n);
    cr_assert_gt(cpu_job_start(n, g, 250, ended, &e, 0), 0);
    evq_run(cur_q, SIMTIME_BEYOND);
    cr_assert_eq(e.at[0], (simtime_t) 450000000, "ended at %lld ns", (long long) e.at[0]);
    cpu_node_window_close(n);
    cr_assert_eq(cpu_group_throttled_periods(n, g), 4);
    cr_assert_float_eq(cpu_group_throttled_s(n, g), 0.2, 1e-9);
    /* Started at 30 ms, mid-period: 50 ms in [30,80), then as before: 450 ms. */
    start s = { n, g, 250, &e, 1 };
    simtime_t t0 = evq_now(cur_q);
    simtime_t base = (t0 / 100000000 + 1) * 100000000;   /* the next period's start */
    evq_at(cur_q, base + 30000000, on_start, &s, 0);
    evq_run(cur_q, SIMTIME_BEYOND);
    cr_assert_eq(e.at[1] - base, (simtime_t) 450000000, "ended %lld ns after the period began",
                 (long long) (e.at[1] - base));
    /* Without a limit: 250 ms. */
    cpu_cfg free_c = own_host(0, 0, 100);
    cpu_node *n2 = cpu_nodes_get(ns, &free_c);
    int g2 = cpu_group_new(n2, &free_c);
    t0 = evq_now(cur_q);
    cr_assert_gt(cpu_job_start(n2, g2, 250, ended, &e, 2), 0);
    evq_run(cur_q, SIMTIME_BEYOND);
    cr_assert_eq(e.at[2] - t0, (simtime_t) 250000000);
    cpu_nodes_free(ns);
    evq_free(cur_q);
}

Test(cpunode, shares_by_weight_and_background)
{
    /* One core, two cgroups weighted 3:1 (cpu_request_cores), 100 ms each from
     * time 0: A gets 0.75 core and ends at 100/0.75 = 133.33 ms, when B has
     * done 33.33 ms; B then runs alone and ends at 200 ms. */
    cur_q = evq_new();
    cpu_nodes *ns = cpu_nodes_new(cur_q, 1);
    cpu_cfg a = own_host(0, 3, 100), b = own_host(0, 1, 100);
    snprintf(a.node.name, sizeof a.node.name, "n1");
    b.node = a.node;
    a.node.cores = b.node.cores = 1;
    cpu_node *n = cpu_nodes_get(ns, &a);
    cr_assert_eq(cpu_nodes_get(ns, &b), n, "one node of a name");
    int ga = cpu_group_new(n, &a), gb = cpu_group_new(n, &b);
    ends e = { { -1, -1, -1, -1 } };
    cpu_node_window_open(n);
    cpu_job_start(n, ga, 100, ended, &e, 0);
    cpu_job_start(n, gb, 100, ended, &e, 1);
    evq_run(cur_q, SIMTIME_BEYOND);
    cr_assert_eq(e.at[0], (simtime_t) 133333334, "A ended at %lld ns", (long long) e.at[0]);
    /* The clock is whole ns, each end rounded up: B's share at A's end is
     * carried to B's own end, 1 ns late at most. */
    cr_assert(e.at[1] >= 200000000 && e.at[1] <= 200000001, "B ended at %lld ns", (long long) e.at[1]);
    cpu_node_window_close(n);
    cr_assert_float_eq(cpu_node_busy_share(n), 1, 1e-6, "busy all the time: %g", cpu_node_busy_share(n));
    cpu_nodes_free(ns);
    evq_free(cur_q);

    /* Background: half of one core taken from 0 s, three quarters from 1 s
     * (a series): a 100 ms job gets 0.5 core and ends at 200 ms; one started
     * at 1 s gets 0.25 core and ends at 1.4 s. */
    cur_q = evq_new();
    ns = cpu_nodes_new(cur_q, 1);
    cpu_cfg c = own_host(0, 0, 100);
    snprintf(c.node.name, sizeof c.node.name, "noisy");
    c.node.cores = 1;
    c.node.bg_kind = CPU_BG_SERIES;
    c.node.nseries = 2;
    c.node.series_s[0] = 0;
    c.node.series_cores[0] = 0.5;
    c.node.series_s[1] = 1;
    c.node.series_cores[1] = 0.75;
    n = cpu_nodes_get(ns, &c);
    int g = cpu_group_new(n, &c);
    cpu_job_start(n, g, 100, ended, &e, 2);
    start s = { n, g, 100, &e, 3 };
    evq_at(cur_q, 1000000000, on_start, &s, 0);
    evq_run(cur_q, 5000000000);
    cr_assert_eq(e.at[2], (simtime_t) 200000000, "%lld", (long long) e.at[2]);
    cr_assert_eq(e.at[3], (simtime_t) 1400000000, "%lld", (long long) e.at[3]);
    cpu_nodes_free(ns);
    evq_free(cur_q);
}

/* ---- whole runs ------------------------------------------------------------- */

/* One core shared by as many requests as come (200 servers, never all busy):
 * M/M/1-PS at RATE requests/s of exp(10 ms). */
#define MM1PS(rate) "[sim]\nrequests = 200000\nwarmup = 10000\n[workload]\nrate = " rate "\n" \
                    "[pool cpu]\nservers = 200\nservice_ms = exp(mean=10)\nnode = n1\n" \
                    "[node n1]\ncores = 1\n"

Test(cpunode, mm1_ps_mean_sojourn)
{
    /* E[T] = S / (1 - rho).  The error of the mean: by Little's law it is the
     * time-average number in system over the run, whose asymptotic variance
     * for M/M/1 is 2 rho (1 + rho) / (mu (1 - rho)^4) per second of run
     * (Whitt 1989; the number in system is the same process under PS and
     * FCFS).  rho = 0.5, mu = 100/s, 4000 s: sd of L 0.0077 on L = 1, 0.8 %;
     * 4 sd: 3 %.  rho = 0.7, 2860 s: sd 1.4 %; 3.5 sd: 5 %. */
    sim_result r;
    tsim_run("node.ini", MM1PS("50"), 1, &r);
    cr_assert_float_eq(tsim_sys(&r, "e2e")->mean, 20.0, 0.03 * 20, "rho 0.5: mean %g ms, want 20", tsim_sys(&r, "e2e")->mean);
    /* The node's busy share is rho (sd of the busy share ~ the same order). */
    cr_assert_float_eq(tsim_pv(&r, 0, "node_cpu"), 0.5, 0.015, "node_cpu %g",
                       tsim_pv(&r, 0, "node_cpu"));
    cr_assert_eq(tsim_pv(&r, 0, "rejected") + tsim_n(&r, "failed"), 0);
    sim_result_free(&r);
    tsim_run("node.ini", MM1PS("70"), 2, &r);
    cr_assert_float_eq(tsim_sys(&r, "e2e")->mean, 10 / 0.3, 0.05 * 10 / 0.3, "rho 0.7: mean %g ms, want 33.3", tsim_sys(&r, "e2e")->mean);
    sim_result_free(&r);
}

Test(cpunode, background_load_and_determinism)
{
    /* Background of 0.3 of the one core (const) and 40/s of exp(10 ms): the
     * jobs see 0.7 core, an M/M/1-PS at rho = 0.4 / 0.7 with service 10 / 0.7
     * ms: E[T] = (10 / 0.7) / (1 - 0.4 / 0.7) = 10 / 0.3 = 33.3 ms; the node
     * is 0.3 + 0.4 = 70 % busy. */
    const char *text = "[sim]\nrequests = 200000\nwarmup = 10000\n[workload]\nrate = 40\n"
                       "[pool cpu]\nservers = 200\nservice_ms = exp(mean=10)\nnode = n1\n"
                       "[node n1]\ncores = 1\nbackground_cpu = const(0.3)\n";
    sim_result r, r2;
    tsim_run("node.ini", text, 3, &r);
    cr_assert_float_eq(tsim_sys(&r, "e2e")->mean, 10 / 0.3, 0.05 * 10 / 0.3, "mean %g ms, want 33.3", tsim_sys(&r, "e2e")->mean);
    cr_assert_float_eq(tsim_pv(&r, 0, "node_cpu"), 0.7, 0.02);
    cr_assert_float_eq(tsim_pv(&r, 0, "node_background_cores"), 0.3, 1e-9);
    tsim_run("node.ini", text, 3, &r2);
    cr_assert_eq(tsim_sys(&r, "e2e")->p99, tsim_sys(&r2, "e2e")->p99);
    cr_assert_eq(tsim_n(&r, "events"), tsim_n(&r2, "events"));
    sim_result_free(&r);
    sim_result_free(&r2);
}

Test(cpunode, throttling_in_a_run)
{
    /* 1 server, 0.5-core limit, 30 ms requests at 5/s: below the quota most of
     * the time, but a request that finds part of its period's quota used waits;
     * with a 1-core limit nothing is ever throttled.  Every request's service
     * is at least its CPU time / 1 core. */
    const char *base = "[sim]\nrequests = 20000\nwarmup = 1000\n[workload]\nrate = 5\n"
                       "[pool cpu]\nservers = 1\nservice_ms = const(30)\ncpu_limit_cores = ";
    char text[512];
    sim_result r;
    snprintf(text, sizeof text, "%s0.5\n", base);
    tsim_run("node.ini", text, 1, &r);
    cr_assert_gt(tsim_pv(&r, 0, "cpu_throttled_periods"), 100);
    cr_assert_gt(tsim_pv(&r, 0, "cpu_throttled_s"), 0);
    cr_assert_gt(tsim_sys(&r, "service")->p99, 30 + 1e-6, "a throttled request takes longer than its CPU time");
    cr_assert_geq(tsim_sys(&r, "service")->cdf[0], 30 * (1 - 1e-3), "p1 %g", tsim_sys(&r, "service")->cdf[0]);
    cr_assert_leq(tsim_sys(&r, "service")->max, 80 + 1e-6, "30 ms never needs more than one throttled gap of 50 ms");
    sim_result_free(&r);
    snprintf(text, sizeof text, "%s1\n", base);
    tsim_run("node.ini", text, 1, &r);
    cr_assert_eq(tsim_pv(&r, 0, "cpu_throttled_periods"), 0);
    cr_assert_float_eq(tsim_sys(&r, "service")->max, 30, 1e-6);
    sim_result_free(&r);
}

#define POOL "[sim]\nrequests = 100\n[workload]\nrate = 10\n[pool cpu]\nservers = 2\nservice_ms = exp(mean=10)\n"

Test(cpunode, bad_input)
{
    char err[1024];
    tsim_load_error("bad.ini", POOL "cpu_limit_cores = -1\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:8: [pool cpu] cpu_limit_cores: must be > 0 and <= 1e+06, got -1");
    tsim_load_error("bad.ini", POOL "cpu_limit_cores = 1\ncpu_request_cores = 2\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [pool cpu] cpu_request_cores: 2 cores is above cpu_limit_cores (1): "
                          "a request cannot exceed its limit");
    tsim_load_error("bad.ini", POOL "cfs_period_ms = 50\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:8: [pool cpu] cfs_period_ms: needs cpu_limit_cores (the quota per period)");
    tsim_load_error("bad.ini", POOL "node = n2\n[node n1]\ncores = 4\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:8: [pool cpu] node: no [node n2] section");
    tsim_load_error("bad.ini", POOL "node = n1\n[node n1]\ncores = 0\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:10: [node n1] cores: must be > 0 and <= 1e+06, got 0");
    tsim_load_error("bad.ini", POOL "node = n1\n[node n1]\nbackground_cpu = const(1)\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [node n1] cores: missing: a node needs its number of cores");
    tsim_load_error("bad.ini", POOL "node = n1\n[node n1]\ncores = 4\nbackground_cpu = series(0:1, 0:2)\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:11: [node n1] background_cpu: series: times must increase (0 after 0)");
    tsim_load_error("bad.ini", POOL "node = n1\n[node n1]\ncores = 4\ncorse = 2\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:11: [node n1] corse: unknown key (valid: cores, background_cpu, background_period_ms)");
    tsim_load_error("bad.ini", POOL "cpu_limit_cores = 1\ncpu_contention = 0:1, 1:2\n", err, sizeof err);
    cr_assert_neq(strstr(err, "bad.ini:9: [pool cpu] cpu_contention: a typed-in curve, exclusive"), NULL, "%s", err);
    tsim_load_error("bad.ini", POOL "node = n1\n[node n1]\ncores = 4\n", err, sizeof err);
    cr_assert_str_eq(err, "");
}

/* ---- memory limits that kill (memory_limit_gib) -------------------------- */

#define PODS "[sim]\nrequests = 20000\nwarmup = 1000\n[workload]\nrate = 30\n" \
             "[pool api]\nservers = 8\nservers_per_replica = 4\nservice_ms = exp(mean=50)\n" \
             "memory_base_gib = 1\nmemory_per_request_mib = 1024\nstartup_s = 2\ntimeout_ms = 2000\nmemory_limit_gib = "

Test(oomkill, over_the_limit_kills_and_restarts)
{
    /* Two pods of 4 workers; 1 GiB plus 1 GiB per request in service.  With 5
     * GiB all 4 fit: never killed.  With 2.5 GiB a pod's third request kills it:
     * its requests in service fail (at most one per worker), it restarts after
     * 2 s (unavailable meanwhile), and every request is counted once. */
    sim_result r;
    tsim_run("node.ini", PODS "5\n", 1, &r);
    cr_assert_eq(tsim_pv(&r, 0, "oom_kills"), 0);
    cr_assert_eq(tsim_n(&r, "failed"), 0);
    cr_assert_float_eq(tsim_pv(&r, 0, "availability"), 1, 1e-12);
    sim_result_free(&r);
    tsim_run("node.ini", PODS "2.5\n", 1, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    double kills = tsim_prv(p, "oom_kills");
    cr_assert_gt(kills, 10, "kills %g", kills);
    cr_assert_eq(fmod(kills, 4), 0, "a pod's 4 workers die together: %g", kills);
    cr_assert_gt(tsim_n(&r, "failed"), 0);
    cr_assert_leq((double) tsim_n(&r, "failed"), kills, "at most one request per worker of a killed pod fails");
    cr_assert_lt(tsim_prv(p, "availability"), 1);
    cr_assert_eq(tsim_n(&r, "served") + tsim_n(&r, "failed") + tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"),
                 tsim_n(&r, "requests"));
    sim_result_free(&r);
}

Test(oomkill, bad_input)
{
    char err[1024];
    tsim_load_error("bad.ini", POOL "memory_limit_gib = 0\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:8: [pool cpu] memory_limit_gib: must be > 0 (a memory limit, GiB), got 0");
    tsim_load_error("bad.ini", POOL "memory_limit_gib = 8\nmemory_gib = 8\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:9: [pool cpu] memory_gib: swapping is for a host without a limit: with "
                          "memory_limit_gib a replica over it is killed (OOM) instead; give one or the other");
    tsim_load_error("bad.ini", POOL "servers_per_replica = 1.5\n", err, sizeof err);
    cr_assert_str_eq(err, "bad.ini:8: [pool cpu] servers_per_replica: expected a whole number, got 1.5");
}
