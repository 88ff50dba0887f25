/* col_paths.c -- the run collector of per-pool and per-route latencies
 * (collect.h): with several pools, the E2E of the measured served requests
 * that passed each pool, TTFT and TPOT where the token-emitting pools emitted
 * them, and the same per route (an out-edge of a station with several).
 *
 * A pool's are its pool_result's; a route's are rows of scope
 * "route:ROUTER->TARGET" (docs/metrics.md, "Rows of pools, routes and classes"). */
#include <math.h>
#include <string.h>
#include "run/collect.h"
#include "latsim/report.h"   /* REPORT_ROUTE_SCOPE */

/* Statistics of the requests that passed one pool. */
typedef struct path_pool {
    stat_acc *e2e;            /* E2E of the measured served requests that passed it, ms */
    stat_acc *ttft, *tpot;    /* token-emitting pools (KIND_EMITS): TTFT of the requests whose first token it
                                 emitted, TPOT of those it emitted the last one of, ms; else NULL */
    int route0;               /* index in paths.rt of its first out-edge's route; -1: fewer than two out-edges */
} path_pool;

/* Statistics of one route (an out-edge of a station with several). */
typedef struct path_route {
    uint64_t served;          /* measured served requests that took it */
    stat_acc *e2e, *ttft, *tpot;   /* theirs, ms (ttft and tpot with an LLM pool; else NULL) */
} path_route;

typedef struct paths {
    const run_env *env;
    path_pool *pp;            /* per pool */
    path_route *rt;           /* per out-edge of the stations with several (path_pool.route0) */
    int nrt;
} paths;

static int paths_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    paths *x = self;
    const scenario *sc = env->sc;
    x->env = env;
    if (sc->npools < 2 || sc->npools > UINT16_MAX) return COL_IDLE;   /* path entries are 16-bit */
    if (!(x->pp = calloc((size_t) sc->npools, sizeof *x->pp))) return -1;
    for (int i = 0; i < sc->npools; i++) {
        path_pool *p = &x->pp[i];
        p->route0 = -1;
        if (sc->pools[i].nnext > 1) {
            p->route0 = x->nrt;
            x->nrt += sc->pools[i].nnext;
        }
        if (!(p->e2e = stat_new())) return -1;
        if ((sc->pools[i].kind->flags & KIND_EMITS) && (!(p->ttft = stat_new()) || !(p->tpot = stat_new()))) return -1;
    }
    if (x->nrt > 0 && !(x->rt = calloc((size_t) x->nrt, sizeof *x->rt))) return -1;
    for (int k = 0; k < x->nrt; k++) {
        path_route *t = &x->rt[k];
        if (!(t->e2e = stat_new())) return -1;
        if (env->has_llm && (!(t->ttft = stat_new()) || !(t->tpot = stat_new()))) return -1;
    }
    return 0;
}

/* Served request R counted in the pools and routes of its path: once per pool
 * it passed (of its first REQ_PATH stations), in every route it took, its TTFT
 * in the pool that emitted its first token and its TPOT in the last
 * token-emitting pool it passed. */
static void paths_leave(void *self, const request *r, const leave_rec *l)
{
    paths *x = self;
    if (!r->measured) return;
    double e2e_ms = l->e2e_ms, ttft = l->ttft_ms, tpot = l->tpot_ms;
    int n = r->hops < REQ_PATH ? r->hops : REQ_PATH;
    int last = -1;
    for (int i = 0; i < n; i++) {
        int p = r->path[i], dup = 0;
        for (int j = 0; j < i && !dup; j++) dup = r->path[j] == p;
        if (dup) continue;                   /* passed twice: counted once */
        path_pool *y = &x->pp[p];
        stat_add(y->e2e, e2e_ms);
        if (y->tpot) last = p;
        if (y->route0 >= 0 && i + 1 < r->hops) {   /* it left P along edge[i] */
            path_route *t = &x->rt[y->route0 + r->edge[i]];
            t->served++;
            stat_add(t->e2e, e2e_ms);
            if (t->ttft && !isnan(ttft)) stat_add(t->ttft, ttft);
            if (t->tpot && !isnan(tpot)) stat_add(t->tpot, tpot);
        }
    }
    if (r->tf_pool > 0 && !isnan(ttft) && x->pp[r->tf_pool - 1].ttft) stat_add(x->pp[r->tf_pool - 1].ttft, ttft);
    if (last >= 0 && !isnan(tpot)) stat_add(x->pp[last].tpot, tpot);
}

static int paths_lost(const void *self)
{
    const paths *x = self;
    int lost = 0;
    for (int i = 0; i < x->env->nst; i++)
        lost |= stat_failed(x->pp[i].e2e) || (x->pp[i].ttft && (stat_failed(x->pp[i].ttft) || stat_failed(x->pp[i].tpot)));
    for (int k = 0; k < x->nrt; k++)
        lost |= stat_failed(x->rt[k].e2e) || (x->rt[k].ttft && (stat_failed(x->rt[k].ttft) || stat_failed(x->rt[k].tpot)));
    return lost;
}

/* Route K (edge E of pool I)'s rows, scope "route:ROUTER->TARGET": router and
 * target (names), edge (0-based), served, then the latencies e2e (and with an
 * LLM pool ttft, tpot).  Returns 0 or -1. */
static int route_rows(const paths *x, sim_result *out, int i, int e)
{
    const scenario *sc = x->env->sc;
    const path_route *t = &x->rt[x->pp[i].route0 + e];
    const char *router = sc->pools[i].name, *target = sc->pools[sc->pools[i].next[e]].name;
    sim_rows *w = &out->rows;
    char S[160];
    snprintf(S, sizeof S, "%s%s->%s", REPORT_ROUTE_SCOPE, router, target);
    if (sim_rows_add_text(w, S, "router", router) || sim_rows_add_text(w, S, "target", target) ||
        sim_rows_add(w, S, "edge", (double) e, 0) || sim_rows_add(w, S, "served", (double) t->served, 0))
        return -1;
    stat_acc *lat[3] = { t->e2e, t->ttft, t->tpot };
    static const char *const NAME[3] = { "e2e", "ttft", "tpot" };
    stat_summary s;
    for (int k = 0; k < (t->ttft ? 3 : 1); k++) {
        memset(&s, 0, sizeof s);
        stat_summarize(lat[k], &s);
        if (sim_rows_add_latency(w, S, NAME[k], &s)) return -1;
    }
    return 0;
}

/* Each pool's latencies (its pool_result), then the routes' rows, in pool then
 * edge order. */
static int paths_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    paths *x = self;
    const scenario *sc = x->env->sc;
    for (int i = 0; i < sc->npools; i++) {
        pool_result *p = &x->env->pools[i];
        stat_summarize(x->pp[i].e2e, &p->e2e);
        if (x->pp[i].ttft) {
            stat_summarize(x->pp[i].ttft, &p->ttft);
            stat_summarize(x->pp[i].tpot, &p->tpot);
        }
    }
    for (int i = 0; i < sc->npools; i++)
        for (int e = 0; x->pp[i].route0 >= 0 && e < sc->pools[i].nnext; e++)
            if (route_rows(x, out, i, e)) return -1;
    return 0;
}

static void paths_free(void *self)
{
    paths *x = self;
    for (int i = 0; x->pp && i < x->env->sc->npools; i++) {
        stat_free(x->pp[i].e2e);
        stat_free(x->pp[i].ttft);
        stat_free(x->pp[i].tpot);
    }
    for (int k = 0; x->rt && k < x->nrt; k++) {
        stat_free(x->rt[k].e2e);
        stat_free(x->rt[k].ttft);
        stat_free(x->rt[k].tpot);
    }
    free(x->pp);
    free(x->rt);
}

const run_collector col_paths = {
    .name = "paths",
    .size = sizeof(paths),
    .init = paths_init,
    .leave = paths_leave,
    .lost = paths_lost,
    .emit = paths_emit,
    .free = paths_free,
};
