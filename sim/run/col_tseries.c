/* col_tseries.c -- the run collector of the time series (collect.h,
 * tseries.h): per-interval counts and latencies of every request (measured or
 * not: the series covers the whole run), errors and retries, and the gauges at
 * each interval's end; with `run --metrics`, the pools' OpenMetrics series
 * scraped at the same ends (omx.h). */
#include <math.h>
#include "run/collect.h"
#include "run/omx.h"
#include "run/tseries.h"

typedef struct tsc {
    const run_env *env;
    tseries *ts;              /* the time series, moved into the result at the end */
    omx *mx;                  /* run --metrics: the OpenMetrics series, or NULL */
    double *area;             /* per station: busy_area at the last interval's end, unit-ns */
    double *cap;              /* per station: cap_area at the last interval's end, unit-ns */
    simtime_t t;              /* that end, ns */
    int *nrep;                /* run --metrics: per station, its replicas with gauges of their own (LLM pools) */
    station_snap *rsnap;      /* room for the most replicas of a station: their loads at a scrape */
    omx_gauge *rg;            /* the same as gauges */
} tsc;

static int tsc_init(void *self, const run_env *env, char *err, size_t errlen)
{
    tsc *x = self;
    x->env = env;
    if (!(env->sc->ts_interval_s > 0)) return COL_IDLE;
    x->ts = ts_new(env->sc->ts_interval_s, err, errlen);
    x->area = calloc((size_t) env->sc->npools + 1, sizeof *x->area);
    x->cap = calloc((size_t) env->sc->npools + 1, sizeof *x->cap);
    if (!x->ts || !x->area || !x->cap) {
        snprintf(err, errlen, "out of memory (time series)");
        return -1;
    }
    return 0;
}

/* run --metrics: a scrape of every pool now.  Returns 0, or -1 when out of memory. */
static int mx_point(tsc *x)
{
    const run_env *e = x->env;
    omx_gauge g[e->nst > 0 ? e->nst : 1];
    for (int i = 0; i < e->nst; i++) {
        station_snap snap;
        int kv = (e->sc->pools[i].kind->flags & KIND_DECODES) != 0;
        station_snapshot(e->st[i], &snap);
        g[i] = (omx_gauge) { (double) snap.running, (double) snap.waiting, kv ? 1 - snap.kv_free : NAN };
        if (x->nrep && x->nrep[i] > 0) {   /* its replicas, as each one's endpoint would read */
            int n = station_replicas(e->st[i], x->rsnap, x->nrep[i]);
            for (int k = 0; k < n && k < x->nrep[i]; k++)
                x->rg[k] = (omx_gauge) { (double) x->rsnap[k].running, (double) x->rsnap[k].waiting,
                                         kv ? 1 - x->rsnap[k].kv_free : NAN };
            omx_replica_gauges(x->mx, i, x->rg);
        }
    }
    return omx_point(x->mx, simtime_to_s(evq_now(e->q)), g);
}

/* Gauges at an interval's end over the stations with replicas or servers
 * (KIND_FLEET kinds): requests waiting now, units up now, and their busy time
 * over the interval per unit up. */
static void tsc_gauge(void *ctx, ts_gauges *g)
{
    tsc *x = ctx;
    const run_env *e = x->env;
    simtime_t now = evq_now(e->q);
    double busy = 0, cap = 0;
    *g = (ts_gauges) { 0, 0, NAN };
    for (int i = 0; i < e->nst; i++) {
        station *st = e->st[i];
        g->queue += (double) st->qlen;
        if (!(st->cfg->kind->flags & KIND_FLEET)) continue;
        station_snap snap;
        station_snapshot(st, &snap);
        station_busy(st, 0);
        busy += st->busy_area - x->area[i];
        x->area[i] = st->busy_area;
        if (isnan(snap.cap_area)) {           /* a fixed number of units */
            g->replicas += snap.capacity;
            cap += snap.capacity * (double) (now - x->t);
        } else {                              /* time mean of the units up */
            double a = snap.cap_area - x->cap[i];
            x->cap[i] = snap.cap_area;
            cap += a;
            if (now > x->t) g->replicas += a / (double) (now - x->t);
        }
    }
    if (cap > 0) g->utilization = busy / cap;
    x->t = now;
    if (x->mx) mx_point(x);
}

/* run --metrics: the series of the pools, and its first scrape (time 0).
 * Returns 0, or -1 with ERR when out of memory. */
static int mx_open(tsc *x, char *err, size_t errlen)
{
    const scenario *sc = x->env->sc;
    const char **names = calloc((size_t) sc->npools + 1, sizeof *names);
    const char **models = calloc((size_t) sc->npools + 1, sizeof *models);
    int *llm = calloc((size_t) sc->npools + 1, sizeof *llm);
    int rc = -1;
    if (names && models && llm) {
        for (int i = 0; i < sc->npools; i++) {
            const station_kind *k = sc->pools[i].kind;
            names[i] = sc->pools[i].name;
            llm[i] = (k->flags & KIND_DECODES) != 0;
            models[i] = k->model_name ? k->model_name(&sc->pools[i]) : NULL;
        }
        x->mx = omx_new(sc->npools, names, models, llm, err, errlen);
        x->nrep = calloc((size_t) sc->npools + 1, sizeof *x->nrep);
        int most = 0;
        for (int i = 0; x->mx && x->nrep && i < x->env->nst; i++) {
            x->nrep[i] = station_replicas(x->env->st[i], NULL, 0);
            if (x->nrep[i] > most) most = x->nrep[i];
            if (omx_set_replicas(x->mx, i, x->nrep[i]) != 0) x->nrep[i] = -1;
        }
        x->rsnap = calloc((size_t) most + 1, sizeof *x->rsnap);
        x->rg = calloc((size_t) most + 1, sizeof *x->rg);
        int ok = x->mx && x->nrep && x->rsnap && x->rg;
        for (int i = 0; ok && i < x->env->nst; i++) ok = x->nrep[i] >= 0;
        rc = ok && mx_point(x) == 0 ? 0 : -1;
    }
    if (rc != 0) snprintf(err, errlen, "out of memory (metrics)");
    free(names);
    free(models);
    free(llm);
    return rc;
}

/* The interval events start with the run (after the first arrival's). */
static int tsc_start(void *self, char *err, size_t errlen)
{
    tsc *x = self;
    if (ts_attach(x->ts, x->env->q, tsc_gauge, x) != 0) {
        snprintf(err, errlen, "out of memory (time series)");
        return -1;
    }
    return x->env->sc->metrics ? mx_open(x, err, errlen) : 0;
}

static void tsc_arrive(void *self, const request *r)
{
    (void) r;
    ts_arrival(((tsc *) self)->ts);
}

/* Every served request; run --metrics: as the engine saw it (its queueing and
 * service time) and as its client did, attributed to the pool (and replica)
 * that emitted its first token, else to the pool it entered first. */
static void tsc_leave(void *self, const request *r, const leave_rec *l)
{
    tsc *x = self;
    ts_served(x->ts, l->e2e_ms, l->ttft_ms);
    if (!x->mx) return;
    omx_req m = {
        .e2e_s = simtime_to_s(l->now + r->ret_last_ns - r->arrival),
        .ttft_s = l->first >= 0 ? simtime_to_s(l->first - r->arrival) : NAN,
        .eng_e2e_s = simtime_to_s(r->queue_ns + r->service_ns),
        .eng_ttft_s = r->tf_pool > 0 ? simtime_to_s(r->tf.queue_ns + r->tf.service_ns) : NAN,
        .tpot_s = r->tf_pool > 0 && r->output > 1 && r->last_token >= r->first_token
                  ? simtime_to_s(r->last_token - r->first_token) / (double) (r->output - 1) : NAN,
        .prompt = r->prompt,
        .output = r->tf_pool > 0 ? r->output : 0,
        .replica = r->tf_pool > 0 ? r->tf_rep : -1,
    };
    omx_served(x->mx, r->tf_pool > 0 ? r->tf_pool - 1 : r->target, &m);
}

static void tsc_error(void *self, const request *r, req_outcome outcome)
{
    (void) r;
    (void) outcome;
    ts_error(((tsc *) self)->ts);
}

static void tsc_retry(void *self, const request *r)
{
    (void) r;
    ts_retry(((tsc *) self)->ts);
}

/* The last interval closes at the end of the run; the series go to OUT. */
static int tsc_end(void *self, sim_result *out, char *err, size_t errlen)
{
    tsc *x = self;
    const scenario *sc = x->env->sc;
    simtime_t now = evq_now(x->env->q);
    ts_gauges g;
    tsc_gauge(x, &g);
    if (ts_close_at(x->ts, now, &g) != 0 || ts_failed(x->ts)) {
        if (ts_overflowed(x->ts))   /* the run outlasted the estimate ts_check_count was given */
            snprintf(err, errlen, "%s: the time series passed %d intervals of %g s at %.6g s of simulated time "
                     "(the run lasted longer than expected): the run was stopped; use a longer --interval",
                     sc->raw.path, TS_MAX_INTERVALS, sc->ts_interval_s, simtime_to_s(now));
        else
            snprintf(err, errlen, "out of memory (time series)");
        return -1;
    }
    out->ts = x->ts;
    x->ts = NULL;
    if (x->mx && omx_failed(x->mx)) {
        snprintf(err, errlen, "out of memory (metrics)");
        return -1;
    }
    out->omx = x->mx;
    x->mx = NULL;
    return 0;
}

static void tsc_free(void *self)
{
    tsc *x = self;
    ts_free(x->ts);
    omx_free(x->mx);
    free(x->nrep);
    free(x->rsnap);
    free(x->rg);
    free(x->area);
    free(x->cap);
}

const run_collector col_tseries = {
    .name = "tseries",
    .size = sizeof(tsc),
    .init = tsc_init,
    .start = tsc_start,
    .arrive = tsc_arrive,
    .leave = tsc_leave,
    .error = tsc_error,
    .retry = tsc_retry,
    .end = tsc_end,
    .free = tsc_free,
};
