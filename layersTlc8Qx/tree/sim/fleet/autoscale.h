/* autoscale.h -- a pool's autoscaler as a pure state machine (no events, no
 * clock of its own: the engine calls it at its evaluation times and tells it
 * when replicas come up or finish draining).
 *
 * Every `interval_s` the engine gives the pool's load in the target metric's
 * terms, summed over its replicas:
 *   queue        requests in the pool (waiting or in service); the target is
 *                requests per replica (Knative's concurrency target);
 *   utilization  busy replicas (the busy share of each up replica over the last
 *                interval, summed); the target is a share in (0, 1];
 *   kv           KV-cache blocks in use, as a share of one replica's capacity,
 *                summed; the target is a share in (0, 1].
 * The desired count is ceil(load / target) (the Kubernetes HPA rule
 * desired = ceil(current x metric / target), with the metric averaged over the
 * current replicas), at least 1 when the load is above 0, clamped to
 * [min_replicas, max_replicas].  min_replicas = 0 is scale to zero.
 *   - Above the replicas up or starting: the difference starts now and is ready
 *     provision_s later (as_ready(); the engine adds any cold-start time).
 *   - Below the replicas up, with none starting, and no scale event in the last
 *     cooldown_s: the surplus stops taking requests now and is released when it
 *     has finished what it holds (as_released()).
 * A replica costs from the moment it is asked for until it is released:
 * as_running_seconds() is the integral of starting + up + draining replicas.
 */
#ifndef LATSIM_AUTOSCALE_H
#define LATSIM_AUTOSCALE_H

#include <stddef.h>

typedef enum { AS_QUEUE, AS_UTILIZATION, AS_KV } as_metric;

typedef struct as_cfg {
    as_metric metric;      /* what the target is about */
    double target;         /* queue: requests per replica (> 0); utilization, kv: share in (0, 1] */
    int min_replicas;      /* >= 0 (0: scale to zero) */
    int max_replicas;      /* >= max(1, min_replicas) */
    double interval_s;     /* evaluation interval, s (> 0) */
    double provision_s;    /* scale-up delay from decision to ready, s (>= 0) */
    double cooldown_s;     /* no scale-down within this long of a scale event, s (>= 0) */
} as_cfg;

typedef struct autoscaler {
    as_cfg cfg;            /* validated configuration */
    int up;                /* replicas serving */
    int starting;          /* replicas asked for, not yet ready */
    int draining;          /* replicas stopped, finishing what they hold */
    double last_change_s;  /* time of the last scale event, s (-inf: none) */
    double t_s;            /* time the integrals were last brought up to, s */
    double running_area;   /* integral of starting + up + draining, replica-s */
    double up_area;        /* integral of up, replica-s */
    unsigned long ups, downs;   /* scale-up and scale-down decisions taken */
} autoscaler;

typedef struct as_decision {
    int start;             /* replicas to start now (ready after provision_s) */
    int stop;              /* up replicas to stop taking requests now */
    int desired;           /* the clamped desired count */
} as_decision;

/* Checks C.  Returns 0, or -1 with a message in ERR and in *KEY the scenario key
 * at fault ("min_replicas", "autoscale_target", ...). */
int as_check(const as_cfg *c, const char **key, char *err, size_t errlen);

/* Parses "queue", "utilization" or "kv".  Returns 0 or -1. */
int as_metric_parse(const char *s, as_metric *m);
const char *as_metric_name(as_metric m);

/* Starts with INITIAL replicas up at time T0_S (clamped to [min, max]).
 * C must have passed as_check(). */
void as_init(autoscaler *a, const as_cfg *c, int initial, double t0_s);

/* Brings the integrals up to T_S (>= the last time given). */
void as_advance(autoscaler *a, double t_s);

/* The evaluation at T_S with LOAD (>= 0) in the metric's terms.  Applies the
 * decision to the state (starting += start, up -= stop, draining += stop). */
as_decision as_evaluate(autoscaler *a, double t_s, double load);

/* One starting replica became ready at T_S. */
void as_ready(autoscaler *a, double t_s);

/* One draining replica finished its work and is released at T_S. */
void as_released(autoscaler *a, double t_s);

/* Replica-seconds paid for (starting + up + draining) up to the last time given. */
double as_running_seconds(const autoscaler *a);

#endif
