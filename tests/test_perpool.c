/* test_perpool.c -- Criterion tests of the per-pool and per-route latencies
 * and of the TTFT breakdown (sim/run/sim.c: path_add, ttft_parts; docs/metrics.md):
 *   - one pool: its E2E (and an LLM pool's TTFT, TPOT, ITL) are the system's, exactly;
 *   - a complexity router in front of two LLM pools: the routes' served counts add
 *     up to the requests served, each route's latencies are its target pool's, and
 *     the system's P99 lies between the routes' P99s; ITL per pool;
 *   - the TTFT breakdown of a lone request through a network hop, by hand:
 *     network = the RTT (both halves), overhead = the pool's request overhead,
 *     prefill = 5 + 0.1 x prompt ms (linear cost), queue 0;
 *   - under load, with a result cache and a streaming hop (LATSIM_CHECK set, so
 *     that every request's components are checked to add up to its TTFT
 *     exactly): the components' means add up to the mean TTFT, the shares to 1;
 *   - disaggregated prefill/decode: the KV transfer comes after the first token
 *     (its share of TTFT is 0) while it is a share of E2E;
 *   - the rows: pool e2e/ttft rows, route scopes, ttft_breakdown rows in JSON. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latsim/report.h"
#include "run/breakdown.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "tsim.h"

static void run_text(const char *text, sim_result *res) { tsim_run("/tmp/test_perpool.ini", text, 1, res); }

#define LINEAR_KEYS \
    "cost = linear\nstep_base_ms = 5\nprefill_ms_per_token = 0.1\n" \
    "decode_ms_per_seq = 0.05\nkv_ms_per_1k_tokens = 0.01\n"

static int pool_index(const sim_result *r, const char *name)
{
    for (int i = 0; i < tsim_npools(r); i++)
        if (!strcmp(tsim_pool(r, i), name)) return i;
    cr_assert_fail("no pool %s", name);
    return -1;
}

/* The number of R's TTFT-breakdown rows (ttft_breakdown.*: 3 per component with an LLM pool, else 0). */
static int ttft_bd_rows(const sim_result *r)
{
    int n = 0;
    for (size_t i = 0; i < r->rows.n; i++) n += !strncmp(r->rows.row[i].metric, "ttft_breakdown.", 15);
    return n;
}

/* The TTFT breakdown's row SET (tsim_bd) of every component (TB_*) of R into V. */
static void ttft_bd(const sim_result *r, const char *set, double v[TB_N])
{
    for (int k = 0; k < TB_N; k++) v[k] = tsim_bd(r, set, k);
}

/* A route's results as its rows hold them (scope "route:ROUTER->TARGET", col_paths.c). */
typedef struct route_view {
    char router[64], target[64];   /* the station choosing and the out-edge's pool */
    int edge;                 /* its index in the router's `next` (0-based) */
    uint64_t served;          /* measured served requests routed along it */
    int has_tokens;           /* ttft and tpot rows are there */
    stat_summary e2e, ttft, tpot;   /* ms */
} route_view;

/* R's routes, in row order (pool then edge), into V (at most MAX).  Returns how many R has. */
static int routes_of(const sim_result *r, route_view *v, int max)
{
    int n = 0;
    for (size_t i = 0; i < r->rows.n; i++) {
        const sim_row *w = &r->rows.row[i];
        if (strcmp(w->family, "paths") || strcmp(w->metric, "router")) continue;
        if (n < max) {
            route_view *t = &v[n];
            const sim_row *target = sim_result_row(r, w->scope, "target", "value");
            cr_assert(w->text && target && target->text, "route %s: no router or target name", w->scope);
            snprintf(t->router, sizeof t->router, "%s", w->text);
            snprintf(t->target, sizeof t->target, "%s", target->text);
            t->edge = (int) sim_result_get(r, w->scope, "edge", "value");
            t->served = (uint64_t) sim_result_get(r, w->scope, "served", "value");
            t->e2e = tsim_latency(r, w->scope, "e2e");
            t->has_tokens = sim_result_row(r, w->scope, "ttft", "mean") != NULL;
            if (t->has_tokens) {
                t->ttft = tsim_latency(r, w->scope, "ttft");
                t->tpot = tsim_latency(r, w->scope, "tpot");
            }
        }
        n++;
    }
    return n;
}

static void expect_same(const stat_summary *a, const stat_summary *b, const char *what)
{
    cr_expect_eq(a->n, b->n, "%s: n %llu vs %llu", what, (unsigned long long) a->n, (unsigned long long) b->n);
    cr_expect(a->mean == b->mean && a->p50 == b->p50 && a->p90 == b->p90 && a->p99 == b->p99 && a->max == b->max,
              "%s: mean %.17g/%.17g p99 %.17g/%.17g", what, a->mean, b->mean, a->p99, b->p99);
    cr_expect(!memcmp(a->cdf, b->cdf, sizeof a->cdf), "%s: cdf differs", what);
}

Test(perpool, single_generic_pool_is_the_system)
{
    sim_result r;
    run_text("[sim]\nrequests = 5000\nwarmup = 500\n[workload]\narrival = poisson\nrate = 3\n"
             "[pool a]\nservice_ms = exp(mean=200)\nservers = 1\n", &r);
    cr_assert_eq(tsim_npools(&r), 1);
    expect_same(&(*tsim_pl(&r, 0, "e2e")), tsim_sys(&r, "e2e"), "e2e");
    cr_expect_eq(tsim_has_pl(&r, 0, "ttft"), 0);
    cr_expect_eq(routes_of(&r, NULL, 0), 0);
    cr_expect_eq(ttft_bd_rows(&r), 0);
    sim_result_free(&r);
}

Test(perpool, single_llm_pool_is_the_system)
{
    sim_result r;
    run_text("[sim]\nrequests = 800\nwarmup = 100\n[workload]\narrival = poisson\nrate = 4\n"
             "prompt_tokens = lognormal(mean=500, cv=0.5)\noutput_tokens = lognormal(mean=50, cv=0.5)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS, &r);
    tsim_pr p = tsim_pool_at(&r, 0);
    cr_assert(tsim_has_prl(p, "ttft") && tsim_has_prl(p, "itl"));
    expect_same(tsim_prl(p, "e2e"), tsim_sys(&r, "e2e"), "e2e");
    expect_same(tsim_prl(p, "ttft"), tsim_sys(&r, "ttft"), "ttft");
    expect_same(tsim_prl(p, "tpot"), tsim_sys(&r, "tpot"), "tpot");
    expect_same(tsim_prl(p, "itl"), tsim_sys(&r, "itl"), "itl");
    sim_result_free(&r);
}

/* Two LLM pools behind a complexity router (no cache: every request takes one route). */
static const char *ROUTED =
    "[sim]\nrequests = 3000\nwarmup = 300\n[workload]\narrival = poisson\nrate = 6\ntarget = gw\n"
    "prompt_tokens = lognormal(mean=600, cv=0.5)\noutput_tokens = lognormal(mean=60, cv=0.5)\n"
    "complexity = uniform(min=0, max=1)\n"
    "[pool gw]\nkind = router\npolicy = complexity\ncomplexity_cut = 0.5\nclassifier_ms = const(3)\nnext = small, big\n"
    "[pool small]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS
    "[pool big]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ncost = linear\nstep_base_ms = 10\n"
    "prefill_ms_per_token = 0.3\ndecode_ms_per_seq = 0.2\nkv_ms_per_1k_tokens = 0.02\n";

Test(perpool, routes_of_a_complexity_router)
{
    sim_result r;
    run_text(ROUTED, &r);
    route_view rv[2];
    cr_assert_eq(routes_of(&r, rv, 2), 2);
    const route_view *a = &rv[0], *b = &rv[1];
    cr_assert(a->has_tokens && b->has_tokens);
    cr_expect_str_eq(a->router, "gw");
    cr_expect_str_eq(a->target, "small");
    cr_expect_str_eq(b->target, "big");
    cr_expect_eq(a->edge, 0);
    cr_expect_eq(b->edge, 1);
    cr_expect_eq(a->served + b->served, tsim_n(&r, "served"), "routes %llu + %llu vs served %llu",
                 (unsigned long long) a->served,
                 (unsigned long long) b->served, (unsigned long long) tsim_n(&r, "served"));
    cr_expect_gt(a->served, 1000);
    cr_expect_gt(b->served, 1000);
    cr_expect_eq(a->e2e.n, a->served);
    /* Each target is reached by its route only: the route's requests are the pool's. */
    int is = pool_index(&r, "small"), ib = pool_index(&r, "big"), ig = pool_index(&r, "gw");
    expect_same(&a->e2e, &(*tsim_pl(&r, is, "e2e")), "small e2e");
    expect_same(&b->e2e, &(*tsim_pl(&r, ib, "e2e")), "big e2e");
    expect_same(&a->ttft, &(*tsim_pl(&r, is, "ttft")), "small ttft");
    expect_same(&b->tpot, &(*tsim_pl(&r, ib, "tpot")), "big tpot");
    /* Every request passed the router: its E2E is the system's. */
    expect_same(&(*tsim_pl(&r, ig, "e2e")), tsim_sys(&r, "e2e"), "router e2e");
    cr_expect_eq(tsim_has_pl(&r, ig, "ttft"), 0);
    /* The mixture's P99 lies between its parts' (within a bin of the histogram). */
    double lo = fmin(a->e2e.p99, b->e2e.p99), hi = fmax(a->e2e.p99, b->e2e.p99);
    cr_expect(tsim_sys(&r, "e2e")->p99 >= lo * (1 - 1e-3) && tsim_sys(&r, "e2e")->p99 <= hi * (1 + 1e-3),
              "p99 %g not in [%g, %g]", tsim_sys(&r, "e2e")->p99, lo, hi);
    lo = fmin(a->ttft.p99, b->ttft.p99);
    hi = fmax(a->ttft.p99, b->ttft.p99);
    cr_expect(tsim_sys(&r, "ttft")->p99 >= lo * (1 - 1e-3) && tsim_sys(&r, "ttft")->p99 <= hi * (1 + 1e-3),
              "ttft p99 %g not in [%g, %g]", tsim_sys(&r, "ttft")->p99, lo, hi);
    /* The big pool is slower per token (0.2 vs 0.05 ms per sequence, 10 vs 5 ms a step). */
    cr_expect_gt(b->tpot.p50, a->tpot.p50);
    /* ITL per LLM pool: together, every gap of the run. */
    cr_expect_eq(tsim_pl(&r, is, "itl")->n + tsim_pl(&r, ib, "itl")->n, tsim_sys(&r, "itl")->n);
    cr_expect_gt(tsim_pl(&r, ib, "itl")->p50, tsim_pl(&r, is, "itl")->p50);
    /* ... the run's ITL is their merge (stat_merge): count-weighted mean, extremes, quantiles in between. */
    const stat_summary *x = &(*tsim_pl(&r, is, "itl")), *y = &(*tsim_pl(&r, ib, "itl"));
    cr_expect_float_eq(tsim_sys(&r, "itl")->mean,
                       (x->mean * (double) x->n + y->mean * (double) y->n) / (double) tsim_sys(&r, "itl")->n,
                       1e-12 * tsim_sys(&r, "itl")->mean);
    cr_expect_eq(tsim_sys(&r, "itl")->max, fmax(x->max, y->max));
    cr_expect(tsim_sys(&r, "itl")->p50 >= fmin(x->p50, y->p50) && tsim_sys(&r, "itl")->p50 <= fmax(x->p50, y->p50));
    /* Means: the requests' mixture. */
    double mix = (a->e2e.mean * (double) a->served + b->e2e.mean * (double) b->served) / (double) tsim_n(&r, "served");
    cr_expect_float_eq(mix, tsim_sys(&r, "e2e")->mean, 1e-9 * tsim_sys(&r, "e2e")->mean);
    sim_result_free(&r);
}

/* Three requests 1000 s apart through a hop of RTT 20 ms (bandwidth so high that
 * transfers take < 1 us, no protocol cost) to a pool with a 3 ms request overhead:
 * TTFT = 10 (up) + 3 + 5 + 0.1 x 1000 (prefill) + 10 (the first token back) = 128 ms. */
Test(perpool, ttft_breakdown_by_hand)
{
    sim_result r;
    setenv("LATSIM_CHECK", "1", 1);
    run_text("[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\ntarget = hop\n"
             "prompt_tokens = const(1000)\noutput_tokens = const(11)\n"
             "[pool hop]\nkind = net\nrtt_ms = const(20)\nup_mbps = 1e9\ndown_mbps = 1e9\nproto_ms_per_kb = 0\nnext = chat\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrequest_overhead_ms = 3\n" LINEAR_KEYS, &r);
    unsetenv("LATSIM_CHECK");
    cr_assert_eq(ttft_bd_rows(&r), 3 * TB_N);
    cr_assert_eq(tsim_n(&r, "served"), 3);
    cr_expect_float_eq(tsim_sys(&r, "ttft")->mean, 128.0, 1e-4, "ttft %.9f", tsim_sys(&r, "ttft")->mean);
    double m[TB_N];
    ttft_bd(&r, "ttft_breakdown.mean_ms", m);
    cr_expect_float_eq(m[TB_NETWORK], 20.0, 1e-4, "network %.9f", m[TB_NETWORK]);
    cr_expect_float_eq(m[TB_OVERHEAD], 3.0, 1e-4, "overhead %.9f", m[TB_OVERHEAD]);
    cr_expect_float_eq(m[TB_PREFILL], 105.0, 1e-4, "prefill %.9f", m[TB_PREFILL]);
    cr_expect_eq(m[TB_QUEUE], 0);
    cr_expect_eq(m[TB_DECODE], 0);
    cr_expect_eq(m[TB_KV_TRANSFER], 0);
    cr_expect_eq(m[TB_KV_LOAD], 0);
    cr_expect_float_eq(tsim_bd(&r, "ttft_breakdown.all", TB_PREFILL), 105.0 / 128.0, 1e-6);
    cr_expect_float_eq(tsim_bd(&r, "ttft_breakdown.p99", TB_NETWORK), 20.0 / 128.0, 1e-6);
    sim_result_free(&r);
    /* stream = no: the first token comes with the last byte, after the 10 decode steps. */
    run_text("[sim]\nrequests = 3\nwarmup = 0\n[workload]\narrival = constant\nrate = 0.001\ntarget = hop\n"
             "prompt_tokens = const(1000)\noutput_tokens = const(11)\n"
             "[pool hop]\nkind = net\nrtt_ms = const(20)\nup_mbps = 1e9\ndown_mbps = 1e9\nproto_ms_per_kb = 0\nstream = no\n"
             "next = chat\n[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS, &r);
    cr_expect_float_eq(tsim_sys(&r, "ttft")->mean, tsim_sys(&r, "e2e")->mean, 1e-9);
    double dec = 0;
    for (int k = 1; k <= 10; k++) dec += 5 + 0.05 + 0.01 * (1000 + k) / 1000.0;
    ttft_bd(&r, "ttft_breakdown.mean_ms", m);
    cr_expect_float_eq(m[TB_DECODE], dec, 1e-3, "decode %.9f vs %.9f", m[TB_DECODE], dec);
    cr_expect_float_eq(m[TB_PREFILL], 105.0, 1e-4);
    sim_result_free(&r);
}

/* The three-model gateway of scenarios/gateway_three_models.ini, shortened:
 * client hop, semantic result cache, complexity router, two LLM pools. */
static const char *GATEWAY =
    "[sim]\nrequests = 3000\nwarmup = 300\n[workload]\nrate = 2.5\ntarget = client\n"
    "[class chat]\nshare = 0.7\nprompt_tokens = lognormal(mean=600, cv=0.6)\noutput_tokens = lognormal(mean=100, cv=0.6)\n"
    "complexity = uniform(min=0, max=0.7)\nintents = 300\ncache_ttl_s = 86400\n"
    "[class analysis]\nshare = 0.3\nprompt_tokens = lognormal(mean=1500, cv=0.5)\noutput_tokens = lognormal(mean=200, cv=0.5)\n"
    "complexity = uniform(min=0.4, max=1)\nintents = 100000\ncache_ttl_s = 300\n"
    "[pool client]\nkind = net\npreset = client_broadband\nnext = cache\n"
    "[pool cache]\nkind = result_cache\nhit_ms = lognormal(mean=8, cv=0.3)\nmiss_ms = lognormal(mean=8, cv=0.3)\n"
    "capacity = 20000\nnext = gateway\n"
    "[pool gateway]\nkind = router\npolicy = complexity\noverhead_ms = const(2)\nclassifier_ms = lognormal(mean=15, cv=0.3)\n"
    "complexity_cut = 0.5\nnext = small, big\n"
    "[pool small]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\ntruncate = yes\n"
    "[pool big]\nkind = llm\nmodel = llama-3-70b\ngpu = h100\ntp = 4\nreplicas = 2\ntruncate = yes\n";

Test(perpool, ttft_breakdown_adds_up_with_a_gateway)
{
    sim_result r;
    setenv("LATSIM_CHECK", "1", 1);   /* each request's components are checked to add up exactly */
    run_text(GATEWAY, &r);
    unsetenv("LATSIM_CHECK");
    cr_assert_eq(ttft_bd_rows(&r), 3 * TB_N);
    double m[TB_N], all[TB_N], p99[TB_N], sum = 0, sa = 0, sp = 0;
    ttft_bd(&r, "ttft_breakdown.mean_ms", m);
    ttft_bd(&r, "ttft_breakdown.all", all);
    ttft_bd(&r, "ttft_breakdown.p99", p99);
    for (int k = 0; k < TB_N; k++) {
        cr_expect_geq(m[k], 0);
        sum += m[k];
        sa += all[k];
        sp += p99[k];
    }
    cr_expect_float_eq(sum, tsim_sys(&r, "ttft")->mean, 1e-9 * tsim_sys(&r, "ttft")->mean,
                       "components %.12g vs mean TTFT %.12g", sum, tsim_sys(&r, "ttft")->mean);
    cr_expect_float_eq(sa, 1.0, 1e-9);
    cr_expect_float_eq(sp, 1.0, 1e-9);
    /* Every component this topology has shows up: the client's RTT, the gateway's
     * classifier and the cache lookups, the models' prefill. */
    cr_expect_gt(all[TB_NETWORK], 0.05);
    cr_expect_gt(all[TB_OVERHEAD], 0.05);
    cr_expect_gt(all[TB_PREFILL], 0.05);
    cr_expect_eq(all[TB_KV_TRANSFER], 0);
    /* Cache hits reach no LLM pool: the pools' TTFT counts add up to the misses. */
    int ic = pool_index(&r, "cache"), is = pool_index(&r, "small"), ib = pool_index(&r, "big");
    uint64_t hits = (uint64_t) tsim_pv(&r, ic, "hits");
    cr_expect_gt(hits, 100);
    cr_expect_eq(tsim_pl(&r, is, "ttft")->n + tsim_pl(&r, ib, "ttft")->n + hits, tsim_sys(&r, "ttft")->n);
    route_view rv[2];
    cr_assert_eq(routes_of(&r, rv, 2), 2);
    cr_expect_eq(rv[0].served + rv[1].served + hits, tsim_n(&r, "served"));
    cr_expect_eq(tsim_pl(&r, ic, "e2e")->n, tsim_n(&r, "served"));
    sim_result_free(&r);
}

/* Disaggregated serving: TTFT is the prefill pool's; the KV crosses after it. */
Test(perpool, pd_kv_transfer_is_after_the_first_token)
{
    sim_result r;
    setenv("LATSIM_CHECK", "1", 1);
    run_text("[sim]\nrequests = 600\nwarmup = 60\n[workload]\narrival = poisson\nrate = 3\ntarget = pre\n"
             "prompt_tokens = lognormal(mean=2000, cv=0.5)\noutput_tokens = lognormal(mean=50, cv=0.5)\n"
             "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\nnext = dec\n" LINEAR_KEYS
             "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\nkv_link_gbs = 10\n"
             "kv_link_latency_ms = 0.5\n" LINEAR_KEYS, &r);
    unsetenv("LATSIM_CHECK");
    cr_assert(tsim_bd_row(&r, "breakdown.all", BD_KV_TRANSFER) != NULL, "the KV shares are reported");
    double kvx = tsim_bd(&r, "breakdown.all", BD_KV_TRANSFER);
    cr_expect_gt(kvx, 0.01, "e2e kv_transfer share %g", kvx);
    cr_expect_eq(tsim_bd(&r, "ttft_breakdown.all", TB_KV_TRANSFER), 0);
    cr_expect_eq(tsim_bd(&r, "ttft_breakdown.p99", TB_KV_TRANSFER), 0);
    cr_expect_eq(tsim_bd(&r, "ttft_breakdown.mean_ms", TB_KV_TRANSFER), 0);
    /* The prefill pool emits every first token, the decode pool every last one. */
    int ip = pool_index(&r, "pre"), id = pool_index(&r, "dec");
    cr_expect_eq(tsim_pl(&r, ip, "ttft")->n, tsim_sys(&r, "ttft")->n);
    cr_expect_eq(tsim_pl(&r, id, "ttft")->n, 0);
    cr_expect_eq(tsim_pl(&r, id, "tpot")->n, tsim_sys(&r, "tpot")->n);
    cr_expect_eq(tsim_pl(&r, ip, "tpot")->n, 0);
    expect_same(&(*tsim_pl(&r, ip, "ttft")), tsim_sys(&r, "ttft"), "prefill pool ttft");
    sim_result_free(&r);
}

/* The rows: per-pool latencies in the pool scope, routes in their own, the TTFT breakdown. */
Test(perpool, rows_and_json)
{
    sim_result r;
    run_text(ROUTED, &r);
    report rep;
    cr_assert_eq(report_flatten(&r, -1, &rep), 0);
    route_view rv[2];
    cr_assert_eq(routes_of(&r, rv, 2), 2);
    cr_expect_float_eq(report_get(&rep, "small", "ttft", "p99"), rv[0].ttft.p99, 1e-12);
    cr_expect_float_eq(report_get(&rep, "big", "itl", "p50"), tsim_pl(&r, pool_index(&r, "big"), "itl")->p50, 1e-12);
    cr_expect_float_eq(report_get(&rep, "route:gw->big", "served", "value"), (double) rv[1].served, 0);
    cr_expect_float_eq(report_get(&rep, "route:gw->small", "e2e", "p90"), rv[0].e2e.p90, 1e-12);
    cr_expect_str_eq(report_get_text(&rep, "route:gw->small", "router"), "gw");
    cr_expect_float_eq(report_get(&rep, "", "ttft_breakdown.all.prefill", "value"),
                       tsim_bd(&r, "ttft_breakdown.all", TB_PREFILL), 1e-12);
    cr_expect_float_eq(report_get(&rep, "", "ttft_breakdown.mean_ms.queue", "value"),
                       tsim_bd(&r, "ttft_breakdown.mean_ms", TB_QUEUE), 1e-12);
    /* The router is no token pool: no TTFT rows of its own. */
    cr_expect(isnan(report_get(&rep, "gw", "ttft", "p50")));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_json(&rep, "", f);
    fclose(f);
    cr_expect_not_null(strstr(buf, "\"routes\": {\"gw->small\": {\"router\": \"gw\", \"target\": \"small\""), "%s", buf);
    cr_expect_not_null(strstr(buf, "\"ttft_breakdown\": {\"all\": {\"network\": "), "%s", buf);
    cr_expect_not_null(strstr(buf, "\"mean_ms\": {\"network\": "), "%s", buf);
    free(buf);
    report_free(&rep);
    sim_result_free(&r);
}

/* Per-class ITL (sim/llm/seq.c, ndec_cls): with one class it is the system's,
 * exactly; with two, the classes' gaps add up to the system's gaps, through
 * plain decode steps, speculative steps (several tokens at once: zero gaps),
 * a preemption's recomputation and a KV transfer's join. */
static void class_itl_adds_up(const char *text, int nclasses)
{
    sim_result r;
    run_text(text, &r);
    cr_assert_eq(tsim_nclasses(&r), nclasses);
    uint64_t n = 0;
    for (int c = 0; c < nclasses; c++) {
        stat_summary itl = tsim_class_latency(&r, tsim_class_name(&r, c), "itl");
        cr_expect_gt(itl.n, 0, "class %s has no ITL", tsim_class_name(&r, c));
        n += itl.n;
    }
    cr_expect_eq(n, tsim_sys(&r, "itl")->n, "class ITL gaps %llu, system %llu", (unsigned long long) n,
                 (unsigned long long) tsim_sys(&r, "itl")->n);
    if (nclasses == 1) {
        stat_summary itl = tsim_class_latency(&r, tsim_class_name(&r, 0), "itl");
        expect_same(&itl, tsim_sys(&r, "itl"), "class itl");
    }
    sim_result_free(&r);
}

#define CLASS_WL "[sim]\nrequests = 1500\nwarmup = 150\n[workload]\narrival = poisson\nrate = 4\n"
#define TWO_CLASSES \
    "[class short]\nshare = 0.5\nprompt_tokens = lognormal(mean=300, cv=0.5)\noutput_tokens = lognormal(mean=40, cv=0.5)\n" \
    "[class long]\nshare = 0.5\nprompt_tokens = lognormal(mean=1500, cv=0.5)\noutput_tokens = lognormal(mean=120, cv=0.5)\n"

Test(perpool, one_class_itl_is_the_system)
{
    class_itl_adds_up(CLASS_WL "[class only]\nshare = 1\nprompt_tokens = lognormal(mean=500, cv=0.5)\n"
                      "output_tokens = lognormal(mean=50, cv=0.5)\n"
                      "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS, 1);
}

Test(perpool, class_itl_adds_up_through_spec_preemption_and_pd)
{
    class_itl_adds_up(CLASS_WL TWO_CLASSES "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n" LINEAR_KEYS, 2);
    class_itl_adds_up(CLASS_WL TWO_CLASSES "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n"
                      "spec_method = ngram\nspec_tokens = 4\nspec_acceptance = 0.6\n" LINEAR_KEYS, 2);
    /* Few KV blocks: sequences are preempted and recomputed. */
    class_itl_adds_up(CLASS_WL TWO_CLASSES "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n"
                      "kv_blocks = 400\n" LINEAR_KEYS, 2);
    class_itl_adds_up("[sim]\nrequests = 600\nwarmup = 60\n[workload]\narrival = poisson\nrate = 3\ntarget = pre\n" TWO_CLASSES
                      "[pool pre]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = prefill\nnext = dec\n" LINEAR_KEYS
                      "[pool dec]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nrole = decode\nkv_link_gbs = 10\n"
                      "kv_link_latency_ms = 0.5\n" LINEAR_KEYS, 2);
}
