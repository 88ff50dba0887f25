/* station.c -- what every station kind shares: moving requests along the
 * station graph, the queue, busy time, the measured window's counters. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/rng.h"
#include "core/station.h"

int station_init(station *st, const station_ops *ops, const pool_cfg *cfg, const station_env *env)
{
    memset(st, 0, sizeof *st);
    st->ops = ops;
    st->cfg = cfg;
    st->index = env->index;
    st->sink = env->sink;
    st->q = env->q;
    squeue_init(&st->queue, st);
    char name[96];
    snprintf(name, sizeof name, "pool %s", cfg->name);
    st->rng = rng_stream(env->seed, name);
    st->queue_ms = stat_new();
    st->service_ms = stat_new();
    if (!st->rng || !st->queue_ms || !st->service_ms) return -1;
    if (env->nclasses > 0) {
        st->ncls = env->nclasses;
        st->cls_use = calloc((size_t) st->ncls, sizeof *st->cls_use);
        st->cls_usd = calloc((size_t) st->ncls, sizeof *st->cls_usd);
        if (!st->cls_use || !st->cls_usd) return -1;
    }
    return 0;
}

void station_fini(station *st)
{
    if (st->rng) gsl_rng_free(st->rng);
    stat_free(st->queue_ms);
    stat_free(st->service_ms);
    free(st->cls_use);
    free(st->cls_usd);
    free(st->out);
    free(st->watchers);
}

/* ---- moving requests ------------------------------------------------------ */

int station_watch(station *st, void (*moved)(void *ctx, int slot, uint64_t inside), void *ctx, int slot)
{
    station_watcher *w = realloc(st->watchers, ((size_t) st->nwatchers + 1) * sizeof *w);
    if (!w) return -1;
    w[st->nwatchers++] = (station_watcher) { moved, ctx, slot };
    st->watchers = w;
    return 0;
}

/* Tells ST's watchers its count inside changed (kept out of line: most
 * stations have none, and the hot paths stay small enough to inline). */
static __attribute__((noinline)) void inside_moved(station *st)
{
    for (int i = 0; i < st->nwatchers; i++)
        st->watchers[i].moved(st->watchers[i].ctx, st->watchers[i].slot, st->inside);
}

/* ST's count inside changed by DELTA: its watchers hear it. */
static inline void inside_add(station *st, int delta)
{
    st->inside += (uint64_t) (int64_t) delta;
    if (__builtin_expect(st->nwatchers != 0, 0)) inside_moved(st);
}

void station_enter(station *st, request *r)
{
    st->arrivals += r->measured;
    inside_add(st, +1);
    if (*st->sink->measuring) st->win_arrivals++;
    r->at = st;
    r->entered = evq_now(st->q);
    if (r->hops < REQ_PATH) r->path[r->hops] = (uint16_t) st->index;   /* per-pool statistics (sim.c) */
    r->hops++;
    st->ops->arrive(st, r);
}

/* R's time in the system ends: the network hops holding a connection for it
 * hear it, innermost first (each sets r->conn.at to the next). */
static inline void conn_end(request *r)
{
    while (__builtin_expect(r->conn.at != NULL, 0)) {
        station *h = r->conn.at;
        r->conn.at = NULL;
        h->ops->ended(h, r);
    }
}

/* R leaves the station it is in: its patience in service no longer applies there. */
static inline void patience_disarm(station *st, request *r)
{
    if (__builtin_expect(r->patience_ev != 0, 0)) {
        evq_cancel(st->q, r->patience_ev);
        r->patience_ev = 0;
    }
}

/* R leaves ST: its patience in service no longer applies there, and the kind
 * lets go of its record of R (station_ops.leave). */
static inline void depart(station *st, request *r)
{
    patience_disarm(st, r);
    if (st->ops->leave) st->ops->leave(st, r);
}

/* R leaves the system served: the station it asked to be told hears it first. */
static void leave(station *st, request *r)
{
    conn_end(r);
    station *n = r->notify;
    if (n) {
        r->notify = NULL;
        if (n->ops->returned) n->ops->returned(n, r);
    }
    st->sink->leave(st->sink->ctx, r);
}

void station_finish(station *st, request *r)
{
    depart(st, r);
    if (r->measured) st->served++;
    inside_add(st, -1);
    leave(st, r);
}

/* R leaves ST along EDGE (or the system, when ST has no out-edge). */
static inline void pass(station *st, request *r, int edge)
{
    depart(st, r);
    inside_add(st, -1);
    if (st->nout == 0) {
        leave(st, r);
        return;
    }
    assert(edge >= 0 && edge < st->nout);
    if (r->hops - 1u < REQ_PATH) r->edge[r->hops - 1] = (uint16_t) edge;   /* per-route statistics (sim.c) */
    station_enter(st->out[edge], r);
}

void station_forward(station *st, request *r, int edge)
{
    st->served += r->measured;
    pass(st, r, edge);
}

void station_pass(station *st, request *r, int edge) { pass(st, r, edge); }

void station_drop(station *st, request *r, req_outcome outcome)
{
    if (r->measured) {
        if (outcome == OUT_REJECTED) st->rejected++;
        else if (outcome == OUT_TIMED_OUT) st->timed_out++;
        else if (outcome == OUT_FAILED) st->failed++;
        else if (outcome == OUT_ABANDONED) {   /* a kind's cancel (patience in service) */
            st->abandoned++;
            st->cancelled++;
        }
    }
    depart(st, r);
    inside_add(st, -1);
    conn_end(r);
    st->sink->outcome(st->sink->ctx, r, outcome);
    st->sink->release(st->sink->ctx, r);
}

/* ---- busy time, queue ----------------------------------------------------- */

void station_busy(station *st, double delta)
{
    simtime_t now = evq_now(st->q);
    st->busy_area += st->busy * (double) (now - st->busy_since);
    st->busy_since = now;
    st->busy += delta;
    assert(st->busy >= -1e-9);
}

void squeue_init(squeue *q, station *owner)
{
    q->head = q->tail = NULL;
    q->len = 0;
    q->st = owner;
    q->timed_out = NULL;
}

/* A request still waiting when its timeout fires stays in the queue as a
 * tombstone (outcome set) and is removed when it reaches the head. */
static void timeout_fire(evq *e, void *subject, int64_t arg)
{
    (void) e;
    squeue *q = subject;
    station *st = q->st;
    request *r = (request *) (intptr_t) arg;
    r->timeout_ev = 0;
    q->len--;
    st->qlen--;
    req_outcome out = r->impatient ? OUT_ABANDONED : OUT_TIMED_OUT;
    if (r->measured) {
        if (out == OUT_ABANDONED) st->abandoned++;
        else st->timed_out++;
    }
    inside_add(st, -1);
    if (st->ops->leave) st->ops->leave(st, r);
    if (q->timed_out) q->timed_out(q);
    conn_end(r);
    st->sink->outcome(st->sink->ctx, r, out);
}

int squeue_enqueue(squeue *q, request *r)
{
    station *st = q->st;
    if (st->cfg->queue_limit && st->qlen >= st->cfg->queue_limit) {
        station_reject(st, r);
        return -1;
    }
    r->next = NULL;
    if (q->tail) q->tail->next = r;
    else q->head = r;
    q->tail = r;
    q->len++;
    st->qlen++;
    r->impatient = 0;
    if (st->cfg->timeout_ms > 0 || r->give_up_at > 0) {
        /* A timeout that falls past the clock's range (simtime.h) can never fire
         * within a run: it is not armed (the request waits as without one).  The
         * client's patience (give_up_at) is one too, when it comes first. */
        simtime_t due = st->cfg->timeout_ms > 0 ? simtime_add(evq_now(st->q), simtime_from_ms(st->cfg->timeout_ms))
                                                : SIMTIME_NEVER;
        if (r->give_up_at > 0 && r->give_up_at < due && r->first_token < 0) {   /* its answer has not begun */
            due = r->give_up_at > evq_now(st->q) ? r->give_up_at : evq_now(st->q);
            r->impatient = 1;
        }
        if (due <= SIMTIME_HORIZON)
            r->timeout_ev = station_at(st, due, timeout_fire, q, (int64_t) (intptr_t) r);
    }
    return 0;
}

static void timeout_fire(evq *e, void *subject, int64_t arg);

void squeue_push_front(squeue *q, request *r)
{
    if (r->patience_ev) {
        /* Back in a queue while its client waits (a preemption, a server's failure):
         * its patience is the queue's timeout again. */
        station *st = q->st;
        patience_disarm(st, r);
        simtime_t now = evq_now(st->q), due = r->give_up_at > now ? r->give_up_at : now;
        r->impatient = 1;
        r->timeout_ev = station_at(st, due, timeout_fire, q, (int64_t) (intptr_t) r);
    }
    r->next = q->head;
    q->head = r;
    if (!q->tail) q->tail = r;
    q->len++;
    q->st->qlen++;
}

/* Drops timed-out tombstones from the head. */
static void skip_dead(squeue *q)
{
    while (q->head && (q->head->outcome == OUT_TIMED_OUT || q->head->outcome == OUT_ABANDONED)) {
        request *r = q->head;
        q->head = r->next;
        if (!q->head) q->tail = NULL;
        q->st->sink->release(q->st->sink->ctx, r);
    }
}

request *squeue_peek(squeue *q)
{
    skip_dead(q);
    return q->head;
}

request *squeue_peek_after(squeue *q, request *prev)
{
    if (!prev) return squeue_peek(q);
    while (prev->next && (prev->next->outcome == OUT_TIMED_OUT || prev->next->outcome == OUT_ABANDONED)) {
        request *d = prev->next;
        prev->next = d->next;
        if (q->tail == d) q->tail = prev;
        q->st->sink->release(q->st->sink->ctx, d);
    }
    return prev->next;
}

/* R, just unlinked from Q: its counts and its timeout go.  Returns R. */
static request *taken(squeue *q, request *r)
{
    r->next = NULL;
    q->len--;
    q->st->qlen--;
    if (r->timeout_ev) {
        evq_cancel(q->st->q, r->timeout_ev);
        r->timeout_ev = 0;
    }
    return r;
}

request *squeue_dequeue_after(squeue *q, request *prev)
{
    if (!prev) return squeue_dequeue(q);
    request *r = prev->next;
    if (!r) return NULL;
    prev->next = r->next;
    if (q->tail == r) q->tail = prev;
    return taken(q, r);
}

request *squeue_dequeue(squeue *q)
{
    skip_dead(q);
    request *r = q->head;
    if (!r) return NULL;
    q->head = r->next;
    if (!q->head) q->tail = NULL;
    return taken(q, r);
}

int station_enqueue(station *st, request *r) { return squeue_enqueue(&st->queue, r); }
void station_push_front(station *st, request *r) { squeue_push_front(&st->queue, r); }
request *station_peek(station *st) { return squeue_peek(&st->queue); }
request *station_dequeue(station *st) { return squeue_dequeue(&st->queue); }

/* R's client's patience has run out while R is in service at SUBJECT: unless its
 * answer has begun, the kind cancels it. */
static void patience_fire(evq *e, void *subject, int64_t arg)
{
    (void) e;
    station *st = subject;
    request *r = (request *) (intptr_t) arg;
    r->patience_ev = 0;
    if (r->first_token < 0) st->ops->cancel(st, r);
}

void station_start(station *st, request *r)
{
    simtime_t now = evq_now(st->q);
    simtime_t waited = now - r->enq;
    r->queue_ns += waited;
    r->start = now;
    if (r->measured && !st->queue_stat_at_finish) stat_add(st->queue_ms, simtime_to_ms(waited));
    if (__builtin_expect(r->give_up_at > 0, 0) && r->first_token < 0 && !r->queue_patience && st->ops->cancel && !r->patience_ev &&
        r->give_up_at <= SIMTIME_HORIZON)
        r->patience_ev = station_at(st, r->give_up_at > now ? r->give_up_at : now, patience_fire, st, (int64_t) (intptr_t) r);
}

/* ---- the measured window, load -------------------------------------------- */

void station_window_open(station *st)
{
    station_busy(st, 0);
    st->area_at_start = st->busy_area;
    st->inside_at_start = st->inside;
    if (st->ops->window_open) st->ops->window_open(st);
}

void station_window_close(station *st)
{
    station_busy(st, 0);   /* brings busy_area up to now */
    if (st->ops->window_close) st->ops->window_close(st);
}

void station_snapshot(const station *st, station_snap *out)
{
    out->waiting = st->qlen;
    out->inside = st->inside;
    out->running = st->inside - st->qlen;
    out->busy = st->busy;
    out->capacity = st->capacity;
    out->kv_free = 1.0;
    out->cap_area = NAN;
    if (st->ops->snapshot) st->ops->snapshot(st, out);
}

int station_replicas(const station *st, station_snap *out, int max)
{
    return st->ops->replicas ? st->ops->replicas(st, out, max) : 0;
}
