/* simres.c -- the results of a run from the engine's books (simstate.h): the
 * run's counts, times and rates (family "run"), each pool's common counters,
 * its kind's rows and its verdicts, and the workload's facts (families
 * "warmup", "finite", "workload"); the metric families' own rows come from
 * their collectors (collect.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "run/simstate.h"
#include "run/verdict.h"
#include "core/kind.h"
#include "workload/workload.h"

/* The run's counts as the system's rows (family "run"; docs/metrics.md):
 * requests, served, rejected, timed_out, failed (a pool has fleet keys),
 * abandoned and abandoned_share (PATIENCE: a class has patience_s) and
 * departures.  Returns 0, or -1 when out of memory. */
static int add_counts(const sim *s, sim_result *out, int patience)
{
    int fleet = 0;
    for (int i = 0; i < s->sc->npools; i++) fleet |= s->sc->pools[i].fleet != NULL;
    sim_rows *r = &out->rows;
    r->family = "run";
    int rc = sim_rows_add(r, "", "requests", (double) s->target, 0) ||
             sim_rows_add(r, "", "served", (double) s->served, 0) ||
             sim_rows_add(r, "", "rejected", (double) s->rejected, 0) ||
             sim_rows_add(r, "", "timed_out", (double) s->timed_out, 0) ||
             (fleet && sim_rows_add(r, "", "failed", (double) s->failed, 0)) ||
             (patience && (sim_rows_add(r, "", "abandoned", (double) s->abandoned, 0) ||
                           sim_rows_add(r, "", "abandoned_share",
                                        s->target ? (double) s->abandoned / (double) s->target : NAN, 0))) ||
             sim_rows_add(r, "", "departures", (double) s->departures, 0);
    r->family = NULL;
    return rc ? -1 : 0;
}

/* The run's times and rates as the system's rows (family "run"; docs/metrics.md):
 * warmup_requests and warmup_s (the warm-up used), throughput_rps (RPS),
 * output_tokens_per_s (TPS; a pool counts tokens), sim_time_s, window_s
 * (WINDOW_S), events and peak_in_system; wall_time_s comes at the end of
 * sim_run.  Returns 0, or -1 when out of memory. */
static int add_times(const sim *s, sim_result *out, double window_s, double rps, double tps)
{
    sim_rows *r = &out->rows;
    r->family = "run";
    int rc = sim_rows_add(r, "", "warmup_requests", (double) (s->opened ? s->wstart : s->next_id), 0) ||
             sim_rows_add(r, "", "warmup_s", simtime_to_s(s->opened ? s->t_start : evq_now(s->q)), 0) ||
             sim_rows_add(r, "", "throughput_rps", rps, 0) ||
             (s->has_llm && sim_rows_add(r, "", "output_tokens_per_s", tps, 0)) ||
             sim_rows_add(r, "", "sim_time_s", simtime_to_s(evq_now(s->q)), 0) ||
             sim_rows_add(r, "", "window_s", window_s, 0) ||
             sim_rows_add(r, "", "events", (double) evq_events(s->q), 0) ||
             sim_rows_add(r, "", "peak_in_system", (double) s->reqs.peak, 0);
    r->family = NULL;
    return rc ? -1 : 0;
}

int simres_fill(sim *s, sim_result *out)
{
    const scenario *sc = s->sc;
    int patience = 0;   /* a class has patience_s: abandoned is reported (issue 34) */
    for (int c = 0; c < sc->wl.nclasses; c++) patience |= sc->wl.classes[c].has_patience;
    if (add_counts(s, out, patience) != 0) return -1;
    double window_s = simtime_to_s(s->t_end - s->t_start);
    double rps = window_s > 0 ? (double) s->departures / window_s : 0;         /* throughput */
    double tps = window_s > 0 ? s->out_tokens / window_s : 0;                  /* output tokens/s */
    if (add_times(s, out, window_s, rps, tps) != 0) return -1;
    int saturated = s->capped;   /* arrivals stopped at their cap, or a pool is saturated */
    for (int i = 0; i < s->nst; i++) {
        station *st = s->st[i];
        pool_result *p = &s->pres[i];
        snprintf(p->name, sizeof p->name, "%s", sc->pools[i].name);
        p->kind = sc->pools[i].kind->name;
        p->has_offered_load = st->ops->offered_load != NULL;
        p->offered_load = verdict_offered_load(sc, s->st, i);
        double span = (double) (s->t_end - s->t_start);
        p->window_s = window_s;
        p->utilization = span > 0 ? (st->busy_area - st->area_at_start) / (span * st->capacity) : 0;
        stat_summarize(st->queue_ms, &p->queue);
        stat_summarize(st->service_ms, &p->service);
        p->has_tokens = (sc->pools[i].kind->flags & KIND_EMITS) != 0;
        p->has_itl = (sc->pools[i].kind->flags & KIND_DECODES) != 0;
        p->arrivals = st->arrivals;
        p->served = st->served;
        p->rejected = st->rejected;
        p->timed_out = st->timed_out;
        if (patience && (pool_result_add(p, "abandoned", (double) st->abandoned) ||   /* issue 34 */
                         pool_result_add(p, "abandoned_share", st->arrivals ? (double) st->abandoned / (double) st->arrivals : NAN) ||
                         pool_result_add(p, "cancelled", (double) st->cancelled))) return -1;
        if (st->ops->report && st->ops->report(st, p) != 0) return -1;
        for (int k = 0; k < s->cs.n; k++)   /* when its hit rate settled (warmup.h) */
            if (s->cs.pool[k] == i && (pool_result_add(p, "warmup_settled", s->cs.settled_s[k] >= 0) ||
                                       pool_result_add(p, "warmup_settled_s", s->cs.settled_s[k] >= 0 ? s->cs.settled_s[k] : NAN)))
                return -1;
        if (p->has_energy && verdict_energy_cost(sc, p) != 0) return -1;
        verdict_pool_saturated(sc, s->st, &s->tr, i, s->capped, p);
        if (s->finite) {
            /* Measured to its end: what would be called saturated, or a peak queue
             * beyond a stable pool's fluctuations (backlog_grew's bound), is a backlog
             * that grew and drained (docs/workloads.md, "Finite workloads"). */
            p->peak_queue = s->peak_q[i];
            p->peak_inside = s->peak_in[i];
            p->backlog_grew = p->saturated || (double) p->peak_queue > 3.0 * sqrt((double) st->win_arrivals) + 20.0;
            p->saturated = p->load_saturated = 0;
        }
        if (p->saturated) saturated = 1;
    }
    /* The verdicts (family "run"; trace_exhausted only when a non-looping
     * trace ran out), and the window's length in relaxation times of the
     * pools' queues (family "aside", which the report leaves out: it goes with
     * every interval over replications, repci_enough). */
    sim_rows *r = &out->rows;
    r->family = "run";
    int rc = sim_rows_add(r, "", "saturated", saturated, 0) ||
             (s->trace_ran_out && sim_rows_add(r, "", "trace_exhausted", 1, 0));
    r->family = "aside";
    rc = rc || sim_rows_add(r, "", "relax_windows", verdict_relax_windows(sc, s->st, &s->tr, s->pres), 0);
    r->family = NULL;
    return rc ? -1 : 0;
}

/* Adds the system's row METRIC = V of family FAMILY to OUT (shown in a
 * saturated run too).  Returns 0 or -1 (out of memory). */
static int engine_row(sim_result *out, const char *family, const char *metric, double v)
{
    out->rows.family = family;
    int rc = sim_rows_add(&out->rows, "", metric, v, 0);
    out->rows.family = NULL;
    return rc;
}

int simres_workload(const sim *s, sim_result *out)
{
    if (s->cs.n > 0 && (engine_row(out, "warmup", "warmup_cache_s", s->cs.done ? s->cs.t : simtime_to_s(evq_now(s->q))) ||
                        engine_row(out, "warmup", "warmup_cache_capped", s->cs.capped || !s->cs.done)))
        return -1;
    if (s->finite) {
        int grew = 0;
        for (int i = 0; i < s->nst; i++) grew |= s->pres[i].backlog_grew;
        if (engine_row(out, "finite", "finite", 1) || engine_row(out, "finite", "backlog_grew", grew) ||
            engine_row(out, "finite", "peak_queue", (double) s->peak_q_all) ||
            engine_row(out, "finite", "peak_queue_at_s", simtime_to_s(s->peak_q_t)))
            return -1;
    }
    double share = wl_repeat_token_share(s->src);
    if (!isnan(share) && engine_row(out, "workload", "repeat_token_share", share)) return -1;
    if (!s->closed) return 0;
    double win_ns = (double) (s->t_end - s->t_start), window_s = simtime_to_s(s->t_end - s->t_start);
    if (engine_row(out, "workload", "achieved_rps", window_s > 0 ? (double) s->win_arrivals / window_s : 0) ||
        engine_row(out, "workload", "mean_in_system", win_ns > 0 ? (s->live_area_end - s->live_area_start) / win_ns : 0))
        return -1;
    return 0;
}

/* Pool P's rows (simres_pools) into R, scope its name.  Returns 0 or -1. */
static int pool_rows(sim_rows *r, const pool_result *p, int finite, int has_llm)
{
    const char *S = p->name;
    r->family = "pool";
    if (sim_rows_add_text(r, S, "kind", p->kind ? p->kind : "unknown") ||
        sim_rows_add(r, S, "busy_share", p->utilization, 0) || sim_rows_add(r, S, "saturated", p->saturated, 0))
        return -1;
    if (finite && (sim_rows_add(r, S, "backlog_grew", p->backlog_grew, 0) ||
                   sim_rows_add(r, S, "peak_queue", (double) p->peak_queue, 0) ||
                   sim_rows_add(r, S, "peak_in_pool", (double) p->peak_inside, 0)))
        return -1;
    if (p->has_offered_load && sim_rows_add(r, S, "offered_load", p->offered_load, 0)) return -1;
    if (sim_rows_add(r, S, "arrivals", (double) p->arrivals, 0) || sim_rows_add(r, S, "served", (double) p->served, 0) ||
        sim_rows_add(r, S, "rejected", (double) p->rejected, 0) || sim_rows_add(r, S, "timed_out", (double) p->timed_out, 0))
        return -1;
    for (int k = 0; k < p->nmetrics; k++) {
        const pool_metric *m = &p->metrics[k];
        if (m->text ? sim_rows_add_text(r, S, m->name, m->text) : sim_rows_add(r, S, m->name, m->value, 0)) return -1;
    }
    /* Its own queue and service hide only when it is saturated itself; the
     * latencies of the requests that passed it when the run is (docs/metrics.md,
     * "Per pool and per route"). */
    if (sim_rows_add_latency_hide(r, S, "queue", &p->queue, p->saturated) ||
        sim_rows_add_latency_hide(r, S, "service", &p->service, p->saturated) ||
        sim_rows_add_latency(r, S, "e2e", &p->e2e))
        return -1;
    if (p->has_tokens && has_llm &&
        (sim_rows_add_latency(r, S, "ttft", &p->ttft) || sim_rows_add_latency(r, S, "tpot", &p->tpot) ||
         (p->has_itl && sim_rows_add_latency(r, S, "itl", &p->itl))))
        return -1;
    r->family = "aside";
    int priced = 0;   /* its kind reports its $ per hour itself */
    for (int k = 0; k < p->nmetrics; k++) priced |= !strcmp(p->metrics[k].name, "cost_per_hour");
    if (sim_rows_add(r, S, "load_saturated", p->load_saturated, 0) ||
        (!priced && sim_rows_add(r, S, "cost_per_hour", p->cost_per_hour, 0)))
        return -1;
    return 0;
}

int simres_pools(const sim *s, sim_result *out)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < s->nst; i++) rc = pool_rows(&out->rows, &s->pres[i], s->finite, s->has_llm);
    out->rows.family = NULL;
    return rc;
}
