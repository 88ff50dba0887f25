/* test_station_core.c -- Criterion tests of the station core (sim/core/station.c)
 * and of the two run-time extension points (docs/architecture.md ("Extending latsim")):
 *
 *   - the core counts every station's arrivals, served, rejected, timed out and
 *     failed requests in its moving calls (a kind never touches them): checked
 *     through a stub sink, and through a station kind defined here, a
 *     token-bucket rate limiter (station_kind_register), whose `rejected` the
 *     report shows without the kind counting anything;
 *   - a router's least_outstanding keeps its out-edges' loads in an index
 *     (station_watch): no snapshot read per request, the scan's choice at every
 *     request (LATSIM_CHECK=1 asserts it);
 *   - a routing policy defined here, first_fit (route_policy_register), checked
 *     against the ordered-hunting Erlang loss system.
 *
 * The rate limiter and first_fit are the code of docs/architecture.md ("Extending latsim").
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kind.h"
#include "core/result.h"
#include "core/route.h"
#include "core/station.h"
#include "run/scenario.h"
#include "run/sim.h"
#include "tsim.h"
#include "store/store.h"

static void simulate(const char *text, uint64_t seed, sim_result *out)
{
    char err[1024] = "";
    sqlite3 *db = NULL;
    scenario sc;
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "store_open: %s", err);
    cr_assert_eq(scenario_load_text(&sc, "core.ini", text, NULL, 0, err, sizeof err), 0, "%s\n%s", err, text);
    cr_assert_eq(scenario_resolve(&sc, db, err, sizeof err), 0, "scenario_resolve: %s", err);
    cr_assert_eq(sim_run(&sc, seed, out, err, sizeof err), 0, "sim_run: %s", err);
    scenario_free(&sc);
    store_close(db);
}

static int load_error(const char *text, char *err, size_t n)
{
    scenario sc;
    int rc = scenario_load_text(&sc, "core.ini", text, NULL, 0, err, n);
    scenario_free(&sc);
    return rc;
}

/* ---- the core's counts through a stub sink -------------------------------------- */

typedef struct stub {
    int left, released;       /* requests that left served; records recycled */
    int measuring;            /* the window's flag the station reads */
    int moves;                /* changes of inside the watcher heard */
    uint64_t last, most;      /* the last count it heard, the largest */
} stub;

static void stub_leave(void *ctx, request *r) { ((stub *) ctx)->left++; free(r); }
static void stub_outcome(void *ctx, request *r, req_outcome o) { (void) ctx; r->outcome = (uint8_t) o; }
static void stub_release(void *ctx, request *r) { ((stub *) ctx)->released++; free(r); }
static void stub_oom(void *ctx) { (void) ctx; cr_assert_fail("out of memory"); }

static void stub_moved(void *ctx, int slot, uint64_t inside)
{
    stub *s = ctx;
    cr_assert_eq(slot, 7);
    s->moves++;
    s->last = inside;
    if (inside > s->most) s->most = inside;
}

/* A kind whose arrive does what the request's id says, with no counting of its own. */
static void script_arrive(station *st, request *r)
{
    switch (r->id % 5) {
    case 0: station_forward(st, r, 0); break;        /* served (no out-edge: it leaves) */
    case 1: station_pass(st, r, 0); break;           /* passed on unserved */
    case 2: station_finish(st, r); break;            /* answered here: served */
    case 3: station_reject(st, r); break;
    default: station_drop(st, r, OUT_FAILED); break;
    }
}

/* Waits in the queue, never served: queue_limit and timeout_ms act. */
static void queue_arrive(station *st, request *r) { station_enqueue(st, r); }

static void plain_destroy(station *st) { station_fini(st); }

static void stub_station(station *st, const station_ops *ops, const pool_cfg *cfg, stub *s, station_sink *sink,
                         evq **q)
{
    *sink = (station_sink) { .ctx = s, .leave = stub_leave, .outcome = stub_outcome, .release = stub_release,
                             .oom = stub_oom, .measuring = &s->measuring };
    *q = evq_new();
    cr_assert_not_null(*q);
    station_env env = { .q = *q, .seed = 1, .index = 0, .sink = sink };
    cr_assert_eq(station_init(st, ops, cfg, &env), 0);
}

static request *new_request(uint64_t id, int measured)
{
    request *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    r->id = id;
    r->measured = (uint8_t) measured;
    return r;
}

/* 10 measured requests, then 5 that are not: each of the five moves twice.
 * Only the measured ones are counted: 10 arrivals, 4 served (forward, finish),
 * 2 rejected, 2 failed, the passed ones not served; every one is counted in
 * the window's arrivals, and the watcher hears each change of inside. */
Test(station_core, moving_calls_count_once)
{
    static const station_ops OPS = { .arrive = script_arrive, .destroy = plain_destroy };
    pool_cfg cfg = { .name = "script" };
    stub s = { .measuring = 1 };
    station_sink sink;
    evq *q;
    station st;
    stub_station(&st, &OPS, &cfg, &s, &sink, &q);
    cr_assert_eq(station_watch(&st, stub_moved, &s, 7), 0);
    for (uint64_t i = 0; i < 15; i++) station_enter(&st, new_request(i, i < 10));
    cr_expect_eq(st.arrivals, 10);
    cr_expect_eq(st.served, 4);
    cr_expect_eq(st.rejected, 2);
    cr_expect_eq(st.failed, 2);
    cr_expect_eq(st.timed_out, 0);
    cr_expect_eq(st.win_arrivals, 15);
    cr_expect_eq(st.inside, 0);
    cr_expect_eq(s.left, 9);                  /* forwarded, passed and finished: 3 of every 5 */
    cr_expect_eq(s.released, 6);
    cr_expect_eq(s.moves, 30);
    cr_expect_eq(s.last, 0);
    cr_expect_eq(s.most, 1);
    station_fini(&st);
    evq_free(q);
}

/* The queue's limit and timeout count through the same calls: of 3 measured
 * requests at t = 0 into a queue of 2, one is rejected; the two waiting time out
 * after 1 ms. */
Test(station_core, queue_limit_and_timeout_count_once)
{
    static const station_ops OPS = { .arrive = queue_arrive, .destroy = plain_destroy };
    pool_cfg cfg = { .name = "queue", .queue_limit = 2, .timeout_ms = 1 };
    stub s = { .measuring = 1 };
    station_sink sink;
    evq *q;
    station st;
    stub_station(&st, &OPS, &cfg, &s, &sink, &q);
    for (uint64_t i = 0; i < 3; i++) station_enter(&st, new_request(i, 1));
    cr_expect_eq(st.rejected, 1);
    cr_expect_eq(st.qlen, 2);
    evq_run(q, SIMTIME_NEVER);
    cr_expect_eq(st.arrivals, 3);
    cr_expect_eq(st.timed_out, 2);
    cr_expect_eq(st.rejected, 1);
    cr_expect_eq(st.served, 0);
    cr_expect_eq(st.inside, 0);
    cr_expect_null(station_peek(&st));        /* recycles the timed-out tombstones */
    cr_expect_eq(s.released, 3);
    station_fini(&st);
    evq_free(q);
}

/* ---- a station kind defined here: a token-bucket rate limiter ------------------ */

typedef struct limiter_cfg {
    double rate_per_s;        /* tokens added per second */
    double burst;             /* bucket size, tokens (>= 1) */
} limiter_cfg;

typedef struct limiter {
    station st;               /* common part; must be first */
    double tokens;            /* tokens in the bucket at time `at` */
    simtime_t at;             /* when `tokens` was last brought up to date, ns */
    uint64_t forwarded;       /* measured requests let through */
} limiter;

/* A request takes a token and goes on to `next`, or, the bucket empty, is
 * rejected.  The core counts it: an arrival, then served or rejected. */
static void limiter_arrive(station *st, request *r)
{
    limiter *l = (limiter *) st;
    const limiter_cfg *c = st->cfg->ext;
    simtime_t now = evq_now(st->q);
    l->tokens = fmin(c->burst, l->tokens + c->rate_per_s * simtime_to_s(now - l->at));
    l->at = now;
    if (l->tokens < 1) {
        station_reject(st, r);
        return;
    }
    l->tokens -= 1;
    if (r->measured) l->forwarded++;
    station_forward(st, r, 0);
}

static int limiter_report(station *st, pool_result *out)
{
    return pool_result_add(out, "forwarded", (double) ((limiter *) st)->forwarded);
}

static void limiter_destroy(station *st)
{
    station_fini(st);
    free(st);
}

static const station_ops LIMITER_OPS = { .arrive = limiter_arrive, .report = limiter_report,
                                         .destroy = limiter_destroy };

static station *limiter_new(const pool_cfg *cfg, const station_env *env)
{
    limiter *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    if (station_init(&l->st, &LIMITER_OPS, cfg, env) != 0) {
        limiter_destroy(&l->st);
        return NULL;
    }
    l->tokens = ((const limiter_cfg *) cfg->ext)->burst;   /* the bucket starts full */
    l->st.capacity = 1;                                     /* never busy: utilisation 0 */
    return &l->st;
}

static const scn_key LIMITER_KEYS[] = {
    { "rate_per_s", "", "requests let through per second, on average (required)" },
    { "burst", "1", "bucket size: requests let through at once after a quiet spell" },
    { NULL, NULL, NULL },
};

static int limiter_parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    limiter_cfg *c = calloc(1, sizeof *c);
    if (!c) return scn_fail_sec(x, sec, NULL, "out of memory");
    p->ext = c;
    if (!scn_value(x, sec, "rate_per_s")) return scn_fail_sec(x, sec, "rate_per_s", "missing (required)");
    if (scn_num(x, sec, "rate_per_s", 0, 0, 1, 1e12, &c->rate_per_s)) return -1;
    return scn_num(x, sec, "burst", 1, 1, 0, 1e12, &c->burst);
}

static void limiter_free_cfg(pool_cfg *p)
{
    free(p->ext);
    p->ext = NULL;
}

static const station_kind LIMITER_KIND = {
    .name = "rate_limit",
    .help = "a token bucket: requests over rate_per_s (beyond a burst) are rejected, the rest go to next",
    .keys = LIMITER_KEYS,
    .parse = limiter_parse,
    .make = limiter_new,
    .free_cfg = limiter_free_cfg,
    .min_next = 1,
    .max_next = 1,
};

#define LIMITED(arrival, rate, limit, burst, requests) \
    "[sim]\nrequests = " #requests "\nwarmup = 1000\n[workload]\narrival = " arrival "\nrate = " #rate "\n" \
    "target = gate\n[pool gate]\nkind = rate_limit\nrate_per_s = " #limit "\nburst = " #burst "\nnext = app\n" \
    "[pool app]\nservers = 20\nservice_ms = exp(mean=50)\n"

/* Poisson arrivals at 200/s into a bucket of 100/s (burst 10), then a pool far
 * from saturation (utilisation 0.25).  The bucket is nearly always empty (its
 * deficit is the workload of an M/D/1 queue at load 2, which seldom drains), so
 * the limiter lets through 100/s up to the burst and rejects the rest: a share
 * 1 - 100/200 = 0.5.  With N = 40000 measured arrivals the window lasts N/200 s
 * give or take sqrt(N)/200: the share's standard deviation is
 * 0.5/sqrt(N) = 0.0025, and the tokens lost while the bucket is full add less
 * than 0.001; tolerance 0.015 (6 standard deviations).  The counts themselves
 * are exact: rejected = arrivals - forwarded, and the pool's arrivals are the
 * limiter's forwarded. */
Test(station_core, rate_limiter_kind_rejects_through_the_core)
{
    cr_assert_eq(station_kind_register(&LIMITER_KIND), 0);
    sim_result r;
    simulate(LIMITED("poisson", 200, 100, 10, 40000), 11, &r);
    tsim_pr g = tsim_pool_named(&r, "gate"), app = tsim_pool_named(&r, "app");
    double forwarded = tsim_prv(g, "forwarded");
    cr_expect_eq(tsim_prv(g, "arrivals"), 40000);
    cr_expect_eq((double) tsim_prv(g, "served"), forwarded);
    cr_expect_eq((double) tsim_prv(g, "rejected"), (double) tsim_prv(g, "arrivals") - forwarded, "rejected %llu, arrivals %llu, forwarded %g",
                 (unsigned long long) tsim_prv(g, "rejected"), (unsigned long long) tsim_prv(g, "arrivals"), forwarded);
    cr_expect_eq((double) tsim_prv(app, "arrivals"), forwarded);
    cr_expect_eq(tsim_prv(app, "rejected"), 0);
    cr_expect_eq(tsim_n(&r, "rejected"), tsim_prv(g, "rejected"));     /* what the engine heard from the sink */
    cr_expect_eq(tsim_n(&r, "served") + tsim_n(&r, "rejected"), tsim_n(&r, "requests"));
    double share = (double) tsim_prv(g, "rejected") / (double) tsim_prv(g, "arrivals");
    cr_expect(fabs(share - 0.5) < 0.015, "rejected share %g, token bucket 0.5", share);
    sim_result_free(&r);
}

/* Constant arrivals every 1/256 s (3906250 ns, exact in the clock and in
 * double) into a bucket of 128/s, burst 1: each gap adds exactly half a token,
 * so exactly every other request is rejected; at 64/s none is. */
Test(station_core, rate_limiter_exact_on_constant_arrivals)
{
    cr_assert_eq(station_kind_register(&LIMITER_KIND), 0);
    sim_result r;
    simulate(LIMITED("constant", 256, 128, 1, 10000), 1, &r);
    tsim_pr g = tsim_pool_named(&r, "gate");
    cr_expect_eq(tsim_prv(g, "arrivals"), 10000);
    cr_expect_eq(tsim_prv(g, "rejected"), 5000);
    cr_expect_eq(tsim_prv(g, "served"), 5000);
    cr_expect_eq(tsim_prv(tsim_pool_named(&r, "app"), "arrivals"), 5000);
    sim_result_free(&r);
    simulate(LIMITED("constant", 64, 128, 1, 10000), 1, &r);
    cr_expect_eq(tsim_prv(tsim_pool_named(&r, "gate"), "rejected"), 0);
    cr_expect_eq(tsim_prv(tsim_pool_named(&r, "gate"), "served"), 10000);
    sim_result_free(&r);
    /* Its keys are checked like any other. */
    char err[512];
    cr_expect_neq(load_error("[workload]\nrate = 1\ntarget = g\n[pool g]\nkind = rate_limit\nnext = a\n"
                             "[pool a]\nservice_ms = exp(mean=1)\n", err, sizeof err), 0);
    cr_expect(strstr(err, "rate_per_s") != NULL, "%s", err);
    cr_expect_neq(load_error("[workload]\nrate = 1\ntarget = g\n[pool g]\nkind = rate_limit\nrate_per_s = 5\n"
                             "burst = 0.5\nnext = a\n[pool a]\nservice_ms = exp(mean=1)\n", err, sizeof err), 0);
    cr_expect(strstr(err, "burst") != NULL, "%s", err);
}

/* ---- a router's least_outstanding over many pools: the index -------------------- */

/* A router over K single-server pools (exp service of mean 1 ms, utilisation
 * RHO), REQUESTS measured requests; a queue_limit and a timeout in every pool
 * so that rejections and timeouts change the loads too. */
static char *many_pools(const char *policy, int k, double rho, int requests)
{
    size_t n = 512 + (size_t) k * 96;
    char *buf = malloc(n);
    cr_assert_not_null(buf);
    int len = snprintf(buf, n, "[sim]\nrequests = %d\nwarmup = %d\nseed = 3\n[workload]\nrate = %.17g\n"
                       "target = lb\n[pool lb]\nkind = router\npolicy = %s\nnext = ", requests, requests / 10,
                       rho * k * 1000, policy);
    for (int i = 0; i < k; i++) len += snprintf(buf + len, n - (size_t) len, "%sp%d", i ? ", " : "", i);
    len += snprintf(buf + len, n - (size_t) len, "\n");
    for (int i = 0; i < k; i++)
        len += snprintf(buf + len, n - (size_t) len,
                        "[pool p%d]\nservice_ms = exp(mean=1)\nqueue_limit = 3\ntimeout_ms = 2\n", i);
    return buf;
}

/* Snapshots read per routed request over 512 pools (overloaded: full queues
 * reject and waits time out): none for round robin and
 * least_outstanding (the index), two for power_of_two; the same numbers with
 * the checks on, which assert at every request that a scan of every pool picks
 * what the index picks (and whose reads are not counted). */
Test(station_core, router_least_outstanding_reads_no_snapshot)
{
    static const struct { const char *policy; double per_request; } C[] = {
        { "round_robin", 0 }, { "power_of_two", 2 }, { "least_outstanding", 0 },
    };
    for (int check = 0; check < 2; check++)
        for (int c = 0; c < 3; c++) {
            if (check) setenv("LATSIM_CHECK", "1", 1);
            else unsetenv("LATSIM_CHECK");
            char *text = many_pools(C[c].policy, 512, 1.2, check ? 3000 : 20000);
            route_counts before = route_tally;
            sim_result r;
            simulate(text, 1, &r);
            uint64_t picks = route_tally.picks - before.picks;
            cr_assert_geq(picks, tsim_n(&r, "requests"), "%s", C[c].policy);
            double per = (double) (route_tally.snaps - before.snaps) / (double) picks;
            cr_expect_eq(per, C[c].per_request, "%s: %g snapshots per request", C[c].policy, per);
            cr_expect_eq(tsim_n(&r, "served") + tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"),
                         tsim_n(&r, "requests"));
            if (!strcmp(C[c].policy, "least_outstanding"))
                cr_expect_gt(tsim_n(&r, "rejected") + tsim_n(&r, "timed_out"), 0,
                             "no rejection or timeout changed a load");
            sim_result_free(&r);
            free(text);
        }
}

/* Least_outstanding with ties everywhere (few pools, light and heavy load):
 * with the checks on, the index's choice is the scan's at every request; the
 * numbers are those of the same run with the checks off. */
Test(station_core, router_index_picks_what_a_scan_picks)
{
    static const int sizes[] = { 1, 2, 3, 7, 64 };
    static const double loads[] = { 0.3, 1.2 };
    for (int s = 0; s < 5; s++)
        for (int l = 0; l < 2; l++) {
            char *text = many_pools("least_outstanding", sizes[s], loads[l], 4000);
            sim_result a, b;
            setenv("LATSIM_CHECK", "1", 1);
            simulate(text, 2, &a);
            unsetenv("LATSIM_CHECK");
            simulate(text, 2, &b);
            cr_expect_eq(tsim_n(&a, "events"), tsim_n(&b, "events"), "%d pools, load %g", sizes[s], loads[l]);
            cr_expect_eq(tsim_sys(&a, "e2e")->mean, tsim_sys(&b, "e2e")->mean, "%d pools, load %g", sizes[s], loads[l]);
            cr_expect_eq(tsim_n(&a, "rejected"), tsim_n(&b, "rejected"));
            sim_result_free(&a);
            sim_result_free(&b);
            free(text);
        }
}

/* ---- a routing policy defined here: first_fit ------------------------------------- */

/* The first target with a free server (fewer requests inside than servers),
 * else the one with the fewest requests inside (ties: the first). */
static int pick_first_fit(route_ctx *rc, const request *r, const route_view *v, int n)
{
    (void) rc;
    (void) r;
    int best = 0;
    uint64_t least = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        const station_snap *s = route_snap(v, i);
        if ((double) s->inside < s->capacity) return i;
        if (s->inside < least) {
            best = i;
            least = s->inside;
        }
    }
    return best;
}

static const route_policy FIRST_FIT = {
    .name = "first_fit",
    .help = "the first target with a free server, else the least loaded",
    .key = ROUTE_KEY_NONE,
    .pick = pick_first_fit,
};

/* Erlang's loss formula: the blocking probability of K servers offered A erlangs. */
static double erlang_b(int k, double a)
{
    double b = 1;
    for (int i = 1; i <= k; i++) b = a * b / (i + a * b);
    return b;
}

/* Poisson arrivals at 20/s over three single-server pools of 10 ms exponential
 * service (a = 0.2 erlangs each way): first_fit is ordered hunting, so the
 * first k pools form an Erlang loss system of their own, the share of arrivals
 * that find them all busy is B(k, a), and pool k (from 0) gets
 * B(k, a) - B(k + 1, a): 0.833, 0.150, 0.0153; the B(3, a) = 0.0011 that find
 * all three busy go to the least loaded, a tie won by the first.  With 50000
 * measured requests the shares' standard deviations are below 0.002 (pools 0
 * and 1) and 0.0006 (pool 2): tolerances 0.01 and 0.004. */
Test(station_core, registered_policy_routes)
{
    int before = route_count();
    cr_assert_eq(route_policy_register(&FIRST_FIT), 0);
    cr_expect_eq(route_policy_register(&FIRST_FIT), 0, "registering the same row twice is harmless");
    cr_expect_eq(route_count(), before + 1);
    cr_expect_eq(route_find("FIRST_FIT"), &FIRST_FIT);
    route_policy clash = FIRST_FIT, taken = FIRST_FIT, empty = FIRST_FIT;
    taken.name = "power_of_two";
    empty.pick = NULL;
    cr_expect_eq(route_policy_register(&clash), -1, "another row with the name");
    cr_expect_eq(route_policy_register(&taken), -1, "a built-in name");
    cr_expect_eq(route_policy_register(&empty), -1, "no pick");
    /* latsim keys lists it: a router's policy, and an LLM pool's routing (which
     * takes no policy that routes between two models by complexity). */
    char *keys = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&keys, &len);
    cr_assert_not_null(f);
    scenario_print_keys(f, 0);
    fclose(f);
    cr_expect(strstr(keys, "routing policy: round_robin | random | least_outstanding | power_of_two | least_kv | "
                     "prefix_affinity | complexity | first_fit\n") != NULL, "a router's policy lists the row");
    cr_expect(strstr(keys, "shared | round_robin | random | least_outstanding | power_of_two | least_kv | "
                     "prefix_affinity | first_fit;") != NULL, "an LLM pool's routing lists the row");
    free(keys);
    const char *text =
        "[sim]\nrequests = 50000\nwarmup = 1000\n[workload]\nrate = 20\ntarget = lb\n"
        "[pool lb]\nkind = router\npolicy = first_fit\nnext = s0, s1, s2\n"
        "[pool s0]\nservice_ms = exp(mean=10)\n[pool s1]\nservice_ms = exp(mean=10)\n"
        "[pool s2]\nservice_ms = exp(mean=10)\n";
    sim_result r;
    simulate(text, 5, &r);
    double a = 0.2, want[3] = { 1 - erlang_b(1, a) + erlang_b(3, a), erlang_b(1, a) - erlang_b(2, a),
                                erlang_b(2, a) - erlang_b(3, a) }, tol[3] = { 0.01, 0.01, 0.004 };
    uint64_t all = 0;
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", i);
        tsim_pr p = tsim_pool_named(&r, name);
        all += tsim_prv(p, "arrivals");
        double share = (double) tsim_prv(p, "arrivals") / (double) tsim_n(&r, "requests");
        cr_expect(fabs(share - want[i]) < tol[i], "%s: share %g, ordered hunting %g", name, share, want[i]);
    }
    cr_expect_eq(all, tsim_n(&r, "requests"));
    sim_result_free(&r);
    /* An LLM pool routes its replicas with it too; the choices list it. */
    simulate("[sim]\nrequests = 500\nwarmup = 50\n[workload]\nrate = 5\n"
             "prompt_tokens = lognormal(mean=300, cv=1)\noutput_tokens = lognormal(mean=50, cv=1)\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\nreplicas = 4\ntruncate = yes\n"
             "routing = first_fit\n", 1, &r);
    cr_expect_eq(tsim_n(&r, "served"), tsim_n(&r, "requests"));
    sim_result_free(&r);
    char err[512];
    cr_expect_neq(load_error("[workload]\nrate = 1\ntarget = lb\n[pool lb]\nkind = router\npolicy = fastest\n"
                             "next = a\n[pool a]\nservice_ms = exp(mean=1)\n", err, sizeof err), 0);
    cr_expect(strstr(err, ",complexity,first_fit)") != NULL, "%s", err);
}
