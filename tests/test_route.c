/* test_route.c -- Criterion tests of the station graph: routers and their
 * policies (sim/stations/router.c, sim/core/route.c), a station kind defined here that
 * plugs in with one table row, stations driven through a stub sink, an LLM
 * pool's per-replica routing, and bad router input.
 *
 * Queueing checks: a Poisson stream of rate L split over k single-server pools
 * with exponential service (mean 1/mu):
 *   random       each pool sees a Poisson stream of rate L/k: M/M/1,
 *                mean wait rho / (mu - L/k), rho = L / (k mu);
 *   round robin  each pool sees every k-th arrival: Erlang-k inter-arrival
 *                times (k phases of rate L), an E_k/M/1 queue whose mean wait is
 *                sigma / (mu (1 - sigma)), sigma the root in (0, 1) of
 *                sigma = (L / (L + mu (1 - sigma)))^k (Kleinrock vol. 1, 6.4).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/cost.h"
#include "core/kind.h"
#include "stations/pool.h"
#include "core/route.h"
#include "stations/router.h"
#include "tsim.h"

/* A router LB with POLICY over K single-server pools s0..s(K-1), service
 * exp(mean = 1 ms), Poisson arrivals at RATE_MS per ms. */
static void router_scenario(char *buf, size_t n, const char *policy, int k, double rate_ms, long requests)
{
    int len = snprintf(buf, n, "[sim]\nrequests = %ld\nwarmup = %ld\n[workload]\nrate = %.17g\ntarget = lb\n"
                       "[pool lb]\nkind = router\npolicy = %s\nnext = ", requests, requests / 10, rate_ms * 1000, policy);
    for (int i = 0; i < k; i++) len += snprintf(buf + len, n - (size_t) len, "%ss%d", i ? ", " : "", i);
    len += snprintf(buf + len, n - (size_t) len, "\n");
    for (int i = 0; i < k; i++)
        len += snprintf(buf + len, n - (size_t) len, "[pool s%d]\nservice_ms = exp(mean=1)\n", i);
}

/* ---- round robin and random against queueing theory ------------------------- */

/* E_k/M/1 mean wait in the queue: arrivals every k exponential phases of rate
 * L, exponential service of rate MU; sigma by fixed-point iteration (a
 * contraction on [0, 1) when L / k < MU). */
static double ek_m_1_wait(int k, double L, double mu)
{
    double s = 0.5;
    for (int i = 0; i < 10000; i++) s = pow(L / (L + mu * (1 - s)), k);
    return s / (mu * (1 - s));
}

/* 4 pools at utilisation 0.5, 10^6 requests (2.5 10^5 per pool).  The waiting
 * time of an M/M/1 queue at rho = 0.5 has sd 1.73 ms and relaxation time
 * 1 / (mu (1 - sqrt(rho))^2) = 11.7 ms, so the 5 10^5 ms a pool is observed
 * hold about 2 10^4 independent stretches: standard error of the mean about
 * 1.73 / sqrt(2 10^4) = 0.012 ms, 1.2 % of 1 ms.  E_4/M/1 waits are shorter
 * and less variable.  5 % is more than 4 standard errors. */
Test(route, round_robin_is_erlang_k)
{
    char text[2048];
    const int k = 4;
    const double L = 2.0, mu = 1.0;            /* per ms: utilisation L / (k mu) = 0.5 */
    router_scenario(text, sizeof text, "round_robin", k, L, 1000000);
    sim_result r;
    tsim_run("route.ini", text, 1, &r);
    double want = ek_m_1_wait(k, L, mu);
    cr_expect_float_eq(want, 0.43252, 1e-4, "closed form %g", want);   /* the formula itself */
    for (int i = 0; i < k; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", i);
        tsim_pr p = tsim_pool_named(&r, name);
        /* Round robin splits exactly. */
        cr_expect(tsim_prv(p, "arrivals") == 250000, "%s arrivals %llu", name, (unsigned long long) tsim_prv(p, "arrivals"));
        cr_expect(fabs(tsim_prl(p, "queue")->mean - want) < 0.05 * want, "%s: mean wait %g, E_4/M/1 %g", name, tsim_prl(p, "queue")->mean, want);
    }
    /* Round robin beats random splitting (M/M/1 wait 1 ms) by more than half. */
    cr_expect_lt(tsim_sys(&r, "queue")->mean, 0.5);
    sim_result_free(&r);
}

Test(route, random_is_m_m_1)
{
    char text[2048];
    const int k = 4;
    const double L = 2.0, mu = 1.0;
    router_scenario(text, sizeof text, "random", k, L, 1000000);
    sim_result r;
    tsim_run("route.ini", text, 1, &r);
    double lam = L / k, rho = lam / mu, want = rho / (mu - lam);   /* 1 ms */
    uint64_t total = 0;
    for (int i = 0; i < k; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", i);
        tsim_pr p = tsim_pool_named(&r, name);
        total += tsim_prv(p, "arrivals");
        /* Binomial split: sd sqrt(10^6 0.25 0.75) = 433; 4 sd = 1732. */
        cr_expect(fabs((double) tsim_prv(p, "arrivals") - 250000.0) < 1732, "%s arrivals %llu", name, (unsigned long long) tsim_prv(p, "arrivals"));
        cr_expect(fabs(tsim_prl(p, "queue")->mean - want) < 0.05 * want, "%s: mean wait %g, M/M/1 %g", name, tsim_prl(p, "queue")->mean, want);
        /* Behind a router the split is not known beforehand: the offered load is
         * measured, arrivals in the window x mean service; about 0.5 (the
         * binomial split and the window's length vary it by well under 1 %). */
        cr_expect(fabs(tsim_prv(p, "offered_load") - rho) < 0.02, "%s: offered load %g", name, tsim_prv(p, "offered_load"));
        cr_expect(!tsim_prv(p, "saturated"));
    }
    cr_expect_eq(total, 1000000);
    cr_expect_eq(tsim_prv(tsim_pool_named(&r, "lb"), "served"), 1000000);
    sim_result_free(&r);
}

/* At utilisation 0.9 over 8 servers, random splitting is 8 M/M/1 queues (mean
 * wait 9 ms, P99 ln(90) / 0.1 = 45 ms), while looking at the load first keeps
 * queues short: measured, least_outstanding about 1.2 ms / 7.7 ms and
 * power_of_two about 2.2 / 10 ms (seeds 1 and 2, 2 10^5 requests).  The test
 * asks that each at least halve both the mean and the P99 of random's wait:
 * random's mean over 2 10^5 requests at rho = 0.9 varies by about 15 %, far
 * inside that margin. */
Test(route, load_aware_beats_random)
{
    char text[2048];
    sim_result rnd, lo, p2;
    router_scenario(text, sizeof text, "random", 8, 7.2, 200000);
    tsim_run("route.ini", text, 1, &rnd);
    router_scenario(text, sizeof text, "least_outstanding", 8, 7.2, 200000);
    tsim_run("route.ini", text, 1, &lo);
    router_scenario(text, sizeof text, "power_of_two", 8, 7.2, 200000);
    tsim_run("route.ini", text, 1, &p2);
    cr_expect(!tsim_sat(&rnd) && !tsim_sat(&lo) && !tsim_sat(&p2));
    cr_expect(fabs(tsim_sys(&rnd, "queue")->mean - 9.0) < 0.3 * 9.0, "random: mean wait %g, M/M/1 9",
              tsim_sys(&rnd, "queue")->mean);
    cr_expect_lt(tsim_sys(&lo, "queue")->mean, 0.5 * tsim_sys(&rnd, "queue")->mean, "least_outstanding %g vs random %g",
                 tsim_sys(&lo, "queue")->mean, tsim_sys(&rnd, "queue")->mean);
    cr_expect_lt(tsim_sys(&lo, "queue")->p99, 0.5 * tsim_sys(&rnd, "queue")->p99,
                 "least_outstanding P99 %g vs random %g", tsim_sys(&lo, "queue")->p99, tsim_sys(&rnd, "queue")->p99);
    cr_expect_lt(tsim_sys(&p2, "queue")->mean, 0.5 * tsim_sys(&rnd, "queue")->mean, "power_of_two %g vs random %g",
                 tsim_sys(&p2, "queue")->mean, tsim_sys(&rnd, "queue")->mean);
    cr_expect_lt(tsim_sys(&p2, "queue")->p99, 0.5 * tsim_sys(&rnd, "queue")->p99, "power_of_two P99 %g vs random %g",
                 tsim_sys(&p2, "queue")->p99, tsim_sys(&rnd, "queue")->p99);
    sim_result_free(&rnd);
    sim_result_free(&lo);
    sim_result_free(&p2);
}

/* Same seed, same numbers; the policy's stream is the router's own: adding a
 * pool elsewhere does not change where random sends requests. */
Test(route, random_stream_is_the_routers_own)
{
    char a[2048], b[2200];
    router_scenario(a, sizeof a, "random", 4, 2.0, 20000);
    snprintf(b, sizeof b, "%s[pool unused]\nservice_ms = exp(mean=3)\n", a);
    sim_result x, y;
    tsim_run("route.ini", a, 7, &x);
    tsim_run("route.ini", b, 7, &y);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(tsim_pv(&x, i + 1, "arrivals"), tsim_pv(&y, i + 1, "arrivals"));
        cr_expect_eq(tsim_pl(&x, i + 1, "queue")->mean, tsim_pl(&y, i + 1, "queue")->mean);
    }
    sim_result_free(&x);
    sim_result_free(&y);
}

/* ---- a station kind defined here: a pure delay ------------------------------ */

typedef struct delay_cfg {
    double ms;                /* delay, ms */
} delay_cfg;

typedef struct delay_station {
    station st;               /* common part; must be first */
    uint64_t passed;          /* requests delayed, all */
} delay_station;

static void delay_done(evq *q, void *subject, int64_t arg)
{
    (void) q;
    delay_station *d = subject;
    request *r = (request *) (intptr_t) arg;
    d->passed++;
    station_forward(&d->st, r, 0);
}

static void delay_arrive(station *st, request *r)
{
    const delay_cfg *c = st->cfg->ext;
    r->service_ns += simtime_from_ms(c->ms);   /* its time counts as service (the latency breakdown adds up) */
    station_after(st, simtime_from_ms(c->ms), delay_done, st, (int64_t) (intptr_t) r);
}

static int delay_report(station *st, pool_result *out)
{
    return pool_result_add(out, "passed", (double) ((delay_station *) st)->passed);
}

static void delay_destroy(station *st)
{
    station_fini(st);
    free(st);
}

static const station_ops DELAY_OPS = { .arrive = delay_arrive, .report = delay_report, .destroy = delay_destroy };

static station *delay_new(const pool_cfg *cfg, const station_env *env)
{
    delay_station *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    if (station_init(&d->st, &DELAY_OPS, cfg, env) != 0) {
        delay_destroy(&d->st);
        return NULL;
    }
    d->st.capacity = 1;
    return &d->st;
}

static const scn_key DELAY_KEYS[] = { { "delay_ms", "", "delay, ms (required)" }, { NULL, NULL, NULL } };

static int delay_parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    delay_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail_sec(x, sec, NULL, "out of memory");
    p->ext = c;
    if (!scn_value(x, sec, "delay_ms")) return scn_fail_sec(x, sec, "delay_ms", "missing (required)");
    return scn_num(x, sec, "delay_ms", 0, 0, 0, 1e9, &c->ms);
}

static void delay_free_cfg(pool_cfg *p) { free(p->ext); }

/* The one row. */
static const station_kind DELAY_KIND = {
    .name = "delay", .help = "a pure delay", .keys = DELAY_KEYS, .parse = delay_parse,
    .make = delay_new, .free_cfg = delay_free_cfg, .min_next = 0, .max_next = 1,
};

/* router (round robin) -> delay 1 ms | delay 3 ms -> one pool of 1000 servers
 * with constant 0.5 ms service (nobody waits): every request takes exactly
 * 1.5 or 3.5 ms, alternately. */
Test(route, delay_kind_from_the_test_plugs_in)
{
    cr_assert_eq(station_kind_register(&DELAY_KIND), 0);
    cr_assert_eq(station_kind_register(&DELAY_KIND), 0, "registering the same row twice is harmless");
    const char *text =
        "[sim]\nrequests = 10000\nwarmup = 1000\n[workload]\nrate = 100\ntarget = lb\n"
        "[pool lb]\nkind = router\npolicy = round_robin\nnext = short, long\n"
        "[pool short]\nkind = delay\ndelay_ms = 1\nnext = app\n"
        "[pool long]\nkind = delay\ndelay_ms = 3\nnext = app\n"
        "[pool app]\nservers = 1000\nservice_ms = const(0.5)\n";
    sim_result r;
    tsim_run("route.ini", text, 3, &r);
    cr_expect_eq(tsim_n(&r, "served"), 10000);
    cr_expect_float_eq(tsim_sys(&r, "e2e")->mean, 2.5, 1e-9, "e2e mean %g", tsim_sys(&r, "e2e")->mean);
    cr_expect_float_eq(tsim_sys(&r, "e2e")->max, 3.5, 3.5 * 0.0005, "e2e max %g",
                       tsim_sys(&r, "e2e")->max);    /* histogram resolution */
    tsim_pr s = tsim_pool_named(&r, "short"), l = tsim_pool_named(&r, "long");
    cr_expect_eq(tsim_prv(s, "arrivals"), 5000);
    cr_expect_eq(tsim_prv(l, "arrivals"), 5000);
    cr_expect_eq(tsim_prv(tsim_pool_named(&r, "app"), "arrivals"), 10000);
    /* Its own report row; the kind's name in the table. */
    /* Every arrival passed one of them, but for the few still inside when the run stopped. */
    double passed = tsim_prv(s, "passed") + tsim_prv(l, "passed");
    cr_expect(passed >= 10998 && passed <= 11002, "passed %g", passed);
    cr_expect_str_eq(tsim_prt(s, "kind"), "delay");
    /* Its key is checked like any other. */
    char err[512];
    cr_expect_neq(tsim_load_error("route.ini", "[workload]\nrate = 1\n[pool d]\nkind = delay\ndelay = 1\n", err, sizeof err), 0);
    cr_expect(strstr(err, "did you mean 'delay_ms'") != NULL, "%s", err);
    sim_result_free(&r);
}

/* ---- a station through a stub sink (no scenario text, no database) ------------ */

typedef struct stub {
    simtime_t left[8];        /* times requests left, ns */
    int nleft;
    int released;
    int measuring;
} stub;

static void stub_leave(void *ctx, request *r)
{
    stub *s = ctx;
    s->left[s->nleft++] = r->at ? evq_now(r->at->q) : -1;
    s->released++;
    free(r);
}
static void stub_outcome(void *ctx, request *r, req_outcome o) { (void) ctx; r->outcome = (uint8_t) o; }
static void stub_release(void *ctx, request *r) { ((stub *) ctx)->released++; free(r); }
static void stub_oom(void *ctx) { (void) ctx; cr_assert_fail("out of memory"); }

Test(route, generic_station_with_stub_sink)
{
    pool_cfg cfg = { .name = "p", .kind = &pool_kind_generic, .servers = 2 };
    char err[256];
    cr_assert_eq(dist_parse(&cfg.service, "const(2)", "", err, sizeof err), 0, "%s", err);
    stub s = { .measuring = 1 };
    station_sink sink = { .ctx = &s, .leave = stub_leave, .outcome = stub_outcome, .release = stub_release,
                          .oom = stub_oom, .measuring = &s.measuring };
    evq *q = evq_new();
    station_env env = { .q = q, .seed = 1, .index = 0, .sink = &sink };
    station *st = cfg.kind->make(&cfg, &env);
    cr_assert(st != NULL);
    /* Three requests at t = 0 into 2 servers of 2 ms: they leave at 2, 2 and 4 ms. */
    for (int i = 0; i < 3; i++) {
        request *r = calloc(1, sizeof *r);
        r->id = (uint64_t) i;
        r->measured = 1;
        station_enter(st, r);
    }
    cr_expect_eq(st->inside, 3);
    cr_expect_eq(st->qlen, 1);
    evq_run(q, SIMTIME_NEVER);
    cr_assert_eq(s.nleft, 3);
    cr_expect_eq(s.left[0], simtime_from_ms(2));
    cr_expect_eq(s.left[1], simtime_from_ms(2));
    cr_expect_eq(s.left[2], simtime_from_ms(4));
    cr_expect_eq(st->inside, 0);
    cr_expect_eq(st->served, 3);
    cr_expect_eq(st->win_arrivals, 3);
    st->ops->destroy(st);
    evq_free(q);
    dist_free(&cfg.service);
}

/* ---- LLM pools: per-replica routing ------------------------------------------- */

#define LLM_ROUTED_AT(rate) \
    "[sim]\nrequests = 3000\nwarmup = 300\n[workload]\nrate = " #rate "\n" \
    "prompt_tokens = lognormal(mean=600, cv=1)\noutput_tokens = lognormal(mean=150, cv=1)\n" \
    "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 4\ntruncate = yes\nkv_blocks = 600\n"
static const char *LLM_ROUTED = LLM_ROUTED_AT(30);

/* routing = shared is the default: the same numbers to the last digit. */
Test(route, llm_shared_routing_is_the_default)
{
    char text[1024];
    sim_result a, b;
    tsim_run("route.ini", LLM_ROUTED, 5, &a);
    snprintf(text, sizeof text, "%srouting = shared\n", LLM_ROUTED);
    tsim_run("route.ini", text, 5, &b);
    cr_expect_eq(tsim_n(&a, "events"), tsim_n(&b, "events"));
    cr_expect_eq(tsim_sys(&a, "ttft")->mean, tsim_sys(&b, "ttft")->mean);
    cr_expect_eq(tsim_sys(&a, "e2e")->p99, tsim_sys(&b, "e2e")->p99);
    sim_result_free(&a);
    sim_result_free(&b);
}

/* Per-replica queues: nothing is lost (preemptions go back to the replica's
 * own queue) and every scheduler works.  At 20 requests/s (continuous
 * batching, about 60 % of the pool's capacity) round robin queues longer than
 * the shared queue (a replica can sit idle while another has a queue: measured
 * 21 ms vs 1.7 ms mean wait), and least_outstanding, which looks at the
 * replicas, less than round robin (14 ms); the run is deterministic, and the
 * factors are far from a tie. */
Test(route, llm_per_replica_routing)
{
    const char *sched[] = { "static", "dynamic", "continuous", "chunked" };
    for (int i = 0; i < 4; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%sscheduler = %s\nrouting = round_robin\n", LLM_ROUTED, sched[i]);
        sim_result r;
        tsim_run("route.ini", text, 5, &r);
        cr_expect_eq(tsim_n(&r, "served") + tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"), tsim_n(&r, "requests"),
                     "%s", sched[i]);
        cr_expect_eq(tsim_n(&r, "served"), tsim_n(&r, "requests"), "%s: served %llu", sched[i],
                     (unsigned long long) tsim_n(&r, "served"));
        cr_expect_eq(tsim_sys(&r, "ttft")->n, tsim_n(&r, "served"), "%s", sched[i]);
        sim_result_free(&r);
    }
    sim_result shared, rr, lo;
    tsim_run("route.ini", LLM_ROUTED_AT(20), 5, &shared);
    tsim_run("route.ini", LLM_ROUTED_AT(20) "routing = round_robin\n", 5, &rr);
    tsim_run("route.ini", LLM_ROUTED_AT(20) "routing = least_outstanding\n", 5, &lo);
    cr_expect_gt(tsim_sys(&rr, "queue")->mean, 3 * tsim_sys(&shared, "queue")->mean, "round robin %g vs shared %g", tsim_sys(&rr, "queue")->mean, tsim_sys(&shared, "queue")->mean);
    cr_expect_lt(tsim_sys(&lo, "queue")->mean, tsim_sys(&rr, "queue")->mean, "least outstanding %g vs round robin %g", tsim_sys(&lo, "queue")->mean, tsim_sys(&rr, "queue")->mean);
    sim_result_free(&shared);
    sim_result_free(&rr);
    sim_result_free(&lo);
}

/* ---- bad input ------------------------------------------------------------------ */

Test(route, bad_router_input)
{
    char err[512];
    const char *base = "[workload]\nrate = 1\ntarget = lb\n[pool a]\nservice_ms = exp(mean=1)\n"
                       "[pool b]\nservice_ms = exp(mean=1)\n";
    char text[1024];
    snprintf(text, sizeof text, "%s[pool lb]\nkind = router\n", base);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "[pool lb] next: kind = router needs at least 1 pool") != NULL, "%s", err);
    snprintf(text, sizeof text, "%s[pool lb]\nkind = router\npolicy = fastest\nnext = a, b\n", base);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "policy: unknown value 'fastest' (valid: round_robin,random,least_outstanding,power_of_two,least_kv,prefix_affinity,complexity)") != NULL, "%s", err);
    snprintf(text, sizeof text, "%s[pool lb]\nkind = router\nnext = a, c\n", base);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "next: no pool named 'c'") != NULL, "%s", err);
    snprintf(text, sizeof text, "%s[pool lb]\nkind = router\nnext = a, a\n", base);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "'a' is named twice") != NULL, "%s", err);
    snprintf(text, sizeof text, "%s[pool lb]\nkind = router\nnext = a, b\nqueue_limit = 3\n", base);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "[pool lb] queue_limit: a router holds no queue") != NULL, "%s", err);
    snprintf(text, sizeof text, "%s[pool lb]\nkind = router\nnext = a, b\nservers = 3\n", base);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "servers: not valid for kind = router pools (only for kind = generic)") != NULL, "%s", err);
    /* A list of next pools on a kind that takes one. */
    snprintf(text, sizeof text, "%s[pool lb]\nservice_ms = exp(mean=1)\nnext = a, b\n", base);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "kind = generic takes 1 pool in next, not 2") != NULL, "%s", err);
    /* A cycle through a router. */
    snprintf(text, sizeof text, "[workload]\nrate = 1\ntarget = lb\n[pool a]\nservice_ms = exp(mean=1)\nnext = lb\n"
                                "[pool b]\nservice_ms = exp(mean=1)\n[pool lb]\nkind = router\nnext = b, a\n");
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "pools form a cycle") != NULL, "%s", err);
    /* An LLM pool's routing names a policy or shared. */
    cr_expect_neq(tsim_load_error("route.ini", "[workload]\nrate = 1\n[pool c]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrouting = sticky\n",
                             err, sizeof err), 0);
    cr_expect(strstr(err, "routing: unknown value 'sticky' (valid: shared,round_robin,random,least_outstanding,power_of_two,least_kv,prefix_affinity,complexity)") != NULL,
              "%s", err);
}

/* The choice strings in error messages come from the tables themselves. */
Test(route, choices_come_from_the_tables)
{
    char err[512];
    const char *llm = "[workload]\nrate = 1\n[pool c]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n";
    char text[512];
    snprintf(text, sizeof text, "%sscheduler = eager\n", llm);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    cr_expect(strstr(err, "scheduler: unknown value 'eager' (valid: static,dynamic,continuous,chunked)") != NULL, "%s", err);
    snprintf(text, sizeof text, "%scost = magic\n", llm);
    cr_expect_neq(tsim_load_error("route.ini", text, err, sizeof err), 0);
    char models[256], want[300];
    cost_choices(models, sizeof models);
    for (char *c = models; *c; c++)
        if (*c == '|') *c = ',';
    snprintf(want, sizeof want, "cost: unknown value 'magic' (valid: %s)", models);
    cr_expect(strstr(err, want) != NULL, "%s", err);
    cr_expect_neq(tsim_load_error("route.ini", "[workload]\nrate = 1\n[pool c]\nkind = teleport\n", err, sizeof err), 0);
    cr_expect(strstr(err, "kind: unknown value 'teleport' (valid: generic,llm,") != NULL, "%s", err);
    cr_expect(strstr(err, "router") != NULL, "%s", err);
    /* A cost model's keys belong to LLM pools. */
    cr_expect_neq(tsim_load_error("route.ini", "[workload]\nrate = 1\n[pool c]\nservice_ms = exp(mean=1)\ncompute_eff = 0.5\n", err, sizeof err), 0);
    cr_expect(strstr(err, "compute_eff: not valid for kind = generic pools (only for kind = llm)") != NULL, "%s", err);
}
