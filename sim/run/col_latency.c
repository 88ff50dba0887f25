/* col_latency.c -- the run collector of the system's latency (collect.h): E2E,
 * queueing, service, overhead, network, TTFT and TPOT of the measured served
 * requests, as the system's rows (scope "": "e2e", "queue"...); a single
 * pool's per-pool latencies are these. */
#include <math.h>
#include "run/collect.h"

typedef struct lat {
    const run_env *env;
    stat_acc *e2e, *queue, *service, *ttft, *tpot, *overhead, *network;   /* ms */
} lat;

static int lat_init(void *self, const run_env *env, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    lat *x = self;
    x->env = env;
    x->e2e = stat_new();
    x->queue = stat_new();
    x->service = stat_new();
    x->ttft = stat_new();
    x->tpot = stat_new();
    x->overhead = stat_new();
    x->network = stat_new();
    return x->e2e && x->queue && x->service && x->ttft && x->tpot && x->overhead && x->network ? 0 : -1;
}

static void lat_leave(void *self, const request *r, const leave_rec *l)
{
    lat *x = self;
    if (!r->measured) return;
    stat_add(x->e2e, l->e2e_ms);
    if (!x->env->mirror) {   /* else the only station's are the system's */
        stat_add(x->queue, l->queue_ms);
        stat_add(x->service, l->service_ms);
    }
    /* The report's zeros for components no station adds rest on the engine's checks. */
    if (x->env->has_overhead) stat_add(x->overhead, l->overhead_ms);
    if (x->env->has_gateway) stat_add(x->network, l->network_ms);
    if (!isnan(l->ttft_ms)) stat_add(x->ttft, l->ttft_ms);
    if (!isnan(l->tpot_ms)) stat_add(x->tpot, l->tpot_ms);
}

static int lat_lost(const void *self)
{
    const lat *x = self;
    return stat_failed(x->e2e) || stat_failed(x->queue) || stat_failed(x->service) || stat_failed(x->ttft) ||
           stat_failed(x->tpot) || stat_failed(x->overhead) || stat_failed(x->network);
}

/* Its rows, the system's latencies (scope "", docs/metrics.md): e2e, queue,
 * service, network (a station adds network time), overhead (that, or an LLM
 * pool), ttft and tpot (an LLM pool), in the report's order; a single pool's
 * e2e, ttft and tpot are these. */
static int lat_emit(void *self, sim_result *out, char *err, size_t errlen)
{
    (void) err;
    (void) errlen;
    lat *x = self;
    const run_env *e = x->env;
    stat_summary e2e, queue, service, ttft, tpot, overhead, network;
    stat_summarize(x->e2e, &e2e);
    stat_summarize(e->mirror ? e->st[0]->queue_ms : x->queue, &queue);
    stat_summarize(e->mirror ? e->st[0]->service_ms : x->service, &service);
    stat_summarize(x->ttft, &ttft);
    stat_summarize(x->tpot, &tpot);
    stat_summarize(x->overhead, &overhead);
    stat_summarize(x->network, &network);
    sim_rows *r = &out->rows;
    if (sim_rows_add_latency(r, "", "e2e", &e2e) || sim_rows_add_latency(r, "", "queue", &queue) ||
        sim_rows_add_latency(r, "", "service", &service) ||
        (e->has_gateway && sim_rows_add_latency(r, "", "network", &network)) ||
        (e->has_overhead && sim_rows_add_latency(r, "", "overhead", &overhead)) ||
        (e->has_llm && (sim_rows_add_latency(r, "", "ttft", &ttft) || sim_rows_add_latency(r, "", "tpot", &tpot))))
        return -1;
    if (e->nst == 1) {   /* a single pool: every served request passed it */
        pool_result *p = &e->pools[0];
        p->e2e = e2e;
        if (p->has_tokens) {
            p->ttft = ttft;
            p->tpot = tpot;
        }
    }
    return 0;
}

static void lat_free(void *self)
{
    lat *x = self;
    stat_free(x->e2e);
    stat_free(x->queue);
    stat_free(x->service);
    stat_free(x->ttft);
    stat_free(x->tpot);
    stat_free(x->overhead);
    stat_free(x->network);
}

const run_collector col_latency = {
    .name = "latency",
    .size = sizeof(lat),
    .init = lat_init,
    .leave = lat_leave,
    .lost = lat_lost,
    .emit = lat_emit,
    .free = lat_free,
};
