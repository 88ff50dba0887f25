/* sim.c -- a simulation run: the stations, the measured window, and the
 * run's own books: outcomes counted, throughput, clients' timeouts and
 * retries, the saturation verdict, costs (arrivals and request attributes: workload.c).
 *
 * Flow of one request: the source creates it and enters it into the target
 * pool's station; stations pass it along their out-edges (station_forward) and
 * give it back through the sink below when it leaves the system, served,
 * rejected or timed out.  The run stops once every measured request has an
 * outcome.  The engine knows stations only through their kind's row (kind.h)
 * and station_ops, and the metric families only through their collector's
 * row (collect.h): it calls the active ones at each stop of a request's walk,
 * and their emit for the rows of the run's results (sim_result.rows).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <time.h>
#include "run/breakdown.h"
#include "run/collect.h"
#include "run/omx.h"
#include "run/tseries.h"
#include "fleet/fleet.h"
#include "workload/gwattr.h"
#include "core/kind.h"
#include "engine/check.h"
#include "engine/rng.h"
#include "run/sim.h"
#include "run/simstate.h"
#include "run/verdict.h"
#include "run/warmup.h"
#include "core/station.h"
#include "workload/workload.h"

/* A per-request sanity check (DEBUG builds, or LATSIM_CHECK set): when it
 * fails the run stops with the check named (not an assert: it stays on in a
 * build with NDEBUG). */
#define SIM_REQUIRE(s, cond) RUN_REQUIRE((s)->check, cond)


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
    col_set_window(&s->cols, 0);
    evq_stop(s->q);
}

static void retry_later(sim *s, request *r);

static void sink_step(void *ctx, int pool, int rep, simtime_t start, simtime_t dur, int64_t prefill_tokens,
                      int32_t prefill_seqs, int32_t decode_seqs)
{
    sim *s = ctx;
    const col_set *c = &s->cols;
    for (int i = 0; i < c->nstep; i++)
        c->on_step[i]->c->step(c->on_step[i]->self, pool, rep, start, dur, prefill_tokens, prefill_seqs, decode_seqs);
}

static void sink_outcome(void *ctx, request *r, req_outcome outcome)
{
    sim *s = ctx;
    if (outcome != OUT_SERVED && !(s->client && r->abandoned))   /* an attempt its client waits for failed */
        for (int i = 0; i < s->cols.nerror; i++) s->cols.on_error[i]->c->error(s->cols.on_error[i]->self, r, outcome);
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
    if (outcome != OUT_SERVED)
        for (int i = 0; i < s->cols.noutcome; i++) s->cols.on_outcome[i]->c->outcome(s->cols.on_outcome[i]->self, r, outcome);
    if (!r->measured) return;
    if (outcome == OUT_REJECTED) s->rejected++;
    if (outcome == OUT_TIMED_OUT) s->timed_out++;
    if (outcome == OUT_FAILED) s->failed++;
    if (outcome == OUT_ABANDONED) s->abandoned++;   /* patience: the client left a queue */
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

/* Each active collector's leave hook: R served, as its client saw it (L). */
static inline void leave_hooks(sim *s, const request *r, const leave_rec *l)
{
    for (int i = 0; i < s->cols.nleave; i++) s->cols.on_leave[i]->c->leave(s->cols.on_leave[i]->self, r, l);
}

/* sink_leave for a lean run (sim.lean): what the general path does there, with
 * none of the tests of the features the run does not have.  Generic pools add
 * no network or overhead time and no tokens; nothing renews itself. */
static void lean_leave(sim *s, request *r)
{
    if (s->measuring) s->departures++;
    r->at = NULL;
    r->outcome = OUT_SERVED;
    simtime_t now = evq_now(s->q), e2e = now + r->ret_last_ns - r->arrival;
    leave_rec l = { .now = now, .first = -1, .e2e_ms = simtime_to_ms(e2e), .ttft_ms = NAN, .tpot_ms = NAN };
    if (r->measured) {
        SIM_REQUIRE(s, (e2e == r->queue_ns + r->service_ns && r->network_ns == 0 && r->overhead_ns == 0
                             && r->first_token < 0));
        l.queue_ms = l.c[BD_QUEUE] = simtime_to_ms(r->queue_ns);
        l.service_ms = l.c[BD_SERVICE] = simtime_to_ms(r->service_ns);
        s->served++;
    }
    leave_hooks(s, r, &l);
    if (r->measured && ++s->resolved == s->target) window_close(s);
    req_release(&s->reqs, r);
}

static void sink_leave(void *ctx, request *r)
{
    sim *s = ctx;
    if (s->lean) {
        lean_leave(s, r);
        return;
    }
    if (s->client && r->abandoned) {         /* served for nothing: the client left */
        for (int i = 0; i < s->cols.nwasted; i++) s->cols.on_wasted[i]->c->wasted(s->cols.on_wasted[i]->self, r);
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
    /* The client has the answer once its last byte has come back over the
     * hops it passed (ret_last_ns), and its first token likewise. */
    simtime_t now = evq_now(s->q), e2e = now + r->ret_last_ns - r->arrival;
    leave_rec l = { .now = now, .first = r->first_token >= 0 ? client_first(r) : -1, .e2e_ms = simtime_to_ms(e2e),
                    .ttft_ms = NAN, .tpot_ms = NAN };
    if (l.first >= 0) {
        l.ttft_ms = simtime_to_ms(l.first - r->arrival);
        if (r->output > 1 && !r->whole && r->last_token > r->first_token)   /* a whole answer has no TPOT */
            l.tpot_ms = simtime_to_ms(r->last_token + r->ret_last_ns - l.first) / (r->output - 1);
    }
    if (r->measured) {
        /* The components add up exactly (checked in DEBUG builds and with LATSIM_CHECK). */
        SIM_REQUIRE(s, e2e == r->network_ns + r->queue_ns + r->service_ns + r->overhead_ns);
        /* The report's zeros for components no station adds (report_json) rely
         * on these. */
        if (!s->has_overhead) SIM_REQUIRE(s, r->overhead_ns == 0);
        if (!s->has_gateway) SIM_REQUIRE(s, r->network_ns == 0);
        double *c = l.c;
        c[BD_NETWORK] = simtime_to_ms(r->network_ns);
        c[BD_QUEUE] = simtime_to_ms(r->queue_ns);
        c[BD_SERVICE] = simtime_to_ms(r->service_ns);
        c[BD_OVERHEAD] = simtime_to_ms(r->overhead_ns);
        if (s->has_llm) {
            /* Framework overhead of its LLM steps: out of service, into overhead. */
            simtime_t fw = leave_fw_ns(r);
            if (fw > 0) {
                c[BD_SERVICE] = simtime_to_ms(r->service_ns - fw);
                c[BD_OVERHEAD] = simtime_to_ms(r->overhead_ns + fw);
            }
        }
        l.network_ms = c[BD_NETWORK];
        l.queue_ms = c[BD_QUEUE];
        l.service_ms = c[BD_SERVICE];
        l.overhead_ms = c[BD_OVERHEAD];
        if (r->conn.net_ns > 0 || r->conn.wait_ns > 0) {   /* connection setup on hops: apart (issue 34) */
            c[BD_CONNECT] = simtime_to_ms(r->conn.net_ns + r->conn.wait_ns);
            c[BD_NETWORK] = simtime_to_ms(r->network_ns - r->conn.net_ns);
            c[BD_QUEUE] = simtime_to_ms(r->queue_ns - r->conn.wait_ns);
        }
        if (r->kv.xfer_ns > 0 || r->kv.load_ns > 0) {   /* disaggregated or offloaded KV: carved out of service */
            double sv = c[BD_SERVICE];
            c[BD_KV_TRANSFER] = simtime_to_ms(r->kv.xfer_ns);
            c[BD_KV_LOAD] = simtime_to_ms(r->kv.load_ns);
            c[BD_SERVICE] = sv - c[BD_KV_TRANSFER] - c[BD_KV_LOAD];
            if (c[BD_SERVICE] < 0) c[BD_SERVICE] = 0;
        }
        s->served++;
    }
    leave_hooks(s, r, &l);
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
    if (s->measuring) s->win_arrivals++;
    for (int i = 0; i < s->cols.nretry; i++) s->cols.on_retry[i]->c->retry(s->cols.on_retry[i]->self, r);
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
        col_set_window(&s->cols, 1);
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
    for (int i = 0; i < s->cols.narrive; i++) s->cols.on_arrive[i]->c->arrive(s->cols.on_arrive[i]->self, r);
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
    window_arrival(s, r);
    for (int i = 0; i < s->cols.narrive; i++) s->cols.on_arrive[i]->c->arrive(s->cols.on_arrive[i]->self, r);
    if (s->client) client_arm(s, r);
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
    s.plain_outcome = !sc->has_client && sc->wl.arrival != ARRIVAL_USERS;
    s.check = check_period() > 0;   /* the per-request checks are O(1): at every request */
    s.mirror = sc->npools == 1 && (sc->pools[0].kind->flags & KIND_SOLE_STATS);
    s.sink = (station_sink) { .ctx = &s, .leave = sink_leave, .outcome = sink_outcome,
                              .release = sink_release, .oom = sink_oom, .measuring = &s.measuring,
                              .taps = &s.taps };
    s.pres = calloc((size_t) sc->npools, sizeof *s.pres);
    s.q = evq_new();
    if (s.q) evq_add_namer(s.q, name_event);
    s.st = calloc((size_t) sc->npools, sizeof *s.st);
    int need_tokens = s.has_llm;   /* token counts: for the kinds that need them, and pools pricing an encoder */
    for (int i = 0; i < sc->npools; i++) need_tokens |= sc->pools[i].tokens;
    s.src = wl_new(&sc->wl, seed, need_tokens);
    s.closed = sc->wl.arrival == ARRIVAL_USERS;
    if (sc->wl.explicit_classes) s.ncls = sc->wl.nclasses;
    s.gwa = gwattr_new(&sc->wl, seed);
    if (s.finite && (!(s.peak_q = calloc((size_t) sc->npools, sizeof *s.peak_q)) ||
                     !(s.peak_in = calloc((size_t) sc->npools, sizeof *s.peak_in)))) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    /* Only generic pools and no request attributes: nothing reads a request's
     * tail (request.h), which then is not zeroed per request. */
    int generic = 1;
    for (int i = 0; i < sc->npools; i++) generic &= (sc->pools[i].kind->flags & KIND_PLAIN) != 0;
    s.reqs.zero_tail = !generic || !s.gwa || !gwattr_plain(s.gwa);
    if (!s.pres || !s.q || !s.st || !s.src || !s.gwa) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    s.env = (run_env) { .sc = sc, .q = s.q, .st = s.st, .nst = sc->npools, .taps = &s.taps, .ncls = s.ncls,
                        .check = s.check, .has_llm = s.has_llm, .has_gateway = s.has_gateway,
                        .has_overhead = s.has_overhead, .mirror = s.mirror, .pools = s.pres };
    if (col_set_init(&s.cols, &s.env, err, errlen) != 0) goto done;
    s.step_tap = (tap_step) { .fn = sink_step, .ctx = &s };
    if (s.cols.nstep > 0 && tap_offer(&s.taps, "step", TAP_RUN, &s.step_tap) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (!(s.cpun = cpu_nodes_new(s.q, seed))) { snprintf(err, errlen, "out of memory"); goto done; }   /* cpunode.h */
    for (int i = 0; i < sc->npools; i++) {
        const pool_cfg *p = &sc->pools[i];
        station_env env = { .q = s.q, .seed = seed, .index = i, .sink = &s.sink, .nclasses = s.ncls,
                            .cpu_nodes = s.cpun };
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
        uint64_t cap = WARMUP_CACHE_FACTOR * warmup_max(&s.wu);
        int ncache = settle_stations(&s.cs, s.st, sc->npools, s.target, cap);
        if (ncache < 0) { snprintf(err, errlen, "out of memory"); goto done; }
        if (ncache > 0) s.arrival_cap = 2 * (cap + s.target) + 1000;
    }
    /* The lean paths (sink_leave, on_arrival) when the run has none of what
     * they leave out: self-renewing events come with fleets and time series. */
    int renews = sc->ts_interval_s > 0;
    for (int i = 0; i < sc->npools; i++) renews |= sc->pools[i].fleet != NULL;
    s.lean = !sc->trace_path && generic && s.plain_outcome && !renews && s.ncls == 0 && !sc->slo.per_request
             && !s.has_llm && !s.has_gateway && !s.closed && !s.finite && gwattr_plain(s.gwa);
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
    if (col_set_call(&s.cols, COL_START, out, err, errlen) != 0) goto done;
    evq_run(s.q, SIMTIME_NEVER);
    if (col_set_call(&s.cols, COL_END, out, err, errlen) != 0) goto done;
    if (evq_overflowed(s.q)) {   /* the clock's contract (simtime.h): an event past the horizon ends the run */
        verdict_clock_failed(sc, s.q, s.st, s.nst, s.next_id, err, errlen);
        goto done;
    }
    if (s.oom) {
        snprintf(err, errlen, "out of memory after %llu arrivals (%llu requests in the system at once)",
                 (unsigned long long) s.next_id, (unsigned long long) s.reqs.live);
        goto done;
    }
    int lost = col_set_lost(&s.cols);
    for (int i = 0; i < s.nst; i++) lost |= stat_failed(s.st[i]->queue_ms) || stat_failed(s.st[i]->service_ms);
    if (lost) {
        snprintf(err, errlen, "out of memory (latency histograms)");
        goto done;
    }
    if (s.resolved < s.target) {
        /* The source ended (or memory ran out) before every measured request resolved. */
        if (!s.measuring && s.t_end == 0) s.t_end = evq_now(s.q);
        if (s.measuring) window_close(&s);
    }
    if (simres_fill(&s, out) != 0) {
        snprintf(err, errlen, "a pool reported more than %d results, or out of memory", POOL_MAX_METRICS);
        goto done;
    }
    if (simres_workload(&s, out) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    if (col_set_call(&s.cols, COL_EMIT, out, err, errlen) != 0) goto done;
    if (simres_pools(&s, out) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    rc = 0;
done:
    trend_free(&s.tr);
    settle_free(&s.cs);
    for (int i = 0; i < s.nst; i++) s.st[i]->ops->destroy(s.st[i]);
    cpu_nodes_free(s.cpun);   /* after the stations on them (cpunode.h) */
    free(s.st);
    req_pool_free(&s.reqs);
    evq_free(s.q);
    wl_free(s.src);
    col_set_free(&s.cols);
    tap_set_free(&s.taps);
    gwattr_free(s.gwa);
    if (s.client_rng) gsl_rng_free(s.client_rng);
    free(s.peak_q);
    free(s.peak_in);
    free(s.pres);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    double wall_s = (double) (w1.tv_sec - w0.tv_sec) + 1e-9 * (double) (w1.tv_nsec - w0.tv_nsec);
    out->rows.family = "run";   /* the run's wall time, the last of its rows (add_times) */
    if (rc == 0 && (sim_rows_add(&out->rows, "", "wall_time_s", wall_s, 0) != 0 || sim_rows_index(&out->rows) != 0)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    out->rows.family = NULL;
    return rc;
}

void sim_result_free(sim_result *r)
{
    ts_free(r->ts);
    r->ts = NULL;
    omx_free(r->omx);
    r->omx = NULL;
    sim_rows_free(&r->rows);
}
