/* station.h -- what every station (a stage a request passes through) shares,
 * and the interface between the engine (sim.c) and the stations.
 *
 * Stations form a graph: each has out-edges (its pool's `next` list) and hands a
 * request it has finished with to station_forward(), which enters it into the
 * station at the chosen out-edge or, when there is none, gives it back to the
 * engine through the sink.  The engine reaches stations only through
 * station_ops; stations reach the engine only through the station_sink given
 * to station_init(), so a station can be built and tested with a stub sink.
 *
 * A station owns a FIFO queue of requests, its own random stream, and the
 * per-pool statistics: queueing and service time, counts, busy-time integral
 * for utilisation, and what the saturation check reads.
 */
#ifndef LATSIM_STATION_H
#define LATSIM_STATION_H

#include <gsl/gsl_rng.h>
#include "engine/evq.h"
#include "engine/request.h"
#include "core/poolcfg.h"
#include "core/snap.h"
#include "engine/stats.h"
#include "core/tap.h"

typedef struct station station;
typedef struct pool_result pool_result;

/* A FIFO of waiting requests.  A station has one (`queue`); a kind may keep
 * more (an LLM pool's per-replica queues), all counted in the station's qlen. */
typedef struct squeue {
    request *head, *tail;     /* waiting requests (timed-out ones linger as tombstones) */
    uint64_t len;             /* waiting requests, tombstones excluded */
    station *st;              /* owner: its limits, statistics and engine */
    /* Called when a timeout has taken a request out of the queue (len is down by
     * one), before its outcome is recorded; NULL: nothing (squeue_init). */
    void (*timed_out)(struct squeue *q);
} squeue;

/* How stations hand requests back to the engine. */
typedef struct station_sink {
    void *ctx;                                             /* the engine's state */
    /* R, served, leaves the system (its last station had no out-edge). */
    void (*leave)(void *ctx, request *r);
    /* R leaves with OUTCOME (rejected or timed out): records it, keeps the record. */
    void (*outcome)(void *ctx, request *r, req_outcome outcome);
    /* Recycles R's record. */
    void (*release)(void *ctx, request *r);
    /* An event could not be scheduled (out of memory): the run ends with an error. */
    void (*oom)(void *ctx);
    const int *measuring;                                  /* 1 while the measured window is open */
    const tap_set *taps;      /* what the run's collectors offer to record (core/tap.h: inter-token
                                 gaps, per-class sums, steps), taken when a station is made; NULL: none */
} station_sink;

/* What a station is built from, besides its configuration. */
typedef struct station_env {
    evq *q;                   /* the engine */
    uint64_t seed;            /* run seed: the station's stream derives from it and its name */
    int index;                /* pool index in the scenario */
    const station_sink *sink; /* the engine's side */
    int nclasses;             /* [class] sections: per-class cost accounting is kept for this many
                                 classes (cls_use, cls_usd); 0: none kept */
    struct cpu_nodes *cpu_nodes; /* the run's CPU nodes (fleet/cpunode.h), or NULL: none (a pool with
                                    CPU keys then cannot be made) */
} station_env;

/* Told each time a station's count of requests inside changes (station_watch):
 * a router keeping its out-edges' loads in an index (route.h). */
typedef struct station_watcher {
    void (*moved)(void *ctx, int slot, uint64_t inside);   /* the count is now INSIDE */
    void *ctx;                /* the watcher's */
    int slot;                 /* the watcher's name for the station (an out-edge index) */
} station_watcher;

/* The hooks of a kind; NULL means nothing to do (arrive and destroy are required). */
typedef struct station_ops {
    void (*arrive)(station *st, request *r);            /* a request enters the station */
    void (*window_open)(station *st);                   /* the measured window opens: restart counters */
    void (*window_close)(station *st);                  /* it closes: count work in flight up to now */
    void (*snapshot)(const station *st, station_snap *out);  /* kind-specific load (common part filled) */
    /* The load of each of its replicas (running, waiting in the replica's own
     * queue, kv_free): fills OUT[0 .. min(n, MAX)) and returns n, the replicas.
     * NULL: a kind without replicas of its own (0). */
    int (*replicas)(const station *st, station_snap *out, int max);
    /* Offered load for an inflow of RATE requests/s: utilisation the flow would
     * cause.  NULL: unknown beforehand (and the kind may thin its flow). */
    double (*offered_load)(const station *st, double rate);
    /* Kind-specific result rows (pool_result_add); returns 0 or -1 (out of memory). */
    int (*report)(station *st, pool_result *out);
    /* Leading prompt blocks of R that the station's prefix caches hold, counting
     * only blocks cached at or before VISIBLE (a router's stale view); the best
     * over its replicas.  *NIDS gets the number of R's prompt blocks (content ids).
     * NULL: no prefix cache (0). */
    uint32_t (*prefix_match)(const station *st, const request *r, simtime_t visible, uint32_t *nids);
    /* The station's cache since the run began: OUT[0] lookups, OUT[1] the sum of
     * their hit shares (0..1), OUT[2] the sum of their squares (the automatic
     * warm-up waits for it to settle, run/warmup.h).  Returns 0, or -1 when the
     * station has no cache.  NULL: none. */
    int (*cache_fill)(const station *st, double out[3]);
    /* R, which this station named in r->notify, leaves the system served now. */
    void (*returned)(station *st, request *r);
    /* R, which this station named in r->conn.at, leaves the system now (served, dropped or timed
     * out): the station lets go of what it holds for R and sets r->conn.at to the next one to tell. */
    void (*ended)(station *st, request *r);
    /* R, in service here (admitted, not waiting in a queue) and with no first token yet, is abandoned
     * by its client now (patience_s): the kind stops its work on R, lets go of what R holds (a server,
     * KV blocks), charges the time spent on it, and drops it (station_drop, OUT_ABANDONED), now or,
     * when R shares work in flight that cannot stop for it (an LLM step with other sequences), when
     * that work ends.  NULL: the kind cannot cancel; its requests in service are served to the end. */
    void (*cancel)(station *st, request *r);
    /* R leaves this station now (served, passed on, dropped, or timed out of one of its queues, where
     * it stays as a tombstone): the kind lets go of the record it keeps for R there (request.scratch).
     * NULL: the kind keeps none. */
    void (*leave)(station *st, request *r);
    void (*destroy)(station *st);                       /* frees the station */
} station_ops;

struct station {
    const station_ops *ops;
    const pool_cfg *cfg;      /* the pool's configuration */
    int index;                /* pool index in the scenario */
    const station_sink *sink; /* the engine */
    evq *q;                   /* the engine's calendar */
    gsl_rng *rng;             /* the pool's own stream */
    station **out;            /* out-edges (the `next` list), set by the engine after building */
    int nout;                 /* number of out-edges; 0: served requests leave the system */

    squeue queue;             /* the station's queue */
    uint64_t qlen;            /* waiting requests in all its queues, tombstones excluded */

    stat_acc *queue_ms;       /* waiting time in this pool, measured requests, ms */
    stat_acc *service_ms;     /* service time in this pool, measured requests, ms */
    /* Measured requests, counted by the moving calls below (never by a kind): */
    uint64_t arrivals, served, rejected, timed_out;
    uint64_t failed;          /* lost to a server's failure (fleet.h) */
    uint64_t abandoned;       /* left when its client's patience ran out (patience_s): from its queue, or
                                 from service (cancelled) */
    uint64_t cancelled;       /* of abandoned, those whose work in service was cancelled */

    double busy;              /* servers (or replicas) busy now */
    double busy_area;         /* integral of busy over time, server-ns */
    simtime_t busy_since;     /* time of the last change of busy, ns */
    double area_at_start;     /* busy_area when measuring began, server-ns */
    double capacity;          /* servers (or replicas): utilisation's denominator */

    int queue_stat_at_finish; /* 1: the kind records queue_ms when a request leaves
                                 (it may queue more than once, e.g. after preemption) */
    uint64_t inside;          /* requests in the pool now (waiting or in service) */
    station_watcher *watchers;/* told of each change of inside (station_watch); NULL: none */
    int nwatchers;            /* their number */
    uint64_t inside_at_start; /* inside when measuring began */
    uint64_t win_arrivals;    /* requests (measured or not) entering during the window */

    /* Per-class cost accounting (env nclasses > 0; else NULL): what the
     * engine divides the pool's $ and the API charges by (sim.c). */
    double *cls_use;          /* per class: server (LLM: replica) time measured requests used here, ns */
    double *cls_usd;          /* per class: API charges of measured served requests, $ */
    int ncls;                 /* their length */
};

/* Initialises the common part.  Returns 0 or -1 (out of memory). */
int station_init(station *st, const station_ops *ops, const pool_cfg *cfg, const station_env *env);
void station_fini(station *st);

/* ---- moving requests ------------------------------------------------------ */

/* These calls are where a station's counts of measured requests are kept (a
 * kind never updates them itself): arrivals (station_enter), served
 * (station_forward, station_finish), rejected, timed out and failed
 * (station_drop with that outcome, station_reject; a queue's timeout).  A
 * request that is not measured (r->measured 0) is moved but not counted. */

/* R enters ST: counted inside it, as an arrival (measured) and, in the window,
 * in win_arrivals; then handed to the kind's arrive(); R->at and R->entered
 * record the hop. */
void station_enter(station *st, request *r);

/* ST has served R: counted served, it leaves ST along out-edge EDGE
 * (0 <= EDGE < nout) or, when ST has no out-edge, leaves the system served. */
void station_forward(station *st, request *r, int edge);

/* As station_forward, but ST has not served R, only passed it on (a cache
 * miss): not counted served here. */
void station_pass(station *st, request *r, int edge);

/* ST answers R itself (a cache hit): counted served, R leaves the system
 * served from ST, whatever ST's out-edges. */
void station_finish(station *st, request *r);

/* R leaves ST with OUTCOME (rejected, timed out or failed: counted so; abandoned: a
 * kind's cancel, counted abandoned and cancelled) and its record is recycled. */
void station_drop(station *st, request *r, req_outcome outcome);

/* ST refuses R (a full queue, a rate limit, an error answer): counted
 * rejected, R leaves with OUT_REJECTED. */
static inline void station_reject(station *st, request *r) { station_drop(st, r, OUT_REJECTED); }

/* Schedules HANDLER at T (DT from now) for ST's kind.  Returns the event, or 0:
 * out of memory (the engine is told, and the run ends with an error), or T
 * past the clock's range (evq_run stops and the run reports it). */
static inline evq_id station_at(station *st, simtime_t t, evq_handler handler, void *subject, int64_t arg)
{
    evq_id id = evq_at(st->q, t, handler, subject, arg);
    if (!id && !evq_overflowed(st->q)) st->sink->oom(st->sink->ctx);   /* else past the clock: evq_run stops */
    return id;
}

static inline evq_id station_after(station *st, simtime_t dt, evq_handler handler, void *subject, int64_t arg)
{
    evq_id id = evq_after(st->q, dt, handler, subject, arg);
    if (!id && !evq_overflowed(st->q)) st->sink->oom(st->sink->ctx);
    return id;
}

/* Charges NS of server (replica) time to R's class when per-class cost
 * accounting is kept and R is measured. */
static inline void station_charge(station *st, const request *r, double ns)
{
    if (st->cls_use && r->measured) st->cls_use[r->cls] += ns;
}

/* From now on MOVED(CTX, SLOT, inside) is called each time ST's count of
 * requests inside changes, right after the change.  The watcher must outlive
 * ST's last move (the engine destroys all stations together, after the run).
 * Returns 0, or -1 when out of memory. */
int station_watch(station *st, void (*moved)(void *ctx, int slot, uint64_t inside), void *ctx, int slot);

/* ---- busy time, queue ----------------------------------------------------- */

/* Adds DELTA to the busy count at the current time. */
void station_busy(station *st, double delta);

/* Queue operations on the station's queue.  station_enqueue applies
 * queue_limit (to the station's qlen: returns -1 and rejects the request when
 * full) and arms the timeout. */
int station_enqueue(station *st, request *r);
void station_push_front(station *st, request *r);   /* no limit, no timeout: a preempted request */
request *station_peek(station *st);                 /* head, tombstones skipped; NULL when empty */
request *station_dequeue(station *st);              /* removes the head, cancels its timeout */

/* The same on queue Q of its owner station (squeue_init first). */
void squeue_init(squeue *q, station *owner);
int squeue_enqueue(squeue *q, request *r);
void squeue_push_front(squeue *q, request *r);
request *squeue_peek(squeue *q);
request *squeue_dequeue(squeue *q);
/* Walking past the head (an LLM replica passing over requests it cannot admit
 * yet, which keep their places): the live request after PREV, a live request
 * of Q (PREV NULL: the head, as squeue_peek), tombstones on the way dropped;
 * NULL at the end. */
request *squeue_peek_after(squeue *q, request *prev);
/* Removes the live request after PREV (PREV NULL: the head, as squeue_dequeue)
 * and cancels its timeout; call squeue_peek_after(Q, PREV) first.  Returns it,
 * or NULL when there is none. */
request *squeue_dequeue_after(squeue *q, request *prev);

/* Records that R starts (or resumes) service now, ending a wait in the queue.  When
 * R's client has a patience (give_up_at), R has no first token yet and ST's kind can
 * cancel (station_ops.cancel), its cancel is called for R when the patience runs
 * out in service (at once if it has already); leaving ST disarms it, and going back
 * to a queue (station_push_front, a preemption) makes it the queue's timeout again. */
void station_start(station *st, request *r);

/* ---- the measured window, load, results ------------------------------------ */

void station_window_open(station *st);     /* common counters, then the kind's hook */
void station_window_close(station *st);    /* busy time up to now, then the kind's hook */

/* Fills OUT with ST's load: the common part, then the kind's. */
void station_snapshot(const station *st, station_snap *out);
/* Fills OUT[0 .. min(n, MAX)) with the load of each of ST's replicas; returns
 * n, the replicas (0: a kind without replicas of its own). */
int station_replicas(const station *st, station_snap *out, int max);

#endif
