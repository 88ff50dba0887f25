/* test_speed.c -- the fast paths of the engine keep its results: the event
 * calendar (4-ary heap, the running event's hole, sequence renumbering) against
 * a brute-force model; the cost model resolved for the hot path (cost_fast)
 * against the general dispatch, to the bit. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ccost.h"
#include "llm/cost.h"
#include "engine/evq.h"
#include "run/scenario.h"
#include "llm/llmcfg.h"
#include "store/store.h"

/* ---- the event calendar against a model -------------------------------------- */

/* The model: every event ever scheduled, with its time, scheduling order and
 * state.  An event that runs must be the earliest pending one by (time, order). */
enum { MAXEV = 60000 };

typedef struct mev {
    simtime_t t;              /* scheduled time, ns */
    evq_id id;                /* the calendar's handle */
    int state;                /* 0 pending, 1 ran, 2 cancelled */
} mev;

typedef struct model {
    mev ev[MAXEV];            /* by scheduling order */
    int n;                    /* scheduled so far */
    int ran;                  /* events run */
    int bad;                  /* events that ran out of order */
    gsl_rng *rng;
    int budget;               /* events handlers may still schedule */
} model;

static model M;

static void handler(evq *q, void *subject, int64_t arg);

static void schedule(evq *q, simtime_t t)
{
    cr_assert_lt(M.n, MAXEV);
    int k = M.n++;
    M.ev[k] = (mev) { t, 0, 0 };
    M.ev[k].id = evq_at(q, t, handler, &M, k);
    cr_assert_neq(M.ev[k].id, 0);
}

static void cancel_some(evq *q, int tries)
{
    for (int i = 0; i < tries && M.n > 0; i++) {
        int k = (int) gsl_rng_uniform_int(M.rng, (unsigned long) M.n);
        int got = evq_cancel(q, M.ev[k].id);
        cr_assert_eq(got, M.ev[k].state == 0, "cancel of event %d (state %d) returned %d", k, M.ev[k].state, got);
        if (got) M.ev[k].state = 2;
    }
}

/* Runs event ARG: checks that no pending event comes before it, then (while the
 * budget lasts) schedules 0-3 events, some at the current time (ties with
 * events already pending), and cancels some. */
static void handler(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    int k = (int) arg;
    cr_assert_eq(M.ev[k].state, 0, "event %d ran twice or after its cancel", k);
    cr_assert_eq(evq_now(q), M.ev[k].t);
    for (int j = 0; j < M.n; j++)
        if (M.ev[j].state == 0 && j != k &&
            (M.ev[j].t < M.ev[k].t || (M.ev[j].t == M.ev[k].t && j < k))) M.bad++;
    M.ev[k].state = 1;
    M.ran++;
    if (M.budget <= 0) return;
    int add = (int) gsl_rng_uniform_int(M.rng, 4);
    for (int i = 0; i < add && M.budget > 0; i++, M.budget--)
        schedule(q, evq_now(q) + (simtime_t) gsl_rng_uniform_int(M.rng, 3) * 5);
    if (gsl_rng_uniform(M.rng) < 0.3) cancel_some(q, 3);
}

/* Schedules N events at times in [0, SPAN) (many ties), lets handlers add
 * BUDGET more and cancel some, with sequence numbers renumbered every LIMIT. */
static void run_model(uint32_t start, uint32_t limit, int n, int span, int budget, unsigned long seed)
{
    evq *q = evq_new();
    cr_assert_not_null(q);
    M.n = M.ran = M.bad = 0;
    M.budget = budget;
    M.rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(M.rng, seed);
    evq_set_seq(q, start, limit);
    for (int i = 0; i < n; i++) {
        schedule(q, (simtime_t) gsl_rng_uniform_int(M.rng, (unsigned long) span));
        if (i % 7 == 3) cancel_some(q, 1);
    }
    evq_run(q, SIMTIME_NEVER);
    int pending = 0, ran = 0;
    for (int j = 0; j < M.n; j++) {
        pending += M.ev[j].state == 0;
        ran += M.ev[j].state == 1;
    }
    cr_expect_eq(M.bad, 0, "%d events ran before an earlier pending one", M.bad);
    cr_expect_eq(pending, 0, "%d events never ran", pending);
    cr_expect_eq(ran, M.ran);
    cr_expect_eq(evq_events(q), (uint64_t) M.ran);
    cr_expect_eq(evq_pending(q), 0);
    gsl_rng_free(M.rng);
    evq_free(q);
}

Test(speed_evq, handlers_scheduling_and_cancelling_keep_time_then_scheduling_order)
{
    run_model(0, UINT32_MAX, 1000, 100, 5000, 1);
}

/* Renumbering every 50 sequence numbers, with ties everywhere: (time,
 * scheduling order) is still the order events run in. */
Test(speed_evq, sequence_renumbering_keeps_the_order_of_ties)
{
    run_model(0, 50, 1000, 20, 4000, 2);
    run_model(UINT32_MAX - 40, UINT32_MAX, 500, 5, 5000, 3);
}

/* Heavy cancelling from inside handlers compacts the heap while the running
 * event's entry is a hole: the hole is filled first, no slot is freed twice. */
static evq_id victims[4000];
static int nvictims, order_ok = 1, popped;
static simtime_t last_t;

static void victim(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    (void) arg;
    if (evq_now(q) < last_t) order_ok = 0;
    last_t = evq_now(q);
    popped++;
}

static void killer(evq *q, void *subject, int64_t arg)
{
    (void) subject;
    (void) arg;
    for (int i = 0; i < nvictims; i++)
        if (i % 10 != 0) evq_cancel(q, victims[i]);
    /* Scheduled after the compaction: must neither reuse a slot twice nor be lost. */
    for (int i = 0; i < 100; i++) evq_at(q, evq_now(q) + 1 + i, victim, NULL, 0);
}

Test(speed_evq, compaction_inside_a_handler)
{
    evq *q = evq_new();
    evq_at(q, 1, killer, NULL, 0);
    nvictims = 4000;
    for (int i = 0; i < nvictims; i++) victims[i] = evq_at(q, 10 + i, victim, NULL, 0);
    cr_assert_eq(evq_run(q, SIMTIME_NEVER), 1 + 400 + 100);
    cr_assert(order_ok);
    cr_assert_eq(popped, 500);
    cr_assert_eq(evq_pending(q), 0);
    evq_free(q);
}

/* ---- cost_fast: the same doubles as cost_step_ms and cost_step_work ------------- */

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Loads a one-pool LLM scenario whose pool section ends with EXTRA, and checks
 * cost_fast against the general path on steps of every shape.  Returns whether
 * the fast path took the roofline directly. */
static int check_fast(const char *extra)
{
    char text[1024], err[1024];
    snprintf(text, sizeof text,
             "[sim]\nrequests = 10\n[workload]\nrate = 1\n"
             "[pool chat]\nkind = llm\nmodel = llama-3-8b\ngpu = h100\n%s\n", extra);
    scenario sc;
    sqlite3 *db = NULL;
    cr_assert_eq(scenario_load_text(&sc, "fast.ini", text, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(store_open(":memory:", &db, err, sizeof err), 0, "%s", err);
    cr_assert_eq(scenario_resolve(&sc, db, err, sizeof err), 0, "%s", err);
    const cost_model *m = &llm_cfg_of(&sc.pools[0])->cost;
    cost_fast f;
    cost_fast_init(&f, m);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    for (int i = 0; i < 20000; i++) {
        cost_step s = { 0 };
        int shape = i % 4;    /* empty-ish, prefill only, decode only, mixed */
        if (shape != 2) {
            s.prefill_tokens = (int64_t) gsl_rng_uniform_int(r, 8192) + (shape == 0 ? 0 : 1);
            s.prefill_seqs = s.prefill_tokens > 0 ? 1 + (int32_t) gsl_rng_uniform_int(r, 8) : 0;
            s.prefill_pairs = (double) s.prefill_tokens * (s.prefill_tokens + 1.0) / 2.0 + gsl_rng_uniform(r) * 1e6;
        }
        if (shape >= 2) {
            s.decode_seqs = 1 + (int32_t) gsl_rng_uniform_int(r, 256);
            s.kv_tokens = (int64_t) s.decode_seqs * (int64_t) (1 + gsl_rng_uniform_int(r, 4096));
        }
        double fl, by, fl2 = -1, by2 = -1;
        double ms = cost_step_ms(m, &s);
        cost_step_work(m, &s, &fl, &by);
        cr_assert(same_bits(cost_fast_ms(&f, &s), ms), "%s: step %d: %.17g vs %.17g", extra, i, cost_fast_ms(&f, &s), ms);
        if (ms > 0)
            cr_assert(same_bits(cost_fast_overhead_ms(&f, &s), cost_step_overhead_ms(m, &s)), "%s: step %d: overhead", extra, i);
        double ms2 = cost_fast_ms_work(&f, &s, &fl2, &by2);
        cr_assert(same_bits(ms2, ms) && same_bits(fl2, fl) && same_bits(by2, by),
                  "%s: step %d: ms %.17g/%.17g flops %.17g/%.17g bytes %.17g/%.17g", extra, i, ms2, ms, fl2, fl, by2, by);
    }
    gsl_rng_free(r);
    /* Called directly: the roofline's constants, or the learned row's own (auto without
     * a calibrated model resolves to it, cost_fast_init calls it without auto's dispatch). */
    int direct = f.roofline || (f.m != m && f.m->ops && !strcmp(f.m->ops->name, "learned") && f.lm != NULL);
    store_close(db);
    scenario_free(&sc);
    return direct;
}

/* cost = auto, the default, is calib's row: registered as latsim's main does. */
static void register_calibrated(void) { cr_assert_eq(ccost_register(), 0); }

Test(speed_cost, fast_path_gives_the_same_bits_as_the_model, .init = register_calibrated)
{
    cr_expect(check_fast(""), "cost = auto without a calibrated model is the learned model, called directly");
    cr_expect(check_fast("tp = 8\nweights = fp8"));
    cr_expect(check_fast("cost = roofline\ntp = 4\ncompute_eff = 0.37\nmemory_eff = 0.91\nstep_overhead_ms = 0.3\n"
                         "allreduce_latency_us = 3\nlaunch_us_per_layer = 7"));
    cr_expect(check_fast("tp = 2\nkv_dtype = fp8"));
    cr_expect(!check_fast("cost = linear\nstep_base_ms = 2\nprefill_ms_per_token = 0.01\ndecode_ms_per_seq = 0.1\n"
                          "kv_ms_per_1k_tokens = 0.02"), "linear: the row's own step_ms");
}

/* ---- request records: the core always zeroed, the tail when asked ---------------- */

#include "engine/request.h"

static int all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}

Test(speed_request, core_zeroed_always_tail_when_asked)
{
    req_pool p = { 0 };
    for (int tail = 0; tail <= 1; tail++) {
        p.zero_tail = tail;
        request *r = req_alloc(&p);
        cr_assert_not_null(r);
        memset(r, 0xa5, sizeof *r);               /* a record left dirty by its last request */
        req_release(&p, r);
        request *s = req_alloc(&p);
        cr_assert_eq(s, r, "the free list hands back the record just released");
        cr_assert_eq(s->first_token, -1);
        s->first_token = 0;
        cr_assert(all_zero(s, REQ_CORE_BYTES), "core not zeroed");
        const char *t = (const char *) s + REQ_CORE_BYTES;
        if (tail) cr_assert(all_zero(t, REQ_TAIL_END - REQ_CORE_BYTES), "tail not zeroed");
        else cr_assert_eq((unsigned char) t[0], 0xa5, "tail zeroed although not asked");
        req_release(&p, s);
    }
    /* Fresh records (a new slab) are zero whole, tail included. */
    p.zero_tail = 0;
    request *many[1500];
    for (int i = 0; i < 1500; i++) cr_assert_not_null(many[i] = req_alloc(&p));
    request *fresh = many[1499];
    cr_assert(all_zero((const char *) fresh + REQ_CORE_BYTES, sizeof *fresh - REQ_CORE_BYTES));
    req_pool_free(&p);
}

/* ---- the lean paths give what the general ones give ----------------------------- */

#include "run/sim.h"
#include "tsim.h"

/* Runs an M/M/8 scenario (generic pools: the lean paths) and the same with a
 * time series (which takes the general paths and changes no statistic): every
 * latency figure and share must be the same bits. */
Test(speed_lean, lean_run_equals_general_run)
{
    static const char *text =
        "[sim]\nrequests = 40000\nwarmup = 2000\nseed = 3\n[workload]\narrival = poisson\nrate = 7000\n"
        "[pool front]\nservers = 8\nservice_ms = exp(mean=1)\nnext = back\n"
        "[pool back]\nservers = 4\nservice_ms = lognormal(mean=0.4, cv=2)\n";
    sim_result r[2];
    char err[1024];
    for (int k = 0; k < 2; k++) {
        scenario sc;
        cr_assert_eq(scenario_load_text(&sc, "lean.ini", text, NULL, 0, err, sizeof err), 0, "%s", err);
        if (k == 1) sc.ts_interval_s = 0.5;
        cr_assert_eq(sim_run(&sc, sc.seed, &r[k], err, sizeof err), 0, "%s", err);
        scenario_free(&sc);
    }
    cr_assert_eq(tsim_n(&r[0], "served"), tsim_n(&r[1], "served"));
    cr_assert(memcmp(tsim_sys(&r[0], "e2e"), tsim_sys(&r[1], "e2e"), sizeof(stat_summary)) == 0, "e2e differs");
    cr_assert(memcmp(tsim_sys(&r[0], "queue"), tsim_sys(&r[1], "queue"), sizeof(stat_summary)) == 0, "queue differs");
    cr_assert(memcmp(tsim_sys(&r[0], "service"), tsim_sys(&r[1], "service"), sizeof(stat_summary)) == 0,
              "service differs");
    /* The breakdown's rows (shares of all and of the P99, breakdown.*), the same bits in the same order. */
    int nbd[2] = { 0, 0 };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < r[k].rows.n; i++) nbd[k] += !strcmp(r[k].rows.row[i].family, "breakdown");
    cr_assert_eq(nbd[0], 8, "network, queue, service and overhead, all and P99: %d rows", nbd[0]);
    cr_assert_eq(nbd[1], nbd[0]);
    for (size_t i = 0; i < r[0].rows.n; i++) {
        const sim_row *a = &r[0].rows.row[i];
        if (strcmp(a->family, "breakdown")) continue;
        const sim_row *b = sim_result_row(&r[1], a->scope, a->metric, a->stat);
        cr_assert(b && memcmp(&a->value, &b->value, sizeof a->value) == 0, "share %s differs", a->metric);
    }
    for (int i = 0; i < 2; i++)
        cr_assert(memcmp(tsim_pl(&r[0], i, "queue"), tsim_pl(&r[1], i, "queue"), sizeof(stat_summary)) == 0);
    cr_assert_gt(tsim_sys(&r[0], "e2e")->mean, 1.0);
    cr_assert_gt(sim_result_get(&r[0], "", "breakdown.all.queue", "value"), 0.01, "some queueing");
    sim_result_free(&r[0]);
    sim_result_free(&r[1]);
}

/* ---- the exponential draw without the library call ------------------------------ */

#include <gsl/gsl_cdf.h>
#include "core/dist.h"

Test(speed_dist, exp_qinv_is_gsl_bit_for_bit)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    const double means[] = { 1, 1.0 / 7200, 0.37, 1e-9, 3e7 };
    for (int i = 0; i < 200000; i++) {
        double u = gsl_rng_uniform_pos(r), mu = means[i % 5];
        if (i < 4) u = (double[]) { 0x1p-32, 1 - 0x1p-32, 0.5, 0x1.fffffffffffffp-1 }[i];
        double a = dist_exp_qinv(u, mu), b = gsl_cdf_exponential_Qinv(u, mu);
        cr_assert(same_bits(a, b), "u %a mu %a: %a vs %a", u, mu, a, b);
    }
    gsl_rng_free(r);
}
