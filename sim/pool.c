/* pool.c -- generic pools of servers (G/G/c with FIFO queue). */
#include <stdlib.h>
#include "pool.h"

typedef struct gpool {
    station st;           /* common part; must be first */
    int idle;             /* servers not serving */
} gpool;

static void serve(gpool *p, request *r);

static void on_service_end(evq *q, void *subject, int64_t arg)
{
    (void) q;
    gpool *p = subject;
    request *r = (request *) (intptr_t) arg;
    station *st = &p->st;
    simtime_t took = evq_now(st->q) - r->start;   /* generic pools never preempt */
    r->service_ns += took;
    if (r->measured) {
        stat_add(st->service_ms, simtime_to_ms(took));
        st->served++;
    }
    request *next = station_dequeue(st);
    if (next) serve(p, next);               /* the server stays busy */
    else {
        p->idle++;
        station_busy(st, -1);
    }
    station_forward(st, r, 0);
}

static void serve(gpool *p, request *r)
{
    station *st = &p->st;
    station_start(st, r);
    double ms = dist_sample(&st->cfg->service, st->rng);
    station_after(st, simtime_from_ms(ms), on_service_end, p, (int64_t) (intptr_t) r);
}

static void arrive(station *st, request *r)
{
    gpool *p = (gpool *) st;
    r->enq = evq_now(st->q);
    if (r->measured) st->arrivals++;
    if (p->idle > 0 && st->qlen == 0) {
        p->idle--;
        station_busy(st, +1);
        serve(p, r);
        return;
    }
    station_enqueue(st, r);
}

/* rate x mean service / servers */
static double offered_load(const station *st, double rate)
{
    return rate * st->cfg->service.mean / 1000.0 / st->cfg->servers;
}

static void destroy(station *st)
{
    station_fini(st);
    free(st);
}

static const station_ops GENERIC_OPS = {
    .arrive = arrive,
    .offered_load = offered_load,
    .destroy = destroy,
};

static const scn_key KEYS[] = {
    { "servers", "1", "parallel servers" },
    { "service_ms", "", "service time distribution, ms (required)" },
    { "usd_per_hour", "0", "$ per server-hour (the planner's cost of this pool)" },
    { NULL, NULL, NULL },
};

static int parse(scn_ctx *x, const char *sec, pool_cfg *p)
{
    if (scn_int(x, sec, "servers", 1, 1, 100000000, &p->servers)) return -1;
    if (scn_num(x, sec, "usd_per_hour", 0, 0, 0, 1e12, &p->usd_per_hour)) return -1;
    if (scn_dist(x, sec, "service_ms", NULL, &p->service)) return -1;
    if (p->service.mean <= 0) return scn_fail(x, sec, "service_ms", "mean service time must be > 0");
    if (p->service.mean > SIMTIME_HORIZON_MS)
        return scn_fail(x, sec, "service_ms", "mean %g ms exceeds the simulated clock's range (%.3g ms, about 146 years)",
                        p->service.mean, SIMTIME_HORIZON_MS);
    return 0;
}

static void free_cfg(pool_cfg *p) { dist_free(&p->service); }

const station_kind pool_kind_generic = {
    .name = "generic",
    .help = "c identical servers in front of one FIFO queue (G/G/c)",
    .keys = KEYS,
    .parse = parse,
    .make = pool_new,
    .free_cfg = free_cfg,
    .min_next = 0,
    .max_next = 1,
    .flags = KIND_SOLE_STATS,
};

station *pool_new(const pool_cfg *cfg, const station_env *env)
{
    gpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (station_init(&p->st, &GENERIC_OPS, cfg, env) != 0) {
        destroy(&p->st);
        return NULL;
    }
    p->idle = cfg->servers;
    p->st.capacity = cfg->servers;
    return &p->st;
}
