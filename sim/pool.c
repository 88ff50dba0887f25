/* pool.c -- generic pools of servers (G/G/c with FIFO queue). */
#include <stdlib.h>
#include "pool.h"
#include "sim.h"

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
    sim_done(st->sim, r);
}

static void serve(gpool *p, request *r)
{
    station *st = &p->st;
    station_start(st, r);
    double ms = dist_sample(&st->cfg->service, st->rng);
    evq_after(st->q, simtime_from_ms(ms), on_service_end, p, (int64_t) (intptr_t) r);
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

static void report(station *st, pool_result *out)
{
    (void) st;
    (void) out;
}

static void destroy(station *st)
{
    station_fini(st);
    free(st);
}

static const station_ops GENERIC_OPS = { "generic", arrive, report, destroy };

station *pool_new(const pool_cfg *cfg, int index, struct sim *sim, evq *q, uint64_t seed)
{
    gpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (station_init(&p->st, &GENERIC_OPS, cfg, index, sim, q, seed) != 0) {
        destroy(&p->st);
        return NULL;
    }
    p->idle = cfg->servers;
    p->st.capacity = cfg->servers;
    return &p->st;
}
