/* station.h -- what every pool (generic servers, LLM replicas) shares.
 *
 * A station owns a FIFO queue of requests, its own random stream, and the
 * per-pool statistics: queueing and service time, counts, busy-time integral
 * for utilisation, and queue-length samples for the saturation check.  Each
 * kind of pool fills a station_ops table; sim.c drives stations only through
 * it, and stations hand requests back through sim_done()/sim_drop().
 */
#ifndef LATSIM_STATION_H
#define LATSIM_STATION_H

#include <gsl/gsl_rng.h>
#include "evq.h"
#include "request.h"
#include "scenario.h"
#include "stats.h"

struct sim;
typedef struct station station;
typedef struct pool_result pool_result;

typedef struct station_ops {
    const char *kind;                                   /* "generic", "llm" */
    void (*arrive)(station *st, request *r);            /* a request enters the pool */
    void (*report)(station *st, pool_result *out);      /* kind-specific results */
    void (*destroy)(station *st);                       /* frees the kind's state */
} station_ops;

struct station {
    const station_ops *ops;
    const pool_cfg *cfg;      /* the pool's configuration */
    int index;                /* pool index in the scenario */
    struct sim *sim;          /* owner */
    evq *q;                   /* the engine */
    gsl_rng *rng;             /* the pool's own stream */

    request *qhead, *qtail;   /* waiting requests (timed-out ones linger as tombstones) */
    uint64_t qlen;            /* waiting requests, tombstones excluded */

    stat_acc *queue_ms;       /* waiting time in this pool, measured requests, ms */
    stat_acc *service_ms;     /* service time in this pool, measured requests, ms */
    uint64_t arrivals, served, rejected, timed_out;   /* measured requests */

    double busy;              /* servers (or replicas) busy now */
    double busy_area;         /* integral of busy over time, server-ns */
    simtime_t busy_since;     /* time of the last change of busy, ns */
    double area_at_start;     /* busy_area when measuring began */
    double capacity;          /* servers (or replicas): utilisation's denominator */

    int queue_stat_at_finish; /* 1: the kind records queue_ms when a request leaves
                                 (it may queue more than once, e.g. after preemption) */
    uint64_t inside;          /* requests in the pool now (waiting or in service) */
    uint64_t inside_at_start; /* inside when measuring began */
    uint64_t win_arrivals;    /* requests (measured or not) entering during the window */
};

/* Initialises the common part.  Returns 0 or -1 (out of memory). */
int station_init(station *st, const station_ops *ops, const pool_cfg *cfg, int index,
                 struct sim *sim, evq *q, uint64_t seed);
void station_fini(station *st);

/* Adds DELTA to the busy count at the current time. */
void station_busy(station *st, double delta);

/* Queue operations.  station_enqueue applies queue_limit (returns -1 and
 * rejects the request when full) and arms the timeout. */
int station_enqueue(station *st, request *r);
void station_push_front(station *st, request *r);   /* no limit, no timeout: a preempted request */
request *station_peek(station *st);                 /* head, tombstones skipped; NULL when empty */
request *station_dequeue(station *st);              /* removes the head; records its queueing */

/* Records that R starts (or resumes) service now, ending a wait in the queue. */
void station_start(station *st, request *r);

#endif
