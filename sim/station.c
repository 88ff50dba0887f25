/* station.c -- queue, statistics and utilisation common to every pool kind. */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "rng.h"
#include "sim.h"
#include "station.h"

int station_init(station *st, const station_ops *ops, const pool_cfg *cfg, int index,
                 struct sim *sim, evq *q, uint64_t seed)
{
    memset(st, 0, sizeof *st);
    st->ops = ops;
    st->cfg = cfg;
    st->index = index;
    st->sim = sim;
    st->q = q;
    char name[96];
    snprintf(name, sizeof name, "pool %s", cfg->name);
    st->rng = rng_stream(seed, name);
    st->queue_ms = stat_new();
    st->service_ms = stat_new();
    if (!st->rng || !st->queue_ms || !st->service_ms) return -1;
    return 0;
}

void station_fini(station *st)
{
    if (st->rng) gsl_rng_free(st->rng);
    stat_free(st->queue_ms);
    stat_free(st->service_ms);
}

void station_busy(station *st, double delta)
{
    simtime_t now = evq_now(st->q);
    st->busy_area += st->busy * (double) (now - st->busy_since);
    st->busy_since = now;
    st->busy += delta;
    assert(st->busy >= -1e-9);
}

/* A request still waiting when its timeout fires stays in the queue as a
 * tombstone (outcome set) and is removed when it reaches the head. */
static void timeout_fire(evq *q, void *subject, int64_t arg)
{
    (void) q;
    station *st = subject;
    request *r = (request *) (intptr_t) arg;
    r->timeout_ev = 0;
    st->qlen--;
    if (r->measured) st->timed_out++;
    sim_outcome(st->sim, r, OUT_TIMED_OUT);
}

int station_enqueue(station *st, request *r)
{
    if (st->cfg->queue_limit && st->qlen >= st->cfg->queue_limit) {
        if (r->measured) st->rejected++;
        sim_drop(st->sim, r, OUT_REJECTED);
        return -1;
    }
    r->next = NULL;
    if (st->qtail) st->qtail->next = r;
    else st->qhead = r;
    st->qtail = r;
    st->qlen++;
    if (st->cfg->timeout_ms > 0)
        r->timeout_ev = evq_after(st->q, simtime_from_ms(st->cfg->timeout_ms), timeout_fire, st, (int64_t) (intptr_t) r);
    return 0;
}

void station_push_front(station *st, request *r)
{
    r->next = st->qhead;
    st->qhead = r;
    if (!st->qtail) st->qtail = r;
    st->qlen++;
}

/* Drops timed-out tombstones from the head. */
static void skip_dead(station *st)
{
    while (st->qhead && st->qhead->outcome == OUT_TIMED_OUT) {
        request *r = st->qhead;
        st->qhead = r->next;
        if (!st->qhead) st->qtail = NULL;
        sim_release(st->sim, r);
    }
}

request *station_peek(station *st)
{
    skip_dead(st);
    return st->qhead;
}

request *station_dequeue(station *st)
{
    skip_dead(st);
    request *r = st->qhead;
    if (!r) return NULL;
    st->qhead = r->next;
    if (!st->qhead) st->qtail = NULL;
    r->next = NULL;
    st->qlen--;
    if (r->timeout_ev) {
        evq_cancel(st->q, r->timeout_ev);
        r->timeout_ev = 0;
    }
    return r;
}

void station_start(station *st, request *r)
{
    simtime_t now = evq_now(st->q);
    simtime_t waited = now - r->enq;
    r->queue_ns += waited;
    r->start = now;
    if (r->measured && !st->queue_stat_at_finish) stat_add(st->queue_ms, simtime_to_ms(waited));
}
