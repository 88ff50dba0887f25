/* verdict.c -- what the engine concludes about each pool at the end of a run
 * (verdict.h): its offered load, whether it saturated (load beyond 1, or a
 * backlog that kept growing), the window in relaxation times, and its
 * electricity's cost. */
#include <math.h>
#include <string.h>
#include "run/verdict.h"
#include "core/kind.h"
#include "core/result.h"
#include "engine/evq.h"

/* Offered load of pool I: what its kind makes of the workload's rate, for
 * pools on the path of the requests (0 for pools no request visits).  NAN when
 * it cannot be known beforehand: a kind without the hook, a pool behind a
 * station that may thin the flow (queue_limit, timeout_ms, a kind without the
 * hook, such as an LLM pool that rejects over-long requests), or behind a
 * station that splits it (several out-edges). */
double verdict_offered_load(const scenario *sc, station *const *st, int i)
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
int verdict_backlog_grew(const station *st, const trend *tr, int i)
{
    double bound = 3.0 * sqrt((double) st->win_arrivals) + 20.0;
    double growth, se;
    /* Enough samples: the trend over the later half of the window, significant
     * (3 standard errors) and beyond half the bound (it spans half the window),
     * so that a fill early in the window is not called overload (warmup.h). */
    if (trend_growth(tr, i, &growth, &se) == 0)
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
double verdict_relax_windows(const scenario *sc, station *const *st, const trend *tr, const pool_result *pools)
{
    double least = INFINITY;
    for (int i = 0; i < sc->npools; i++) {
        const pool_result *p = &pools[i];
        double w = 2 * trend_windows(tr, i);
        double rho = p->offered_load, S = p->service.mean, c = st[i]->capacity;
        if (!(sc->pools[i].kind->flags & KIND_TOKENS) && rho > 0 && rho < 1 && S > 0 && c > 0 && p->service.n > 1) {
            double cs2 = (p->service.sd / S) * (p->service.sd / S);
            double gap = 1 - sqrt(rho);
            double relax_ms = S * (1 + cs2) / 2 / (c * gap * gap);
            double wm = p->window_s * 1000.0 / relax_ms;
            if (wm < w) w = wm;
        }
        if (w < least) least = w;
    }
    return least;
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
 * long runs are caught by the backlog's trend as well (verdict_backlog_grew). */
int verdict_load_exceeds(double rho, uint64_t n)
{
    if (n == 0) return rho >= 1.0;
    return rho - 1.0 > LOAD_SE_K * rho / sqrt((double) n);
}

/* Pool P's electricity (docs/metrics.md, "Energy"): its GPU energy x pue x
 * [sim] electricity_usd_per_kwh, added to its $ per hour (and to its cost_usd
 * row, and reported as electricity_usd, when priced; the run's energy rows:
 * col_energy.c).  Returns 0, or -1 when P's metric table is full. */
int verdict_energy_cost(const scenario *sc, pool_result *p)
{
    if (!(sc->electricity_usd_per_kwh > 0)) return 0;
    double usd = p->energy_j / 3.6e6 * sc->pue * sc->electricity_usd_per_kwh;
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


void verdict_pool_saturated(const scenario *sc, station *const *st, const trend *tr, int i, int capped, pool_result *p)
{
    const station *x = st[i];
    /* A pool whose queue is bounded (queue_limit) or drained (timeout_ms) is a
     * stable loss system whatever its offered load: only growth counts. */
    int bounded = sc->pools[i].queue_limit > 0 || sc->pools[i].timeout_ms > 0;
    int all_patient = sc->wl.nclasses > 0;   /* patience (issue 34): every client leaves a queue in time */
    for (int c = 0; c < sc->wl.nclasses; c++) all_patient &= sc->wl.classes[c].has_patience;
    bounded |= all_patient;
    uint64_t counted = 0;      /* arrivals the load was measured from (0: known beforehand) */
    if (isnan(p->offered_load) && p->has_offered_load && p->window_s > 0) {
        /* Inflow unknown beforehand (a lossy pool upstream): measure it. */
        p->offered_load = x->ops->offered_load(st[i], (double) x->win_arrivals / p->window_s);
        counted = x->win_arrivals;
    }
    p->load_saturated = !bounded && verdict_load_exceeds(p->offered_load, counted);
    p->saturated = p->load_saturated || verdict_backlog_grew(x, tr, i) || (capped && x->qlen > 0);
}

void verdict_clock_failed(const scenario *sc, evq *q, station *const *st, int nst, uint64_t arrivals, char *err,
                          size_t errlen)
{
    if (evq_overflowed(q) == EVQ_STALLED) {
        /* The stall guard (evq.h): what kept firing, by its module's name,
         * else by the pool whose event it is. */
        char what[256];
        uint64_t n = evq_stall_name(q, what, sizeof what);
        for (int i = 0; i < nst && !strcmp(what, "an event of an unknown module"); i++)
            if (evq_stall_subject(q) == st[i]) snprintf(what, sizeof what, "an event of [pool %s]", sc->pools[i].name);
        snprintf(err, errlen, "%s: simulated time stopped advancing at %.9g s: over %llu events in a row at that "
                 "instant; what kept firing: %s (a period or duration drawn below the clock's resolution, 1 ns, "
                 "keeps renewing it)", sc->raw.path, simtime_to_s(evq_failed_time(q)), (unsigned long long) n, what);
    } else if (evq_overflowed(q) == EVQ_BEYOND_HORIZON)
        snprintf(err, errlen, "%s: simulated time would pass the clock's range (%.0f years) after %llu arrivals, "
                 "at %.4g s: a service time, step time, gap or timeout is too long",
                 sc->raw.path, SIMTIME_HORIZON_S / (365.25 * 86400), (unsigned long long) arrivals,
                 simtime_to_s(evq_now(q)));
    else
        snprintf(err, errlen, "%s: internal error: an event was scheduled before the current time", sc->raw.path);
}
