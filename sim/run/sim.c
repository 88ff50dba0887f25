/* sim.c -- a simulation run: the stations, the measured window, and the
 * end-of-run statistics (arrivals and request attributes: workload.c).
 *
 * Flow of one request: the source creates it and enters it into the target
 * pool's station; stations pass it along their out-edges (station_forward) and
 * give it back through the sink below when it leaves the system, served,
 * rejected or timed out.  The run stops once every measured request has an
 * outcome.  The engine knows stations only through their kind's row (kind.h)
 * and station_ops.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <time.h>
#include "run/breakdown.h"
#include "fleet/fleet.h"
#include "gateway/extapi.h"
#include "llm/llm.h"
#include "workload/gwattr.h"
#include "core/kind.h"
#include "stations/pool.h"
#include "engine/rng.h"
#include "run/sim.h"
#include "run/warmup.h"
#include "core/station.h"
#include "run/tseries.h"
#include "run/omx.h"
#include "run/trevt.h"
#include "workload/workload.h"

/* A per-request sanity check (DEBUG builds, or LATSIM_CHECK set): when it
 * fails the run stops with the check named (not an assert: it stays on in a
 * build with NDEBUG). */
#define SIM_REQUIRE(s, cond) \
    do { if ((s)->check && !(cond)) { fprintf(stderr, "latsim: internal check failed: %s\n", #cond); abort(); } } while (0)

typedef struct sim {
    const scenario *sc;
    evq *q;
    req_pool reqs;
    station **st;             /* one per pool */
    int nst;
    station_sink sink;        /* how the stations reach the engine */

    wl_source *src;           /* arrival times and request attributes */
    uint64_t next_id;         /* next arrival's id */
    uint64_t target;          /* measured requests in this run */
    uint64_t arrival_cap;     /* arrivals stop here: the run is saturated */
    int capped;               /* arrivals stopped at arrival_cap */
    int trace_ran_out;        /* a non-looping trace ended before the target */
    int oom;                  /* a request record or an event could not be allocated */
    int closed;               /* closed loop: arrivals follow departures (users) */

    uint64_t resolved;        /* measured requests with an outcome */
    uint64_t served, rejected, timed_out;
    uint64_t abandoned;       /* patience: measured requests whose client left a queue (issue 34) */
    uint64_t failed;          /* measured requests lost to a replica's failure */
    tseries *ts;              /* the time series (--timeseries, --interval), or NULL */
    omx *mx;                  /* run --metrics: the OpenMetrics series (scraped at the series' interval ends), or NULL */
    trevt *trace;             /* run --trace-events, or NULL */
    int perpetual;            /* events that reschedule themselves (time series, fleets) exist */
    int src_done;             /* the open-loop source will send nothing more */
    const retry_cfg *client;  /* [client] timeouts and retries, or NULL */
    gsl_rng *client_rng;      /* the backoff jitter (stream "client") */
    uint64_t attempts;        /* measured requests' attempts (first ones and retries) */
    uint64_t retries;         /* of those, retries */
    uint64_t wasted;          /* attempts served after their client had given up on them */
    double *ts_area;          /* per station: busy_area at the last interval's end, unit-ns */
    double *ts_cap;           /* per station: cap_area at the last interval's end, unit-ns */
    simtime_t ts_t;           /* that end, ns */
    simtime_t t_start;        /* first measured arrival, ns */
    simtime_t t_end;          /* last measured outcome, ns */
    int measuring;
    double out_tokens;        /* output tokens of requests leaving during the window */
    uint64_t departures;      /* requests leaving (served) during the window */
    uint64_t good;            /* measured requests served within every per-request SLO limit */
    int has_llm;              /* a kind needs token counts (overhead, ttft, tpot are recorded) */
    int mirror;               /* one station of a KIND_SOLE_STATS kind: the system's queue and
                                 service statistics are that station's, not recorded twice */

    int has_gateway;          /* a kind adds network or overhead time (KIND_GATEWAY) */
    int has_overhead;         /* has_llm or has_gateway: the overhead statistic is reported */
    int slo_per_request;      /* [slo] has per-request limits: goodput is counted */
    int check;                /* 1: per-request sanity checks (DEBUG builds, or LATSIM_CHECK set) */
    int lean;                 /* generic pools only, open loop, none of [client], time series,
                                 classes, per-request SLO limits, cold starts or self-renewing
                                 events: sink_leave's short path (lean_leave) */
    int plain_outcome;        /* no [client] and open loop: a served request's outcome needs
                                 no retry or closed-loop handling (sink_leave's short path) */

    stat_acc *e2e, *queue, *service, *ttft, *tpot, *overhead, *itl;
    stat_acc *e2e_cold, *e2e_warm;   /* E2E of requests served cold / warm (pools with cold starts), or NULL */
    stat_acc *ttft_cold, *ttft_warm; /* their TTFT (with e2e_cold), ms */
    stat_acc *network;        /* network time per served request, ms */
    bd_acc *bd;               /* shares of e2e per component */
    int has_kv;               /* a measured request had KV transfer or load time (the kv shares are reported) */
    gwattr *gwa;              /* gateway attributes of requests (class keys) */

    /* Per class ([class] sections only; else NULL). */
    struct sim_class *cls;
    int ncls;
    stat_acc **cls_itl;       /* each class's inter-token gaps, ms (the sink's cls_itl) */

    /* Per pool and per route (several pools; else NULL: a single pool's are the system's). */
    struct sim_pool *pp;
    struct sim_route *rt;     /* per out-edge of the stations with several (sim_pool.route0) */
    int nrt;
    bd_acc *tbd;              /* shares of TTFT per component (TB_*), with an LLM pool; else NULL */
    double tb_sum[TB_N];      /* sums of each TTFT component over the requests tbd counts, ms */
    uint64_t tb_n;            /* those requests */

    /* Requests in the system over time (closed-loop report). */
    simtime_t live_t;         /* time of the last change, ns */
    double live_area;         /* integral of requests in the system, request-ns */
    double live_area_start;   /* its value when the window opened */
    double live_area_end;     /* ... and when it closed */
    uint64_t win_arrivals;    /* arrivals while measuring */
    warmup wu;                /* when the window opens (warmup.h) */
    trend tr;                 /* each pool's contents sampled through the window (warmup.h) */
    settle cs;                /* automatic warm-up: the caches' hit rates settling (warmup.h); cs.n 0: none */
    int opened;               /* the window has opened (it may have closed since) */
    uint64_t wstart;          /* id of the first measured arrival: the warm-up used, requests */
    int finite;               /* a finite workload (scenario.finite): no saturation verdict */
    uint64_t *peak_q;         /* finite: per pool, most requests waiting seen at an arrival (else NULL) */
    uint64_t *peak_in;        /* finite: per pool, most requests inside seen at an arrival */
    uint64_t peak_q_all;      /* finite: most requests waiting in all pools together at an arrival */
    simtime_t peak_q_t;       /* finite: when first seen, ns */
} sim;

/* Statistics of the requests that passed one pool (several pools only). */
typedef struct sim_pool {
    stat_acc *e2e;            /* E2E of the measured served requests that passed it, ms */
    stat_acc *ttft, *tpot;    /* token-emitting pools (LLM, API): TTFT of the requests whose first token it
                                 emitted, TPOT of those it emitted the last one of, ms; else NULL */
    int route0;               /* index in sim.rt of its first out-edge's route; -1: fewer than two out-edges */
} sim_pool;

/* Statistics of one route (an out-edge of a station with several). */
typedef struct sim_route {
    uint64_t served;          /* measured served requests that took it */
    stat_acc *e2e, *ttft, *tpot;   /* theirs, ms (ttft and tpot with an LLM pool; else NULL) */
} sim_route;

/* Statistics of one class. */
typedef struct sim_class {
    uint64_t requests, served, rejected, timed_out;   /* measured requests */
    uint64_t failed;                                   /* measured requests lost to failures */
    uint64_t abandoned;                                /* patience: whose client left a queue (issue 34) */
    uint64_t good;                                     /* of its served, those within its per-request SLO limits */
    stat_acc *e2e, *queue, *service, *ttft, *tpot;     /* ms */
} sim_class;

/* Served request R (E2E_MS; TTFT and TPOT ms or NAN) counted in the pools and
 * routes of its path: once per pool it passed (of its first REQ_PATH
 * stations), in every route it took, its TTFT in the pool that emitted its
 * first token and its TPOT in the last token-emitting pool it passed. */
static void path_add(sim *s, const request *r, double e2e_ms, double ttft, double tpot)
{
    int n = r->hops < REQ_PATH ? r->hops : REQ_PATH;
    int last = -1;
    for (int i = 0; i < n; i++) {
        int p = r->path[i], dup = 0;
        for (int j = 0; j < i && !dup; j++) dup = r->path[j] == p;
        if (dup) continue;                   /* passed twice: counted once */
        sim_pool *x = &s->pp[p];
        stat_add(x->e2e, e2e_ms);
        if (x->tpot) last = p;
        if (x->route0 >= 0 && i + 1 < r->hops) {   /* it left P along edge[i] */
            sim_route *t = &s->rt[x->route0 + r->edge[i]];
            t->served++;
            stat_add(t->e2e, e2e_ms);
            if (t->ttft && !isnan(ttft)) stat_add(t->ttft, ttft);
            if (t->tpot && !isnan(tpot)) stat_add(t->tpot, tpot);
        }
    }
    if (r->tf_pool > 0 && !isnan(ttft) && s->pp[r->tf_pool - 1].ttft) stat_add(s->pp[r->tf_pool - 1].ttft, ttft);
    if (last >= 0 && !isnan(tpot)) stat_add(s->pp[last].tpot, tpot);
}

/* The TTFT breakdown of served request R (TTFT = FIRST - arrival, ns; the
 * answer left the last station at NOW): its components (TB_*) in ns into P,
 * which sum to the TTFT exactly.  An answer streamed to the client has the
 * components it had when its first token was emitted (r->tf) and its first
 * token's way back (network, and protocol time as overhead); one that reaches
 * the client whole (a hop that does not stream, a result-cache hit) has its
 * E2E's, its service after the first token's emission counted as decode.
 * Overhead is what remains: protocol encoding, gateways, classifiers, cache
 * lookups.  Returns 0, or -1 when R has no snapshot (a streamed answer whose
 * first token no station recorded) or a component comes out negative
 * (an internal error, which LATSIM_CHECK reports). */
/* R's framework overhead in LLM steps (request.fw_ns), ns: at most its service
 * outside KV transfers and loads. */
static inline simtime_t fw_of(const request *r)
{
    simtime_t cap = r->service_ns - r->kvx_ns - r->kvl_ns;
    return r->fw_ns < cap ? r->fw_ns : cap > 0 ? cap : 0;
}

static int ttft_parts(const sim *s, const request *r, simtime_t first, simtime_t now, simtime_t p[TB_N])
{
    simtime_t T = first - r->arrival;
    memset(p, 0, TB_N * sizeof *p);
    if (r->whole) {
        simtime_t kv = r->kvx_ns + r->kvl_ns;
        p[TB_NETWORK] = r->network_ns;
        p[TB_QUEUE] = r->queue_ns;
        p[TB_KV_TRANSFER] = r->kvx_ns;
        p[TB_KV_LOAD] = r->kvl_ns;
        p[TB_PREFILL] = r->tf_pool > 0 ? r->tf.service_ns - r->tf.kvx_ns - r->tf.kvl_ns : r->service_ns - kv;
        p[TB_DECODE] = r->service_ns - kv - p[TB_PREFILL];
        /* The framework overhead of the steps before and after the first token goes to overhead. */
        simtime_t fw = fw_of(r), fw1 = r->tf_pool > 0 ? r->tf.fw_ns : fw;
        if (fw1 > p[TB_PREFILL]) fw1 = p[TB_PREFILL];
        if (fw1 > fw) fw1 = fw;
        p[TB_PREFILL] -= fw1;
        p[TB_DECODE] -= fw - fw1 < p[TB_DECODE] ? fw - fw1 : p[TB_DECODE];
        /* the first token comes with the last byte: TTFT = E2E when the answer left with its last token */
        SIM_REQUIRE(s, now == r->last_token);
    } else {
        if (r->tf_pool <= 0) return -1;
        /* The snapshot's components add up to the time its first token took to be emitted. */
        SIM_REQUIRE(s, r->tf.at - r->arrival == r->tf.network_ns + r->tf.overhead_ns - r->tf.ret_last_ns + r->tf.queue_ns +
                               r->tf.service_ns);
        p[TB_NETWORK] = r->tf.fwd_net_ns + r->ret_first_net_ns;
        p[TB_QUEUE] = r->tf.queue_ns;
        p[TB_KV_TRANSFER] = r->tf.kvx_ns;
        p[TB_KV_LOAD] = r->tf.kvl_ns;
        p[TB_PREFILL] = r->tf.service_ns - r->tf.kvx_ns - r->tf.kvl_ns;
        /* The framework overhead of its steps up to the first token goes to overhead. */
        p[TB_PREFILL] -= r->tf.fw_ns < p[TB_PREFILL] ? r->tf.fw_ns : p[TB_PREFILL];
    }
    simtime_t rest = T;
    for (int i = 0; i < TB_N; i++)
        if (i != TB_OVERHEAD) rest -= p[i];
    p[TB_OVERHEAD] = rest;
    int ok = 1;
    for (int i = 0; i < TB_N; i++) ok &= p[i] >= 0;
    SIM_REQUIRE(s, ok);
    return ok ? 0 : -1;
}

/* Adds served request R's TTFT breakdown (FIRST, NOW: ttft_parts) to the shares and sums. */
static void ttft_add(sim *s, const request *r, simtime_t first, simtime_t now)
{
    simtime_t p[TB_N];
    if (ttft_parts(s, r, first, now, p) != 0) return;
    double c[TB_N], t = simtime_to_ms(first - r->arrival);
    for (int i = 0; i < TB_N; i++) {
        c[i] = simtime_to_ms(p[i]);
        s->tb_sum[i] += c[i];
    }
    s->tb_n++;
    bd_add_v(s->tbd, t, c);
}

static void on_arrival(evq *q, void *subject, int64_t arg);
static void lean_arrival(evq *q, void *subject, int64_t arg);
static void sink_oom(void *ctx);
static void finite_peaks(sim *s);

/* Brings the integral of requests in the system up to now (call before the
 * count changes).  Only the closed-loop report reads it (mean_in_system): in
 * open loop it is not kept. */
static void live_mark(sim *s)
{
    if (!s->closed) return;
    simtime_t now = evq_now(s->q);
    s->live_area += (double) s->reqs.live * (double) (now - s->live_t);
    s->live_t = now;
}

/* ---- the sink: how stations hand requests back ------------------------------ */

static void window_close(sim *s)
{
    s->t_end = evq_now(s->q);
    live_mark(s);
    s->live_area_end = s->live_area;
    s->measuring = 0;
    for (int i = 0; i < s->nst; i++) station_window_close(s->st[i]);
    evq_stop(s->q);
}

static void retry_later(sim *s, request *r);

static void sink_step(void *ctx, int pool, int rep, simtime_t start, simtime_t dur, int64_t prefill_tokens,
                      int32_t prefill_seqs, int32_t decode_seqs)
{
    sim *s = ctx;
    trevt_step(s->trace, pool, rep, start, dur, prefill_tokens, prefill_seqs, decode_seqs);
}

static void sink_outcome(void *ctx, request *r, req_outcome outcome)
{
    sim *s = ctx;
    if (s->trace && outcome != OUT_SERVED && !(s->client && r->abandoned)) trevt_unserved(s->trace, r, outcome, evq_now(s->q));
    if (s->client) {
        if (r->abandoned) {                   /* nobody waits for it any more */
            r->outcome = (uint8_t) outcome;
            return;
        }
        if (r->client_ev) {
            evq_cancel(s->q, r->client_ev);
            r->client_ev = 0;
        }
        if (outcome != OUT_SERVED && outcome != OUT_ABANDONED && r->attempt < s->client->retries) {   /* a user who left does not retry (issue 34) */
            /* An error (5xx: rejected, timed out, failed): the client tries again. */
            if (s->ts) ts_error(s->ts);
            r->outcome = (uint8_t) outcome;
            r->abandoned = 1;
            retry_later(s, r);
            return;
        }
    }
    r->outcome = (uint8_t) outcome;
    /* Closed loop: the user thinks, then sends the next request. */
    simtime_t next = wl_complete(s->src, r, evq_now(s->q));
    if (next >= 0) {
        if (s->next_id >= s->arrival_cap) s->capped = 1;
        else if (!evq_at(s->q, next, on_arrival, s, r->user)) sink_oom(s);
    }
    if (s->ts && outcome != OUT_SERVED) ts_error(s->ts);
    if (!r->measured) return;
    if (outcome == OUT_REJECTED) s->rejected++;
    if (outcome == OUT_TIMED_OUT) s->timed_out++;
    if (outcome == OUT_FAILED) s->failed++;
    if (outcome == OUT_ABANDONED) s->abandoned++;                      /* patience (issue 34) */
    if (outcome == OUT_ABANDONED && s->cls) s->cls[r->cls].abandoned++;  /* patience (issue 34) */
    if (s->cls) {
        sim_class *c = &s->cls[r->cls];
        if (outcome == OUT_REJECTED) c->rejected++;
        if (outcome == OUT_TIMED_OUT) c->timed_out++;
        if (outcome == OUT_FAILED) c->failed++;
    }
    if (++s->resolved == s->target) window_close(s);
}

static void sink_release(void *ctx, request *r)
{
    sim *s = ctx;
    live_mark(s);
    req_release(&s->reqs, r);
    /* Nothing left anywhere and nothing more to come: only the self-renewing
     * events (interval ends, failures, autoscaler) would run, forever. */
    if (s->perpetual && s->src_done && s->reqs.live == 0) evq_stop(s->q);
}

static void sink_oom(void *ctx)
{
    sim *s = ctx;
    s->oom = 1;
    evq_stop(s->q);
}

/* R, served, leaves the system. */
/* When R's first token reached the client (R has one: first_token >= 0): one
 * way back after its emission when every hop streamed it, else with the last
 * byte of the whole answer (r->whole). */
static inline simtime_t client_first(const request *r)
{
    return r->whole ? r->last_token + r->ret_last_ns : r->first_token + r->ret_first_ns;
}

/* sink_leave for a lean run (sim.lean): what the general path does there, with
 * none of the tests of the features the run does not have.  Generic pools add
 * no network or overhead time and no tokens; nothing renews itself. */
static void lean_leave(sim *s, request *r)
{
    if (s->measuring) s->departures++;
    r->at = NULL;
    r->outcome = OUT_SERVED;
    if (r->measured) {
        simtime_t e2e = evq_now(s->q) + r->ret_last_ns - r->arrival;
        SIM_REQUIRE(s, (e2e == r->queue_ns + r->service_ns && r->network_ns == 0 && r->overhead_ns == 0
                             && r->first_token < 0));
        double e2e_ms = simtime_to_ms(e2e);
        double queue = simtime_to_ms(r->queue_ns), service = simtime_to_ms(r->service_ns);
        s->served++;
        stat_add(s->e2e, e2e_ms);
        if (!s->mirror) {
            stat_add(s->queue, queue);
            stat_add(s->service, service);
        }
        bd_add_qs(s->bd, e2e_ms, queue, service);
        if (s->pp) path_add(s, r, e2e_ms, NAN, NAN);
        if (++s->resolved == s->target) window_close(s);
    }
    req_release(&s->reqs, r);
}

/* run --metrics: request R served, as the engine saw it (its queueing and
 * service time) and as its client did, attributed to the pool that emitted its
 * first token, else to the pool it entered first. */
static void mx_served(sim *s, const request *r)
{
    simtime_t e2e = evq_now(s->q) + r->ret_last_ns - r->arrival;
    omx_req x = {
        .e2e_s = simtime_to_s(e2e),
        .ttft_s = r->first_token >= 0 ? simtime_to_s(client_first(r) - r->arrival) : NAN,
        .eng_e2e_s = simtime_to_s(r->queue_ns + r->service_ns),
        .eng_ttft_s = r->tf_pool > 0 ? simtime_to_s(r->tf.queue_ns + r->tf.service_ns) : NAN,
        .tpot_s = r->tf_pool > 0 && r->output > 1 && r->last_token >= r->first_token
                  ? simtime_to_s(r->last_token - r->first_token) / (double) (r->output - 1) : NAN,
        .prompt = r->prompt,
        .output = r->tf_pool > 0 ? r->output : 0,
    };
    omx_served(s->mx, r->tf_pool > 0 ? r->tf_pool - 1 : r->target, &x);
}

/* run --metrics: the series of S's pools, and its first scrape (time 0).
 * Returns 0, or -1 with ERR when out of memory. */
static int mx_point(sim *s);
static int mx_open(sim *s, char *err, size_t errlen)
{
    const scenario *sc = s->sc;
    const char **names = calloc((size_t) sc->npools + 1, sizeof *names);
    const char **models = calloc((size_t) sc->npools + 1, sizeof *models);
    int *llm = calloc((size_t) sc->npools + 1, sizeof *llm);
    int rc = -1;
    if (names && models && llm) {
        for (int i = 0; i < sc->npools; i++) {
            names[i] = sc->pools[i].name;
            llm[i] = sc->pools[i].kind == &llm_kind;
            models[i] = llm[i] ? ((const llm_cfg *) sc->pools[i].ext)->model.name : NULL;
        }
        s->mx = omx_new(sc->npools, names, models, llm, err, errlen);
        rc = s->mx && mx_point(s) == 0 ? 0 : -1;
    }
    if (rc != 0) snprintf(err, errlen, "out of memory (metrics)");
    free(names);
    free(models);
    free(llm);
    return rc;
}

/* run --metrics: a scrape of every pool now.  Returns 0, or -1 when out of memory. */
static int mx_point(sim *s)
{
    omx_gauge g[s->nst > 0 ? s->nst : 1];
    for (int i = 0; i < s->nst; i++) {
        station_snap snap;
        station_snapshot(s->st[i], &snap);
        g[i] = (omx_gauge) { (double) snap.running, (double) snap.waiting,
                             s->sc->pools[i].kind == &llm_kind ? 1 - snap.kv_free : NAN };
    }
    return omx_point(s->mx, simtime_to_s(evq_now(s->q)), g);
}

static void sink_leave(void *ctx, request *r)
{
    sim *s = ctx;
    if (s->lean) {
        lean_leave(s, r);
        return;
    }
    if (s->client && r->abandoned) {         /* served for nothing: the client left */
        if (r->measured) s->wasted++;
        r->at = NULL;
        r->outcome = OUT_SERVED;
        sink_release(s, r);
        return;
    }
    if (s->measuring) {
        /* Throughput counts every request leaving during the window, measured or
         * not: in a saturated run the servers also work off the warm-up backlog. */
        s->departures++;
        if (s->has_llm) s->out_tokens += r->output;
    }
    if (s->ts)   /* every request, measured or not: the series covers the whole run */
        ts_served(s->ts, simtime_to_ms(evq_now(s->q) + r->ret_last_ns - r->arrival),
                  r->first_token >= 0 ? simtime_to_ms(client_first(r) - r->arrival) : NAN);
    if (s->mx) mx_served(s, r);
    if (s->trace) trevt_served(s->trace, r, evq_now(s->q) + r->ret_last_ns - r->arrival, r->whole);
    if (r->measured) {
        /* The client has the answer once its last byte has come back over the
         * hops it passed (ret_last_ns), and its first token likewise. */
        simtime_t e2e = evq_now(s->q) + r->ret_last_ns - r->arrival;
        /* The components add up exactly (checked in DEBUG builds and with LATSIM_CHECK). */
        SIM_REQUIRE(s, e2e == r->network_ns + r->queue_ns + r->service_ns + r->overhead_ns);
        double e2e_ms = simtime_to_ms(e2e);
        double c[BD_N];
        c[BD_NETWORK] = simtime_to_ms(r->network_ns);
        c[BD_QUEUE] = simtime_to_ms(r->queue_ns);
        c[BD_SERVICE] = simtime_to_ms(r->service_ns);
        c[BD_OVERHEAD] = simtime_to_ms(r->overhead_ns);
        c[BD_KV_TRANSFER] = c[BD_KV_LOAD] = 0;
        if (s->has_llm) {
            /* Framework overhead of its LLM steps: out of service, into overhead. */
            simtime_t fw = fw_of(r);
            if (fw > 0) {
                c[BD_SERVICE] = simtime_to_ms(r->service_ns - fw);
                c[BD_OVERHEAD] = simtime_to_ms(r->overhead_ns + fw);
            }
        }
        s->served++;
        stat_add(s->e2e, e2e_ms);
        if (s->e2e_cold) stat_add(r->cold ? s->e2e_cold : s->e2e_warm, e2e_ms);
        if (!s->mirror) {
            stat_add(s->queue, c[BD_QUEUE]);
            stat_add(s->service, c[BD_SERVICE]);
        }
        /* The report's zeros for components no station adds (report_json) rely
         * on the asserts. */
        if (s->has_overhead) stat_add(s->overhead, c[BD_OVERHEAD]);
        else SIM_REQUIRE(s, r->overhead_ns == 0);
        if (s->has_gateway) stat_add(s->network, c[BD_NETWORK]);
        else SIM_REQUIRE(s, r->network_ns == 0);
        if (r->kvx_ns > 0 || r->kvl_ns > 0) {   /* disaggregated or offloaded KV: carved out of service */
            double sv = c[BD_SERVICE];
            c[BD_KV_TRANSFER] = simtime_to_ms(r->kvx_ns);
            c[BD_KV_LOAD] = simtime_to_ms(r->kvl_ns);
            c[BD_SERVICE] = sv - c[BD_KV_TRANSFER] - c[BD_KV_LOAD];
            if (c[BD_SERVICE] < 0) c[BD_SERVICE] = 0;
            s->has_kv = 1;
        }
        bd_add(s->bd, e2e_ms, c);
        double ttft = NAN, tpot = NAN;
        if (r->first_token >= 0) {
            simtime_t first = client_first(r), last = r->last_token + r->ret_last_ns;
            ttft = simtime_to_ms(first - r->arrival);
            stat_add(s->ttft, ttft);
            if (s->e2e_cold) stat_add(r->cold ? s->ttft_cold : s->ttft_warm, ttft);
            if (s->tbd) ttft_add(s, r, first, evq_now(s->q));
            if (r->output > 1 && !r->whole && r->last_token > r->first_token) {   /* a whole answer has no TPOT */
                tpot = simtime_to_ms(last - first) / (r->output - 1);
                stat_add(s->tpot, tpot);
            }
        }
        if (s->pp) path_add(s, r, e2e_ms, ttft, tpot);
        if (s->slo_per_request) {   /* goodput (slo.h) */
            int good = slo_request_ok(&s->sc->slo, s->cls ? r->cls : -1, e2e_ms, ttft, tpot);
            s->good += (uint64_t) good;
            if (s->cls) s->cls[r->cls].good += (uint64_t) good;
        }
        if (s->cls) {
            sim_class *k = &s->cls[r->cls];
            k->served++;
            stat_add(k->e2e, e2e_ms);
            stat_add(k->queue, c[BD_QUEUE]);
            stat_add(k->service, c[BD_SERVICE]);
            if (!isnan(ttft)) stat_add(k->ttft, ttft);
            if (!isnan(tpot)) stat_add(k->tpot, tpot);
        }
    }
    r->at = NULL;
    if (s->plain_outcome) {
        /* sink_outcome's steps for a served request without a client or users. */
        r->outcome = OUT_SERVED;
        if (r->measured && ++s->resolved == s->target) window_close(s);
    } else
        sink_outcome(s, r, OUT_SERVED);
    sink_release(s, r);
}

/* ---- clients: timeouts and retries (retry.h) -------------------------------- */

static void on_client_timeout(evq *q, void *subject, int64_t arg);

/* Arms the client's timeout of attempt R (when [client] has one). */
static void client_arm(sim *s, request *r)
{
    if (s->client->timeout_ms > 0 &&
        !(r->client_ev = evq_after(s->q, simtime_from_ms(s->client->timeout_ms), on_client_timeout, s, (int64_t) (intptr_t) r)))
        sink_oom(s);
}

static void on_retry(evq *q, void *subject, int64_t arg)
{
    (void) q;
    sim *s = subject;
    request *r = (request *) (intptr_t) arg;
    /* The time since the first attempt was sent counts as waiting. */
    r->queue_ns = evq_now(s->q) - r->arrival;
    if (r->measured) {
        s->attempts++;
        s->retries++;
    }
    if (s->measuring) s->win_arrivals++;
    if (s->ts) ts_retry(s->ts);
    client_arm(s, r);
    station_enter(s->st[r->target], r);
}

/* The client gives up on attempt R (abandoned, still in the system) and sends
 * the next one after the backoff. */
static void retry_later(sim *s, request *r)
{
    live_mark(s);
    request *n = req_alloc(&s->reqs);
    if (!n) {
        sink_oom(s);
        return;
    }
    /* The same request (id, attributes, arrival) as a fresh attempt. */
    req_copy_attrs(n, r);
    n->attempt = (uint8_t) (r->attempt + 1);
    double ms = retry_backoff_ms(s->client, n->attempt, s->client_rng);
    if (!evq_after(s->q, simtime_from_ms(ms), on_retry, s, (int64_t) (intptr_t) n)) sink_oom(s);
}

static void on_client_timeout(evq *q, void *subject, int64_t arg)
{
    (void) q;
    sim *s = subject;
    request *r = (request *) (intptr_t) arg;
    r->client_ev = 0;
    if (r->attempt < s->client->retries) {
        r->abandoned = 1;
        retry_later(s, r);
        return;
    }
    /* The last attempt timed out at the client: that is the request's outcome;
     * the attempt itself stays where it is, abandoned. */
    sink_outcome(s, r, OUT_TIMED_OUT);
    r->outcome = OUT_PENDING;   /* still in a station, which must not take it for its own tombstone */
    r->abandoned = 1;
}

/* ---- the time series -------------------------------------------------------- */

/* Gauges at an interval's end over the stations with replicas or servers
 * (KIND_FLEET kinds): requests waiting now, units up now, and their busy time
 * over the interval per unit up. */
static void ts_gauge(void *ctx, ts_gauges *g)
{
    sim *s = ctx;
    simtime_t now = evq_now(s->q);
    double busy = 0, cap = 0;
    *g = (ts_gauges) { 0, 0, NAN };
    for (int i = 0; i < s->nst; i++) {
        station *st = s->st[i];
        g->queue += (double) st->qlen;
        if (!(st->cfg->kind->flags & KIND_FLEET)) continue;
        station_snap snap;
        station_snapshot(st, &snap);
        station_busy(st, 0);
        busy += st->busy_area - s->ts_area[i];
        s->ts_area[i] = st->busy_area;
        if (isnan(snap.cap_area)) {           /* a fixed number of units */
            g->replicas += snap.capacity;
            cap += snap.capacity * (double) (now - s->ts_t);
        } else {                              /* time mean of the units up */
            double a = snap.cap_area - s->ts_cap[i];
            s->ts_cap[i] = snap.cap_area;
            cap += a;
            if (now > s->ts_t) g->replicas += a / (double) (now - s->ts_t);
        }
    }
    if (cap > 0) g->utilization = busy / cap;
    s->ts_t = now;
    if (s->mx) mx_point(s);
}

/* ---- the workload source -------------------------------------------------- */

static void schedule_next(sim *s)
{
    if (s->next_id >= s->arrival_cap) {
        s->capped = 1;
        s->src_done = 1;
        return;
    }
    simtime_t t = wl_next_time(s->src, evq_now(s->q), s->next_id);
    if (t < 0) {
        s->src_done = 1;
        return;
    }
    if (!evq_at(s->q, t, s->lean ? lean_arrival : on_arrival, s, 0)) sink_oom(s);
}

/* Whether the caches' hit rates have settled (warmup.h), checked at this
 * arrival when a snapshot is due; 1 as well once the cap is reached. */
static __attribute__((noinline)) int caches_settled(sim *s)
{
    settle *c = &s->cs;
    if (c->done) return 1;
    double now = simtime_to_s(evq_now(s->q));
    if (s->next_id > c->cap) {
        c->done = c->capped = 1;
        c->t = now;
        return 1;
    }
    if (!settle_due(c)) return 0;
    for (int k = 0; k < c->n; k++) {
        double v[3] = { 0, 0, 0 };
        const station *st = s->st[c->pool[k]];
        st->ops->cache_fill(st, v);
        settle_put(c, k, v);
    }
    if (!settle_commit(c, now)) return 0;
    c->done = 1;
    c->t = now;
    return 1;
}

/* A new request arriving now: its id, arrival time, and whether it is
 * measured (the window opens when the warm-up is over).  Returns it, or NULL
 * when out of memory (the run is stopped). */
static inline __attribute__((always_inline)) request *new_arrival(sim *s, evq *q)
{
    request *r = req_alloc(&s->reqs);
    if (!r) {
        s->oom = 1;
        evq_stop(q);
        return NULL;
    }
    r->id = s->next_id++;
    r->arrival = evq_now(q);
    if (!s->opened && (s->cs.n == 0 || caches_settled(s)) && warmup_ready(&s->wu, r->id, s->reqs.live - 1)) {   /* live counts R itself */
        s->opened = 1;
        s->wstart = r->id;
    }
    r->measured = s->opened && r->id - s->wstart < s->target;   /* ids only grow: id >= wstart once opened */
    return r;
}

/* The measured window at arrival R: opened by its first request, then each
 * arrival counted and the saturation trend sampled when due. */
static inline __attribute__((always_inline)) void window_arrival(sim *s, const request *r)
{
    if (s->opened && r->id == s->wstart) {
        s->measuring = 1;
        s->t_start = r->arrival;
        s->live_area_start = s->live_area;
        for (int i = 0; i < s->nst; i++) station_window_open(s->st[i]);
    }
    if (s->measuring) {
        s->win_arrivals++;
        if (trend_due(&s->tr)) {
            for (int i = 0; i < s->nst; i++) trend_put(&s->tr, i, (double) s->st[i]->inside);
            trend_commit(&s->tr);
        }
    }
}

/* on_arrival for a lean run (sim.lean; gateway attributes plain): open loop,
 * no classes, time series or clients to tell. */
static void lean_arrival(evq *q, void *subject, int64_t arg)
{
    (void) arg;
    sim *s = subject;
    request *r = new_arrival(s, q);
    if (!r) return;
    if (wl_fill(s->src, r) != 0) {
        req_release(&s->reqs, r);
        sink_oom(s);
        return;
    }
    window_arrival(s, r);
    schedule_next(s);
    station_enter(s->st[r->target], r);
}

static void on_arrival(evq *q, void *subject, int64_t arg)
{
    sim *s = subject;
    live_mark(s);
    request *r = new_arrival(s, q);
    if (!r) return;
    evq_progress(q);          /* arrivals are bounded (arrival_cap): not a stall */
    r->user = (int32_t) arg;
    if (wl_fill(s->src, r) != 0) {
        req_release(&s->reqs, r);
        sink_oom(s);
        return;
    }
    gwattr_fill(s->gwa, r);
    if (r->measured && s->cls) s->cls[r->cls].requests++;
    window_arrival(s, r);
    if (s->ts) ts_arrival(s->ts);
    if (s->client) {
        if (r->measured) s->attempts++;
        client_arm(s, r);
    }
    if (!s->closed) schedule_next(s);
    station_enter(s->st[r->target], r);
    if (s->finite) finite_peaks(s);
}

/* Finite workloads: the pools' queues and contents just after an arrival
 * (queues grow when requests enter, so the entry pool's peaks are exact). */
static void finite_peaks(sim *s)
{
    uint64_t all = 0;
    for (int i = 0; i < s->nst; i++) {
        const station *st = s->st[i];
        all += st->qlen;
        if (st->qlen > s->peak_q[i]) s->peak_q[i] = st->qlen;
        if (st->inside > s->peak_in[i]) s->peak_in[i] = st->inside;
    }
    if (all > s->peak_q_all) {
        s->peak_q_all = all;
        s->peak_q_t = evq_now(s->q);
    }
}

/* The stall report's name of the engine's own events (evq_namer). */
static int name_event(evq_handler h, const void *subject, char *buf, size_t n)
{
    (void) subject;
    const char *what = h == on_arrival ? "[workload] arrivals"
                     : h == on_client_timeout ? "[client] timeout_ms (the client's timeouts)"
                     : h == on_retry ? "[client] retries (the client's retries)" : NULL;
    if (!what) return 0;
    snprintf(buf, n, "%s", what);
    return EVQ_NAME_OTHER;   /* bounded: arrivals by the cap, retries by their number */
}

/* ---- results -------------------------------------------------------------- */

/* Offered load of pool I: what its kind makes of the workload's rate, for
 * pools on the path of the requests (0 for pools no request visits).  NAN when
 * it cannot be known beforehand: a kind without the hook, a pool behind a
 * station that may thin the flow (queue_limit, timeout_ms, a kind without the
 * hook, such as an LLM pool that rejects over-long requests), or behind a
 * station that splits it (several out-edges). */
static double offered_load(const scenario *sc, station *const *st, int i)
{
    if (sc->has_client && sc->client.retries > 0) return NAN;   /* retries add to the flow: measured */
    const workload_cfg *w = &sc->wl;
    double load = 0;
    /* Each class's share of the rate follows its own path from its target
     * (closed loop: the rate is NAN, unknown beforehand). */
    for (int c = 0; c < w->nclasses; c++) {
        int lossy = 0;
        int j = w->classes[c].target;
        for (int hops = 0; hops <= sc->npools; hops++) {
            const station *x = st[j];
            if (j == i) {
                if (!x->ops->offered_load || lossy) return NAN;
                load += x->ops->offered_load(x, w->classes[c].share * scenario_arrival_rate(sc));
                break;
            }
            lossy |= !x->ops->offered_load || x->cfg->queue_limit > 0 || x->cfg->timeout_ms > 0;
            if (x->nout == 0) break;
            if (x->nout > 1) return NAN;
            j = x->out[0]->index;
        }
    }
    return load;
}

/* The pool's backlog grew during the window by more than a stable system's
 * fluctuations allow.  In a stable pool the number inside at the end of the
 * window is another sample of the same stationary distribution as at its start;
 * in an overloaded one it has grown by (arrival rate - capacity) x window, in
 * proportion to the run.  The bound, 3 sqrt(window arrivals) + 20, is far above
 * the number inside a stable pool (which does not grow with the run) for any
 * run long enough to measure, and far below the growth of an overload of a few
 * per cent over such a run. */
static int backlog_grew(const sim *s, int i)
{
    const station *st = s->st[i];
    double bound = 3.0 * sqrt((double) st->win_arrivals) + 20.0;
    double growth, se;
    /* Enough samples: the trend over the later half of the window, significant
     * (3 standard errors) and beyond half the bound (it spans half the window),
     * so that a fill early in the window is not called overload (warmup.h). */
    if (trend_growth(&s->tr, i, &growth, &se) == 0)
        return growth > 3.0 * se && growth > bound / 2;
    double grew = (double) st->inside - (double) st->inside_at_start;
    return grew > bound;
}

/* The measured window in relaxation times of the pools' queues, the least over
 * the pools (sim_result.relax_windows; repci_enough).  A pool's relaxation time
 * is the heavy-traffic one, S (1 + cs^2) / (2 c (1 - sqrt rho)^2) for mean
 * service S, its squared coefficient of variation cs^2, c servers and offered
 * load rho (Poisson arrivals; for M/M/c it is Abate and Whitt's 1 / (c mu (1 -
 * sqrt rho)^2), exact for M/M/1), where the load is known and the pool is not
 * an LLM pool (whose stepping share is not a load); and, for every pool, the
 * one its sampled contents show: the samples over half their integrated
 * autocorrelation time (warmup.h, trend_windows), which cannot see excursions
 * as long as the window and is the backstop only. */
static void relax_windows(const sim *s, sim_result *out)
{
    out->relax_windows = INFINITY;
    for (int i = 0; i < s->nst; i++) {
        const pool_result *p = &out->pools[i];
        double w = 2 * trend_windows(&s->tr, i);
        double rho = p->offered_load, S = p->service.mean, c = s->st[i]->capacity;
        if (!(s->sc->pools[i].kind->flags & KIND_TOKENS) && rho > 0 && rho < 1 && S > 0 && c > 0 && p->service.n > 1) {
            double cs2 = (p->service.sd / S) * (p->service.sd / S);
            double gap = 1 - sqrt(rho);
            double relax_ms = S * (1 + cs2) / 2 / (c * gap * gap);
            double wm = out->window_s * 1000.0 / relax_ms;
            if (wm < w) w = wm;
        }
        if (w < out->relax_windows) out->relax_windows = w;
    }
}

/* Standard errors by which a measured offered load must exceed 1 (load_exceeds). */
#define LOAD_SE_K 1.0

/* Whether offered load RHO reaches capacity.  A load known beforehand (N == 0: the
 * workload's rate along a path without splits or losses) is exact: RHO >= 1.  A
 * measured one (behind a router, or a lossy or retrying station) is the pool's N
 * window arrivals / window x mean service / servers; N is about Poisson (a split
 * of Poisson arrivals; round robin and the load-aware policies make it less
 * variable), so RHO has a relative standard error of 1 / sqrt(N), and the pool
 * is called saturated when RHO exceeds 1 by more than LOAD_SE_K = 1 standard
 * error.  Then a stable pool 2 standard errors below 1 is called saturated with
 * probability 0.13 % (3 below: 3e-5), against 2.3 % (0.13 %) under RHO >= 1, and
 * an overload 3 standard errors above 1 is still caught in 98 % (4 above: 99.9 %).
 * A larger k would let short overloaded runs pass (k = 2: an overload of 3
 * standard errors, 10 % over 1 000 arrivals, missed in 16 %); slight overloads of
 * long runs are caught by the backlog's trend as well (backlog_grew). */
static int load_exceeds(double rho, uint64_t n)
{
    if (n == 0) return rho >= 1.0;
    return rho - 1.0 > LOAD_SE_K * rho / sqrt((double) n);
}

/* Pool P's electricity (docs/metrics.md, "Energy"): its GPU energy x pue x
 * [sim] electricity_usd_per_kwh, added to its $ per hour (and to its cost_usd
 * row, and reported as electricity_usd, when priced); its energy added to the
 * run's.  Returns 0, or -1 when P's metric table is full. */
static int pool_energy_cost(const scenario *sc, pool_result *p, sim_result *out)
{
    out->has_energy = 1;
    out->energy_j += p->energy_j;
    if (!(sc->electricity_usd_per_kwh > 0)) return 0;
    double usd = p->energy_j / 3.6e6 * sc->pue * sc->electricity_usd_per_kwh;
    out->electricity_usd += usd;
    double per_hour = p->window_s > 0 ? usd * 3600.0 / p->window_s : 0;
    p->cost_per_hour += per_hour;
    for (int k = 0; k < p->nmetrics; k++) {
        pool_metric *m = &p->metrics[k];
        if (m->text) continue;
        if (!strcmp(m->name, "cost_per_hour")) m->value += per_hour;
        else if (!strcmp(m->name, "cost_usd")) m->value += usd;
    }
    return pool_result_add(p, "electricity_usd", usd);
}

/* The shares the [slo] terms `<metric>_over_<T>ms` name, from the full
 * distributions of the measured served requests (issue 34). */
static void over_shares(const sim *s, const scenario *sc, sim_result *out)
{
    for (int k = 0; k < sc->slo.n && out->nover < SIM_MAX_OVER; k++) {
        const slo_term *t = &sc->slo.t[k];
        if (t->kind != SLO_OVER) continue;
        int c = -1;
        for (int j = 0; t->cls[0] && j < s->ncls; j++)
            if (!strcmp(sc->wl.classes[j].name, t->cls)) c = j;
        int ttft = !strcmp(t->metric, "ttft");
        const stat_acc *a = c >= 0 ? (ttft ? s->cls[c].ttft : s->cls[c].e2e) : (ttft ? s->ttft : s->e2e);
        sim_over *o = &out->over[out->nover++];
        snprintf(o->key, sizeof o->key, "%s", t->key);
        snprintf(o->cls, sizeof o->cls, "%s", t->cls);
        o->share = a ? stat_share_above(a, t->over_ms) : NAN;
    }
}

/* Cost per class (docs/metrics.md, "Cost per 1000 requests, overall and per class").  Each pool's $ over the window
 * (cost_per_hour x window) is divided among the classes by their share of the
 * pool's time used by measured requests (cls_use; a pool no measured request
 * used: by their shares of the served requests).  The overall figure charges
 * the window's GPU $ to the requests served in it (departures, measured or
 * not); the measured served requests' part of it is served / departures, and
 * each class gets that part of its share, so that the classes' $ add up to
 * served x cost_per_1k / 1000.  API charges are the class's own. */
static void class_costs(const sim *s, sim_result *out)
{
    /* As the overall figure: no price, no GPU $; a price and nothing served in
     * the window, unknown. */
    double part = out->cost_per_hour > 0 ? (out->throughput_rps > 0 ? (double) out->served / (double) out->departures : NAN) : 0;
    for (int c = 0; c < s->ncls; c++) {
        class_result *k = &out->classes[c];
        double gpu = 0, api = 0;
        for (int i = 0; i < s->nst; i++) {
            const station *st = s->st[i];
            double w = out->pools[i].cost_per_hour * out->window_s / 3600.0;
            api += st->cls_usd[c];
            if (!(w > 0)) continue;
            double used = 0;
            for (int j = 0; j < s->ncls; j++) used += st->cls_use[j];
            double share = used > 0 ? st->cls_use[c] / used
                         : s->served > 0 ? (double) s->cls[c].served / (double) s->served : 0;
            gpu += w * share;
        }
        k->api_usd = api;
        k->cost_per_1k = k->served > 0 ? 1000.0 * (gpu * part + api) / (double) k->served : NAN;
    }
}

/* 1 when pool kind K emits tokens: an LLM pool or an external API. */
static int emits_tokens(const station_kind *k) { return k == &llm_kind || k == &extapi_kind; }

/* The per-pool and per-route accumulators (several pools), the per-pool ITL of
 * LLM pools (several of them) and the TTFT breakdown (an LLM pool), once the
 * stations and their out-edges are built.  Returns 0, or -1 when out of memory. */
static int per_pool_init(sim *s)
{
    const scenario *sc = s->sc;
    if (s->has_llm && !(s->tbd = bd_new_n(TB_N))) return -1;
    if (sc->npools < 2 || sc->npools > UINT16_MAX) return 0;   /* path entries are 16-bit */
    if (!(s->pp = calloc((size_t) sc->npools, sizeof *s->pp))) return -1;
    for (int i = 0; i < sc->npools; i++) {
        sim_pool *x = &s->pp[i];
        x->route0 = -1;
        if (s->st[i]->nout > 1) {
            x->route0 = s->nrt;
            s->nrt += s->st[i]->nout;
        }
        if (!(x->e2e = stat_new())) return -1;
        if (emits_tokens(sc->pools[i].kind) && (!(x->ttft = stat_new()) || !(x->tpot = stat_new()))) return -1;
    }
    if (s->nrt > 0 && !(s->rt = calloc((size_t) s->nrt, sizeof *s->rt))) return -1;
    for (int k = 0; k < s->nrt; k++) {
        sim_route *t = &s->rt[k];
        if (!(t->e2e = stat_new())) return -1;
        if (s->has_llm && (!(t->ttft = stat_new()) || !(t->tpot = stat_new()))) return -1;
    }
    int nllm = 0;
    for (int i = 0; i < sc->npools; i++) nllm += sc->pools[i].kind == &llm_kind;
    for (int i = 0; nllm > 1 && i < sc->npools; i++)
        if (sc->pools[i].kind == &llm_kind && !(s->st[i]->itl_ms = stat_new())) return -1;
    /* Several LLM pools: each step adds its gaps to its pool's histogram only,
     * and the run's ITL is their merge (itl_merge): one update a step, as with one pool. */
    if (nllm > 1) s->sink.itl = NULL;
    return 0;
}

/* The run's ITL from the LLM pools' (several of them: per_pool_init), merged in
 * pool order.  Returns 0, or -1 when out of memory. */
static int itl_merge(sim *s)
{
    if (s->sink.itl) return 0;
    for (int i = 0; i < s->nst; i++)
        if (s->st[i]->itl_ms && stat_merge(s->itl, s->st[i]->itl_ms) != 0) return -1;
    return 0;
}

/* Whether a per-pool or per-route accumulator lost values (out of memory). */
static int per_pool_failed(const sim *s)
{
    int lost = 0;
    for (int i = 0; s->pp && i < s->nst; i++)
        lost |= stat_failed(s->pp[i].e2e) || (s->pp[i].ttft && (stat_failed(s->pp[i].ttft) || stat_failed(s->pp[i].tpot))) ||
                (s->st[i]->itl_ms && stat_failed(s->st[i]->itl_ms));
    for (int k = 0; k < s->nrt; k++)
        lost |= stat_failed(s->rt[k].e2e) || (s->rt[k].ttft && (stat_failed(s->rt[k].ttft) || stat_failed(s->rt[k].tpot)));
    return lost;
}

static void per_pool_free(sim *s)
{
    for (int i = 0; s->pp && i < s->sc->npools; i++) {
        stat_free(s->pp[i].e2e);
        stat_free(s->pp[i].ttft);
        stat_free(s->pp[i].tpot);
    }
    for (int i = 0; i < s->nst; i++) {
        stat_free(s->st[i]->itl_ms);
        s->st[i]->itl_ms = NULL;
    }
    for (int k = 0; s->rt && k < s->nrt; k++) {
        stat_free(s->rt[k].e2e);
        stat_free(s->rt[k].ttft);
        stat_free(s->rt[k].tpot);
    }
    free(s->pp);
    free(s->rt);
    bd_free(s->tbd);
}

/* Pool I's per-pool latencies into P (a single pool's are the system's). */
static void per_pool_results(const sim *s, int i, const sim_result *out, pool_result *p)
{
    const station_kind *k = s->sc->pools[i].kind;
    p->has_tokens = emits_tokens(k);
    p->has_itl = k == &llm_kind;
    if (s->sc->npools == 1) {   /* a single pool: every served request passed it */
        p->e2e = out->e2e;
        if (p->has_tokens) {
            p->ttft = out->ttft;
            p->tpot = out->tpot;
        }
    } else if (s->pp) {
        stat_summarize(s->pp[i].e2e, &p->e2e);
        if (s->pp[i].ttft) {
            stat_summarize(s->pp[i].ttft, &p->ttft);
            stat_summarize(s->pp[i].tpot, &p->tpot);
        }
    }
    /* The only LLM pool emits every inter-token gap there is (API pools record none). */
    if (s->st[i]->itl_ms) stat_summarize(s->st[i]->itl_ms, &p->itl);
    else if (p->has_itl) p->itl = out->itl;
}

/* The routes' results into OUT.  Returns 0, or -1 when out of memory. */
static int route_results(const sim *s, sim_result *out)
{
    if (s->nrt == 0) return 0;
    if (!(out->routes = calloc((size_t) s->nrt, sizeof *out->routes))) return -1;
    out->nroutes = s->nrt;
    const scenario *sc = s->sc;
    for (int i = 0; i < sc->npools; i++) {
        if (s->pp[i].route0 < 0) continue;
        for (int e = 0; e < sc->pools[i].nnext; e++) {
            route_result *x = &out->routes[s->pp[i].route0 + e];
            const sim_route *t = &s->rt[s->pp[i].route0 + e];
            snprintf(x->router, sizeof x->router, "%s", sc->pools[i].name);
            snprintf(x->target, sizeof x->target, "%s", sc->pools[sc->pools[i].next[e]].name);
            x->edge = e;
            x->served = t->served;
            x->has_tokens = t->ttft != NULL;
            stat_summarize(t->e2e, &x->e2e);
            if (t->ttft) {
                stat_summarize(t->ttft, &x->ttft);
                stat_summarize(t->tpot, &x->tpot);
            }
        }
    }
    return 0;
}

/* Returns 0, or -1 when a kind's report rows do not fit. */
static int fill_results(sim *s, sim_result *out)
{
    const scenario *sc = s->sc;
    out->requests = s->target;
    out->warmup_requests = s->opened ? s->wstart : s->next_id;
    out->warmup_s = simtime_to_s(s->opened ? s->t_start : evq_now(s->q));
    out->has_caches = s->cs.n > 0;
    out->warmup_cache_s = s->cs.done ? s->cs.t : simtime_to_s(evq_now(s->q));
    out->warmup_cache_capped = s->cs.capped || (s->cs.n > 0 && !s->cs.done);
    out->served = s->served;
    out->rejected = s->rejected;
    out->timed_out = s->timed_out;
    out->failed = s->failed;
    out->abandoned = s->abandoned;                                                     /* patience (issue 34) */
    for (int c = 0; c < sc->wl.nclasses; c++) out->has_patience |= sc->wl.classes[c].has_patience;
    out->has_client = s->client != NULL;
    out->attempts = s->attempts;
    out->retries = s->retries;
    out->wasted = s->wasted;
    for (int i = 0; i < sc->npools; i++) out->has_fleet |= sc->pools[i].fleet != NULL;
    out->events = evq_events(s->q);
    out->sim_time_s = simtime_to_s(evq_now(s->q));
    out->window_s = simtime_to_s(s->t_end - s->t_start);
    out->departures = s->departures;
    out->has_goodput = sc->slo.per_request;
    out->good = s->good;
    out->throughput_rps = out->window_s > 0 ? (double) s->departures / out->window_s : 0;
    out->trace_exhausted = s->trace_ran_out;
    out->output_tps = out->window_s > 0 ? s->out_tokens / out->window_s : 0;
    out->peak_live = s->reqs.peak;
    stat_summarize(s->e2e, &out->e2e);
    if (s->e2e_cold) {
        out->has_cold = 1;
        stat_summarize(s->e2e_cold, &out->e2e_cold);
        stat_summarize(s->e2e_warm, &out->e2e_warm);
        stat_summarize(s->ttft_cold, &out->ttft_cold);
        stat_summarize(s->ttft_warm, &out->ttft_warm);
    }
    stat_summarize(s->mirror ? s->st[0]->queue_ms : s->queue, &out->queue);
    stat_summarize(s->mirror ? s->st[0]->service_ms : s->service, &out->service);
    stat_summarize(s->ttft, &out->ttft);
    stat_summarize(s->tpot, &out->tpot);
    stat_summarize(s->itl, &out->itl);
    stat_summarize(s->overhead, &out->overhead);
    stat_summarize(s->network, &out->network);
    out->has_gateway = s->has_gateway;
    out->has_kv = s->has_kv;
    bd_shares(s->bd, 0, out->share_all);
    bd_shares(s->bd, stat_quantile(s->e2e, 0.99), out->share_p99);
    if (s->tbd) {
        out->has_ttft_bd = 1;
        bd_shares(s->tbd, 0, out->ttft_share_all);
        bd_shares(s->tbd, stat_quantile(s->ttft, 0.99), out->ttft_share_p99);
        for (int k = 0; k < TB_N; k++) out->ttft_part_ms[k] = s->tb_n ? s->tb_sum[k] / (double) s->tb_n : NAN;
    }
    _Static_assert(TB_N == SIM_TTFT_PARTS, "the public TTFT breakdown has every component");
    out->saturated = s->capped;
    for (int i = 0; i < s->nst; i++) {
        station *st = s->st[i];
        pool_result *p = &out->pools[i];
        snprintf(p->name, sizeof p->name, "%s", sc->pools[i].name);
        p->kind = sc->pools[i].kind->name;
        p->has_offered_load = st->ops->offered_load != NULL;
        p->offered_load = offered_load(sc, s->st, i);
        double span = (double) (s->t_end - s->t_start);
        p->window_s = out->window_s;
        p->utilization = span > 0 ? (st->busy_area - st->area_at_start) / (span * st->capacity) : 0;
        stat_summarize(st->queue_ms, &p->queue);
        stat_summarize(st->service_ms, &p->service);
        per_pool_results(s, i, out, p);
        p->arrivals = st->arrivals;
        p->served = st->served;
        p->rejected = st->rejected;
        p->timed_out = st->timed_out;
        if (out->has_patience && pool_result_add(p, "abandoned", (double) st->abandoned)) return -1;   /* issue 34 */
        if (st->ops->report && st->ops->report(st, p) != 0) return -1;
        for (int k = 0; k < s->cs.n; k++)   /* when its hit rate settled (warmup.h) */
            if (s->cs.pool[k] == i && (pool_result_add(p, "warmup_settled", s->cs.settled_s[k] >= 0) ||
                                       pool_result_add(p, "warmup_settled_s", s->cs.settled_s[k] >= 0 ? s->cs.settled_s[k] : NAN)))
                return -1;
        if (p->has_energy && pool_energy_cost(sc, p, out) != 0) return -1;
        /* A pool whose queue is bounded (queue_limit) or drained (timeout_ms) is a
         * stable loss system whatever its offered load: only growth counts. */
        int bounded = sc->pools[i].queue_limit > 0 || sc->pools[i].timeout_ms > 0;
        int all_patient = sc->wl.nclasses > 0;   /* patience (issue 34): every client leaves a queue in time */
        for (int c = 0; c < sc->wl.nclasses; c++) all_patient &= sc->wl.classes[c].has_patience;
        bounded |= all_patient;
        uint64_t counted = 0;      /* arrivals the load was measured from (0: known beforehand) */
        if (isnan(p->offered_load) && p->has_offered_load && out->window_s > 0) {
            /* Inflow unknown beforehand (a lossy pool upstream): measure it. */
            p->offered_load = st->ops->offered_load(st, (double) st->win_arrivals / out->window_s);
            counted = st->win_arrivals;
        }
        p->load_saturated = !bounded && load_exceeds(p->offered_load, counted);
        p->saturated = p->load_saturated || backlog_grew(s, i) || (s->capped && st->qlen > 0);
        if (s->finite) {
            /* Measured to its end: what would be called saturated, or a peak queue
             * beyond a stable pool's fluctuations (backlog_grew's bound), is a backlog
             * that grew and drained (docs/workloads.md, "Finite workloads"). */
            p->peak_queue = s->peak_q[i];
            p->peak_inside = s->peak_in[i];
            p->backlog_grew = p->saturated || (double) p->peak_queue > 3.0 * sqrt((double) st->win_arrivals) + 20.0;
            p->saturated = p->load_saturated = 0;
            out->backlog_grew |= p->backlog_grew;
        }
        if (p->saturated) out->saturated = 1;
        if (sc->pools[i].kind->flags & KIND_TOKENS) out->has_llm = 1;
        out->cost_per_hour += p->cost_per_hour;
        double usd = pool_metric_get(p, "api_usd");
        if (!isnan(usd)) out->api_usd += usd;
        usd = pool_metric_get(p, "egress_usd");                 /* network egress (issue 34) */
        if (!isnan(usd)) out->egress_usd += usd;
    }
    relax_windows(s, out);
    out->mean_power_w = out->window_s > 0 ? out->energy_j / out->window_s : 0;
    out->has_electricity = out->has_energy && sc->electricity_usd_per_kwh > 0;
    out->cost_per_mtok = out->output_tps > 0 ? out->cost_per_hour / (out->output_tps * 3600.0 / 1e6) : NAN;
    /* GPU $ per request = $/h / (requests/h served); API $ per measured served request. */
    double gpu = out->cost_per_hour > 0 ? (out->throughput_rps > 0 ? out->cost_per_hour / (out->throughput_rps * 3600.0) : NAN) : 0.0;
    out->cost_per_1k = out->served > 0 ? 1000.0 * (gpu + (out->api_usd + out->egress_usd) / (double) out->served) : NAN;
    out->repeat_token_share = wl_repeat_token_share(s->src);
    out->closed_loop = s->closed;
    out->finite = s->finite;
    out->peak_queue = s->peak_q_all;
    out->peak_queue_at_s = simtime_to_s(s->peak_q_t);
    double win_ns = (double) (s->t_end - s->t_start);
    out->achieved_rps = out->window_s > 0 ? (double) s->win_arrivals / out->window_s : 0;
    out->mean_in_system = win_ns > 0 ? (s->live_area_end - s->live_area_start) / win_ns : 0;
    for (int c = 0; c < s->ncls; c++) {
        class_result *k = &out->classes[c];
        sim_class *x = &s->cls[c];
        snprintf(k->name, sizeof k->name, "%s", sc->wl.classes[c].name);
        k->requests = x->requests;
        k->served = x->served;
        k->rejected = x->rejected;
        k->timed_out = x->timed_out;
        k->failed = x->failed;
        k->abandoned = x->abandoned;   /* patience (issue 34) */
        k->good = x->good;
        stat_summarize(x->e2e, &k->e2e);
        stat_summarize(x->queue, &k->queue);
        stat_summarize(x->service, &k->service);
        stat_summarize(x->ttft, &k->ttft);
        stat_summarize(x->tpot, &k->tpot);
        if (s->cls_itl) stat_summarize(s->cls_itl[c], &k->itl);
    }
    out->has_cost = s->has_gateway || out->cost_per_hour > 0;
    if (s->ncls > 0) class_costs(s, out);
    over_shares(s, sc, out);   /* shares over a threshold (issue 34) */
    return 0;
}

int sim_run(const scenario *sc, uint64_t seed, sim_result *out, char *err, size_t errlen)
{
    gsl_set_error_handler_off();   /* errors come back as status codes and NULLs (checked) */
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    memset(out, 0, sizeof *out);
    out->seed = seed;
    sim s = { 0 };
    int rc = -1;
    s.sc = sc;
    s.target = sc->requests;
    s.finite = sc->finite;
    if (sc->wl.arrival == ARRIVAL_TRACE && !sc->wl.loop) {
        if (sc->wl.tr.n <= sc->warmup) {
            snprintf(err, errlen, "%s: [workload] trace has %zu rows, not more than warmup = %llu (set loop = yes or a smaller warmup)",
                     sc->raw.path, sc->wl.tr.n, (unsigned long long) sc->warmup);
            return -1;
        }
        if (sc->wl.tr.n - sc->warmup < s.target) {
            s.target = sc->wl.tr.n - sc->warmup;
            s.trace_ran_out = 1;
        }
    }
    /* A non-looping trace has a fixed number of rows: its warm-up stays fixed. */
    warmup_init(&s.wu, sc->warmup_auto && !(sc->wl.arrival == ARRIVAL_TRACE && !sc->wl.loop), sc->warmup, s.target);
    s.arrival_cap = 2 * (warmup_max(&s.wu) + s.target) + 1000;
    if (trend_init(&s.tr, sc->npools) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < sc->npools; i++) s.has_llm |= (sc->pools[i].kind->flags & KIND_TOKENS) != 0;
    for (int i = 0; i < sc->npools; i++)
        s.has_gateway |= (sc->pools[i].kind->flags & KIND_GATEWAY) != 0 || sc->pools[i].gateway;
    s.has_overhead = s.has_llm || s.has_gateway;
    s.slo_per_request = sc->slo.per_request != 0;
    s.plain_outcome = !sc->has_client && sc->wl.arrival != ARRIVAL_USERS;
#ifdef LATSIM_DEBUG
    s.check = 1;
#else
    const char *chk = getenv("LATSIM_CHECK");
    s.check = chk && *chk && strcmp(chk, "0") != 0;
#endif
    s.mirror = sc->npools == 1 && (sc->pools[0].kind->flags & KIND_SOLE_STATS);
    s.sink = (station_sink) { .ctx = &s, .leave = sink_leave, .outcome = sink_outcome,
                              .release = sink_release, .oom = sink_oom, .measuring = &s.measuring };
    out->pools = calloc((size_t) sc->npools, sizeof *out->pools);
    out->npools = sc->npools;
    s.q = evq_new();
    if (s.q) evq_add_namer(s.q, name_event);
    s.st = calloc((size_t) sc->npools, sizeof *s.st);
    s.src = wl_new(&sc->wl, seed, s.has_llm);
    s.closed = sc->wl.arrival == ARRIVAL_USERS;
    if (sc->wl.explicit_classes) {
        s.ncls = sc->wl.nclasses;
        s.cls = calloc((size_t) s.ncls, sizeof *s.cls);
        out->classes = calloc((size_t) s.ncls, sizeof *out->classes);
        out->nclasses = s.ncls;
        int ok = s.cls && out->classes;
        for (int c = 0; ok && c < s.ncls; c++) {
            sim_class *k = &s.cls[c];
            k->e2e = stat_new(); k->queue = stat_new(); k->service = stat_new();
            k->ttft = stat_new(); k->tpot = stat_new();
            ok = k->e2e && k->queue && k->service && k->ttft && k->tpot;
        }
        int nllm = 0;
        for (int i = 0; i < sc->npools; i++) nllm += sc->pools[i].kind == &llm_kind;
        if (ok && nllm > 0) {
            ok = (s.cls_itl = calloc((size_t) s.ncls, sizeof *s.cls_itl)) != NULL;
            for (int c = 0; ok && c < s.ncls; c++) ok = (s.cls_itl[c] = stat_new()) != NULL;
            s.sink.cls_itl = s.cls_itl;
        }
        if (!ok) { snprintf(err, errlen, "out of memory"); goto done; }
    }
    s.e2e = stat_new(); s.queue = stat_new(); s.service = stat_new();
    s.ttft = stat_new(); s.tpot = stat_new(); s.overhead = stat_new(); s.itl = stat_new();
    s.network = stat_new(); s.bd = bd_new(); s.gwa = gwattr_new(&sc->wl, seed);
    for (int i = 0; i < sc->npools; i++)
        if (fleet_starts(sc->pools[i].fleet) && !s.e2e_cold) {
            if (!(s.e2e_cold = stat_new()) || !(s.e2e_warm = stat_new()) || !(s.ttft_cold = stat_new()) ||
                !(s.ttft_warm = stat_new())) {
                snprintf(err, errlen, "out of memory");
                goto done;
            }
        }
    s.sink.itl = s.itl;
    if (sc->trace_path) {
        if (!(s.trace = trevt_open(sc->trace_path, sc->trace_requests, err, errlen))) goto done;
        for (int i = 0; i < sc->npools; i++) trevt_pool(s.trace, i, sc->pools[i].name);
        s.sink.step = sink_step;
    }
    if (s.finite && (!(s.peak_q = calloc((size_t) sc->npools, sizeof *s.peak_q)) ||
                     !(s.peak_in = calloc((size_t) sc->npools, sizeof *s.peak_in)))) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    /* Only generic pools and no request attributes: nothing reads a request's
     * tail (request.h), which then is not zeroed per request. */
    int generic = 1;
    for (int i = 0; i < sc->npools; i++) generic &= sc->pools[i].kind == &pool_kind_generic;
    s.reqs.zero_tail = !generic || !s.gwa || !gwattr_plain(s.gwa);
    if (!out->pools || !s.q || !s.st || !s.src || !s.e2e || !s.queue ||
        !s.service || !s.ttft || !s.tpot || !s.overhead || !s.itl || !s.network || !s.bd || !s.gwa) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int i = 0; i < sc->npools; i++) {
        const pool_cfg *p = &sc->pools[i];
        station_env env = { .q = s.q, .seed = seed, .index = i, .sink = &s.sink, .nclasses = s.ncls };
        s.st[i] = p->kind->make(p, &env);
        if (!s.st[i]) { snprintf(err, errlen, "out of memory"); goto done; }
        s.nst++;
    }
    for (int i = 0; i < sc->npools; i++) {     /* out-edges */
        const pool_cfg *p = &sc->pools[i];
        if (p->nnext == 0) continue;
        s.st[i]->out = calloc((size_t) p->nnext, sizeof *s.st[i]->out);
        if (!s.st[i]->out) { snprintf(err, errlen, "out of memory"); goto done; }
        for (int k = 0; k < p->nnext; k++) s.st[i]->out[k] = s.st[p->next[k]];
        s.st[i]->nout = p->nnext;
    }
    if (s.wu.automatic) {   /* caches the automatic warm-up waits for (warmup.h) */
        int ncache = 0, *idx = calloc((size_t) sc->npools, sizeof *idx);
        if (!idx) { snprintf(err, errlen, "out of memory"); goto done; }
        for (int i = 0; i < sc->npools; i++) {
            double v[3];
            if (s.st[i]->ops->cache_fill && s.st[i]->ops->cache_fill(s.st[i], v) == 0) idx[ncache++] = i;
        }
        uint64_t cap = WARMUP_CACHE_FACTOR * warmup_max(&s.wu);
        int rc2 = ncache > 0 ? settle_init(&s.cs, ncache, idx, s.target, cap) : 0;
        free(idx);
        if (rc2 != 0) { snprintf(err, errlen, "out of memory"); goto done; }
        if (ncache > 0) s.arrival_cap = 2 * (cap + s.target) + 1000;
    }
    if (per_pool_init(&s) != 0) { snprintf(err, errlen, "out of memory"); goto done; }
    /* The lean paths (sink_leave, on_arrival) when the run has none of what
     * they leave out: self-renewing events come with fleets and time series. */
    int renews = sc->ts_interval_s > 0;
    for (int i = 0; i < sc->npools; i++) renews |= sc->pools[i].fleet != NULL;
    s.lean = !s.trace && generic && s.plain_outcome && !renews && !s.e2e_cold && !s.cls && !s.slo_per_request && !s.has_llm
             && !s.has_gateway && !s.closed && !s.finite && gwattr_plain(s.gwa);
    if (s.closed) {
        for (int u = 0; u < wl_users(s.src) && s.next_id + (uint64_t) u < s.arrival_cap; u++)
            if (!evq_at(s.q, wl_user_start(s.src, u), on_arrival, &s, u)) { sink_oom(&s); break; }
    } else
        schedule_next(&s);
    if (sc->has_client) {
        s.client = &sc->client;
        if (!(s.client_rng = rng_stream(seed, "client"))) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
    }
    for (int i = 0; i < sc->npools; i++) s.perpetual |= sc->pools[i].fleet != NULL;
    s.perpetual |= sc->ts_interval_s > 0;
    if (sc->ts_interval_s > 0) {
        s.ts = ts_new(sc->ts_interval_s, err, errlen);
        s.ts_area = calloc((size_t) s.nst + 1, sizeof *s.ts_area);
        s.ts_cap = calloc((size_t) s.nst + 1, sizeof *s.ts_cap);
        if (!s.ts || !s.ts_area || !s.ts_cap || ts_attach(s.ts, s.q, ts_gauge, &s) != 0) {
            snprintf(err, errlen, "out of memory (time series)");
            goto done;
        }
        if (sc->metrics && mx_open(&s, err, errlen) != 0) goto done;
    }
    evq_run(s.q, SIMTIME_NEVER);
    if (s.ts) {
        ts_gauges g;
        ts_gauge(&s, &g);
        if (ts_close_at(s.ts, evq_now(s.q), &g) != 0 || ts_failed(s.ts)) {
            if (ts_overflowed(s.ts))   /* the run outlasted the estimate ts_check_count was given */
                snprintf(err, errlen, "%s: the time series passed %d intervals of %g s at %.6g s of simulated time "
                         "(the run lasted longer than expected): the run was stopped; use a longer --interval",
                         sc->raw.path, TS_MAX_INTERVALS, sc->ts_interval_s, simtime_to_s(evq_now(s.q)));
            else
                snprintf(err, errlen, "out of memory (time series)");
            goto done;
        }
        out->ts = s.ts;
        s.ts = NULL;
        if (s.mx && omx_failed(s.mx)) {
            snprintf(err, errlen, "out of memory (metrics)");
            goto done;
        }
        out->omx = s.mx;
        s.mx = NULL;
    }
    if (evq_overflowed(s.q)) {
        /* The clock's contract (simtime.h): an event past the horizon ends the run. */
        if (evq_overflowed(s.q) == EVQ_STALLED) {
            /* The stall guard (evq.h): what kept firing, by its module's name,
             * else by the pool whose event it is. */
            char what[256];
            uint64_t n = evq_stall_name(s.q, what, sizeof what);
            for (int i = 0; i < s.nst && !strcmp(what, "an event of an unknown module"); i++)
                if (evq_stall_subject(s.q) == s.st[i]) snprintf(what, sizeof what, "an event of [pool %s]", sc->pools[i].name);
            snprintf(err, errlen, "%s: simulated time stopped advancing at %.9g s: over %llu events in a row at that "
                     "instant; what kept firing: %s (a period or duration drawn below the clock's resolution, 1 ns, "
                     "keeps renewing it)", sc->raw.path, simtime_to_s(evq_failed_time(s.q)), (unsigned long long) n, what);
        } else if (evq_overflowed(s.q) == EVQ_BEYOND_HORIZON)
            snprintf(err, errlen, "%s: simulated time would pass the clock's range (%.0f years) after %llu arrivals, "
                     "at %.4g s: a service time, step time, gap or timeout is too long",
                     sc->raw.path, SIMTIME_HORIZON_S / (365.25 * 86400), (unsigned long long) s.next_id,
                     simtime_to_s(evq_now(s.q)));
        else
            snprintf(err, errlen, "%s: internal error: an event was scheduled before the current time", sc->raw.path);
        goto done;
    }
    if (s.oom) {
        snprintf(err, errlen, "out of memory after %llu arrivals (%llu requests in the system at once)",
                 (unsigned long long) s.next_id, (unsigned long long) s.reqs.live);
        goto done;
    }
    if (itl_merge(&s) != 0) {
        snprintf(err, errlen, "out of memory (latency histograms)");
        goto done;
    }
    int lost = stat_failed(s.e2e) || stat_failed(s.queue) || stat_failed(s.service) || stat_failed(s.ttft) ||
               stat_failed(s.tpot) || stat_failed(s.overhead) || stat_failed(s.itl);
    for (int i = 0; i < s.nst; i++) lost |= stat_failed(s.st[i]->queue_ms) || stat_failed(s.st[i]->service_ms);
    lost |= per_pool_failed(&s);
    if (lost) {
        snprintf(err, errlen, "out of memory (latency histograms)");
        goto done;
    }
    if (s.resolved < s.target) {
        /* The source ended (or memory ran out) before every measured request resolved. */
        if (!s.measuring && s.t_end == 0) s.t_end = evq_now(s.q);
        if (s.measuring) window_close(&s);
    }
    if (fill_results(&s, out) != 0) {
        snprintf(err, errlen, "a pool reported more than %d results", POOL_MAX_METRICS);
        goto done;
    }
    if (route_results(&s, out) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    rc = 0;
done:
    if (s.trace) {
        out->trace_requests = trevt_requests(s.trace);
        out->trace_truncated = trevt_truncated(s.trace);
        if (trevt_close(s.trace, rc == 0, rc == 0 ? err : NULL, errlen) != 0) rc = -1;
    }
    trend_free(&s.tr);
    settle_free(&s.cs);
    per_pool_free(&s);
    for (int i = 0; i < s.nst; i++) s.st[i]->ops->destroy(s.st[i]);
    free(s.st);
    req_pool_free(&s.reqs);
    evq_free(s.q);
    wl_free(s.src);
    for (int c = 0; s.cls && c < s.ncls; c++) {
        stat_free(s.cls[c].e2e); stat_free(s.cls[c].queue); stat_free(s.cls[c].service);
        stat_free(s.cls[c].ttft); stat_free(s.cls[c].tpot);
        if (s.cls_itl) stat_free(s.cls_itl[c]);
    }
    free(s.cls_itl);
    free(s.cls);
    stat_free(s.e2e); stat_free(s.queue); stat_free(s.service);
    stat_free(s.ttft); stat_free(s.tpot); stat_free(s.overhead); stat_free(s.itl);
    stat_free(s.network); bd_free(s.bd); gwattr_free(s.gwa);
    stat_free(s.e2e_cold); stat_free(s.e2e_warm); stat_free(s.ttft_cold); stat_free(s.ttft_warm);
    ts_free(s.ts);
    omx_free(s.mx);
    if (s.client_rng) gsl_rng_free(s.client_rng);
    free(s.ts_area);
    free(s.ts_cap);
    free(s.peak_q);
    free(s.peak_in);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    out->wall_time_s = (double) (w1.tv_sec - w0.tv_sec) + 1e-9 * (double) (w1.tv_nsec - w0.tv_nsec);
    return rc;
}

void sim_result_free(sim_result *r)
{
    ts_free(r->ts);
    r->ts = NULL;
    omx_free(r->omx);
    r->omx = NULL;
    free(r->pools);
    r->pools = NULL;
    free(r->classes);
    r->classes = NULL;
    free(r->routes);
    r->routes = NULL;
    r->nroutes = 0;
}
