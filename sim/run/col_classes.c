/* col_classes.c -- the run collector of per-class results (collect.h): with
 * [class NAME] sections, each class's rows (scope "class:NAME"): its measured
 * requests and outcomes, latencies, inter-token gaps, goodput and cost.
 *
 * The LLM pools record the gaps per class; the cost is the class's share of
 * each pool's $ (docs/metrics.md, "Cost per 1000 requests, overall and per
 * class"); the rows are listed in docs/metrics.md, "Rows of pools, routes and classes". */
#include <math.h>
#include <string.h>
#include "run/collect.h"
#include "core/slocfg.h"
#include "latsim/report.h"   /* REPORT_CLASS_SCOPE */

/* One class's books. */
typedef struct cls_acc {
    uint64_t requests, served, rejected, timed_out;   /* measured requests */
    uint64_t failed;                                   /* measured requests lost to failures */
    uint64_t abandoned;                                /* patience: whose client left a queue */
    uint64_t good;                                     /* of its served, those within its per-request SLO limits */
    uint64_t lookups, hits, false_hits;                /* its measured requests' result-cache lookups (the last of each) */
    stat_acc *e2e, *queue, *service, *ttft, *tpot;     /* ms */
} cls_acc;

/* A measured request's result-cache lookup into K's counts. */
static void cls_cache(cls_acc *k, const request *r)
{
    if (!r->cache_res) return;
    k->lookups++;
    k->hits += r->cache_res == 2;
    k->false_hits += r->cache_res == 3;
}

typedef struct classes {
    const run_env *env;
    cls_acc *c;               /* per class (env->ncls) */
    stat_acc **itl;           /* each class's inter-token gaps, ms (the sink's cls_itl), with a decoding pool; else NULL */
    double *pfx;              /* per class: prompt tokens at prefix caches, then found there (the sink's cls_pfx), tokens */
} classes;

static int cls_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    classes *x = self;
    x->env = env;
    if (env->ncls == 0) return COL_IDLE;
    if (!(x->c = calloc((size_t) env->ncls, sizeof *x->c))) return -1;
    /* The LLM pools with a prefix cache add each measured request's prompt and
     * found tokens at its first admission, as to their own prefix_hit_rate. */
    if (!(x->pfx = calloc(2 * (size_t) env->ncls, sizeof *x->pfx))) return -1;
    if (tap_offer(env->taps, "cls_pfx", TAP_RUN, x->pfx) != 0) return -1;
    for (int c = 0; c < env->ncls; c++) {
        cls_acc *k = &x->c[c];
        k->e2e = stat_new();
        k->queue = stat_new();
        k->service = stat_new();
        k->ttft = stat_new();
        k->tpot = stat_new();
        if (!k->e2e || !k->queue || !k->service || !k->ttft || !k->tpot) return -1;
    }
    int decodes = 0;
    for (int i = 0; i < env->sc->npools; i++) decodes |= (env->sc->pools[i].kind->flags & KIND_DECODES) != 0;
    if (!decodes) return 0;
    if (!(x->itl = calloc((size_t) env->ncls, sizeof *x->itl))) return -1;
    for (int c = 0; c < env->ncls; c++)
        if (!(x->itl[c] = stat_new())) return -1;
    return tap_offer(env->taps, "cls_itl", TAP_RUN, x->itl);   /* taken by the LLM pools when they are made */
}

static void cls_arrive(void *self, const request *r)
{
    classes *x = self;
    if (r->measured) x->c[r->cls].requests++;
}

/* Its queueing and service are the breakdown's components (service less KV
 * transfer and load: leave_rec.c), not the system statistic's. */
static void cls_leave(void *self, const request *r, const leave_rec *l)
{
    classes *x = self;
    if (!r->measured) return;
    cls_acc *k = &x->c[r->cls];
    if (x->env->sc->slo.per_request)   /* goodput (slocfg.h) */
        k->good += (uint64_t) slo_request_ok(&x->env->sc->slo, r->cls, l->e2e_ms, l->ttft_ms, l->tpot_ms);
    k->served++;
    cls_cache(k, r);
    stat_add(k->e2e, l->e2e_ms);
    stat_add(k->queue, l->c[BD_QUEUE]);
    stat_add(k->service, l->c[BD_SERVICE]);
    if (!isnan(l->ttft_ms)) stat_add(k->ttft, l->ttft_ms);
    if (!isnan(l->tpot_ms)) stat_add(k->tpot, l->tpot_ms);
}

static void cls_outcome(void *self, const request *r, req_outcome outcome)
{
    classes *x = self;
    if (!r->measured) return;
    cls_acc *k = &x->c[r->cls];
    cls_cache(k, r);
    if (outcome == OUT_REJECTED) k->rejected++;
    if (outcome == OUT_TIMED_OUT) k->timed_out++;
    if (outcome == OUT_FAILED) k->failed++;
    if (outcome == OUT_ABANDONED) k->abandoned++;
}

/* Class C's cost: its API charges into *API ($) and its $ per 1000 served
 * requests into *PER_1K (NAN when none served).  Each pool's $ over the window
 * (cost_per_hour x window) is divided among the classes by their share of the
 * pool's time used by measured requests (station.cls_use; a pool no measured
 * request used: by their shares of the served requests).  The overall figure
 * charges the window's GPU $ to the requests served in it (departures,
 * measured or not); the measured served requests' part of it is served /
 * departures, and each class gets that part of its share, so that the
 * classes' $ add up to served x cost_per_1k / 1000.  API charges are the
 * class's own. */
static void class_cost(const classes *x, const sim_result *out, int c, double *api, double *per_1k)
{
    const run_env *e = x->env;
    /* As the overall figure: no price, no GPU $; a price and nothing served in
     * the window, unknown. */
    double per_hour = 0;   /* the pools' $ per hour (col_cost.c's) */
    for (int i = 0; i < e->nst; i++) per_hour += e->pools[i].cost_per_hour;
    double served_all = (double) sim_result_count(out, "served");   /* the run's counts (sim.c) */
    double rps = sim_result_value(out, "throughput_rps");
    double part = per_hour > 0 ? (rps > 0 ? served_all / (double) sim_result_count(out, "departures") : NAN) : 0;
    double gpu = 0;
    *api = 0;
    for (int i = 0; i < e->nst; i++) {
        const station *st = e->st[i];
        double w = e->pools[i].cost_per_hour * sim_result_value(out, "window_s") / 3600.0;
        *api += st->cls_usd[c];
        if (!(w > 0)) continue;
        double used = 0;
        for (int j = 0; j < e->ncls; j++) used += st->cls_use[j];
        double share = used > 0 ? st->cls_use[c] / used
                     : served_all > 0 ? (double) x->c[c].served / served_all : 0;
        gpu += w * share;
    }
    const uint64_t served = x->c[c].served;
    *per_1k = served > 0 ? 1000.0 * (gpu * part + *api) / (double) served : NAN;
}

/* Class C's rows, scope "class:NAME", in the report's order: requests, served,
 * rejected, timed_out (failed with fleet keys), cache_hit_rate and
 * cache_false_hits (after a result cache), prefix_hit_rate (after a prefix
 * cache), abandoned and abandoned_share (with patience_s), goodput and
 * goodput_rps (with per-request [slo] limits), api_usd (a gateway kind),
 * cost_per_1k_requests (priced: NAN in a saturated run), then the latencies
 * e2e, queue, service (and with an LLM pool ttft, tpot, itl).  Returns 0 or -1. */
static int class_rows(const classes *x, sim_result *out, int c)
{
    const run_env *e = x->env;
    const cls_acc *y = &x->c[c];
    sim_rows *w = &out->rows;
    char S[80];
    snprintf(S, sizeof S, "%s%s", REPORT_CLASS_SCOPE, e->sc->wl.classes[c].name);
#define V(name, val) if (sim_rows_add(w, S, name, (double) (val), 0)) return -1
    V("requests", y->requests);
    V("served", y->served);
    V("rejected", y->rejected);
    V("timed_out", y->timed_out);
    if (sim_result_row(out, "", "failed", "value")) V("failed", y->failed);   /* as the system's (sim.c) */
    if (y->lookups) {   /* its result-cache hit rate (false hits included, as the pool's) */
        V("cache_hit_rate", (double) (y->hits + y->false_hits) / (double) y->lookups);
        V("cache_false_hits", y->false_hits);
    }
    double prompt = x->pfx[2 * c], found = x->pfx[2 * c + 1];
    if (prompt > 0) V("prefix_hit_rate", found / prompt);   /* found / prompt tokens, as the pools' */
    if (sim_result_row(out, "", "abandoned", "value")) {   /* clients who gave up (issue 34), as the system's */
        V("abandoned", y->abandoned);
        V("abandoned_share", y->requests ? (double) y->abandoned / (double) y->requests : NAN);
    }
    if (e->sc->slo.per_request) {
        /* Its requests served within their per-request limits ([slo CLASS], else [slo]). */
        V("goodput", y->requests ? (double) y->good / (double) y->requests : NAN);
        double win = sim_result_value(out, "window_s");
        V("goodput_rps", win > 0 ? (double) y->good / win : NAN);
    }
    double api, per_1k;
    class_cost(x, out, c, &api, &per_1k);
    if (x->env->has_gateway) V("api_usd", api);
    /* As the system's (col_cost.c: a gateway kind or a priced pool). */
    if (sim_result_row(out, "", "cost_per_1k_requests", "value") && sim_rows_add(w, S, "cost_per_1k_requests", per_1k, 1))
        return -1;
#undef V
    stat_summary s;
    stat_acc *lat[6] = { y->e2e, y->queue, y->service, y->ttft, y->tpot, x->itl ? x->itl[c] : NULL };
    static const char *const NAME[6] = { "e2e", "queue", "service", "ttft", "tpot", "itl" };
    for (int k = 0; k < (x->env->has_llm ? 6 : 3); k++) {
        memset(&s, 0, sizeof s);   /* no decoding pool: no gap (itl) */
        if (lat[k]) stat_summarize(lat[k], &s);
        if (sim_rows_add_latency(w, S, NAME[k], &s)) return -1;
    }
    return 0;
}

/* Each class's rows, after the engine's results (the pools' costs, the window,
 * served and departures). */
static int cls_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    classes *x = self;
    for (int c = 0; c < x->env->ncls; c++)
        if (class_rows(x, out, c)) return -1;
    return 0;
}

static void cls_free(void *self)
{
    classes *x = self;
    for (int c = 0; x->c && c < x->env->ncls; c++) {
        stat_free(x->c[c].e2e);
        stat_free(x->c[c].queue);
        stat_free(x->c[c].service);
        stat_free(x->c[c].ttft);
        stat_free(x->c[c].tpot);
    }
    for (int c = 0; x->itl && c < x->env->ncls; c++) stat_free(x->itl[c]);
    free(x->itl);
    free(x->pfx);
    free(x->c);
}

const run_collector col_classes = {
    .name = "classes",
    .size = sizeof(classes),
    .init = cls_init,
    .arrive = cls_arrive,
    .leave = cls_leave,
    .outcome = cls_outcome,
    .emit = cls_emit,
    .free = cls_free,
};
