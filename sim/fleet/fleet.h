/* fleet.h -- the life of a pool's replicas (or servers) over a run: failures
 * and repairs, autoscaling with provisioning and cold starts, and the
 * integrals behind availability and cost.
 *
 * A fleet controller owns its pool's units (replicas or servers, 0..max-1) and
 * their states, and schedules its own events on the engine's calendar; it
 * reaches the station only through fleet_units, so it knows nothing of queues
 * or batches.  Unit states:
 *   OFF       not allocated (autoscaling below max_replicas)
 *   STARTING  allocated, loading (provision_s, then the cold start: coldstart.h)
 *   UP        serving; its next failure is drawn when it comes up (fault.h)
 *   DOWN      failed, being repaired; it starts again (with a cold start) after
 *             the repair
 *   DRAINING  stopped by a scale-down: takes no new requests, finishes what it
 *             holds, then is released (OFF)
 * A unit is paid for (running) in every state but OFF and DOWN (a DOWN unit
 * too with paid_while_down).  Availability is the
 * time-mean share of UP units among those UP, DOWN (failed) or restarting after
 * a repair.  An autoscaled pool starts with its own count (`replicas` or
 * `servers`) clamped to [min_replicas, max_replicas].
 * With nothing configured (no failures, no autoscaling) the controller is not
 * built at all, so a run without these features schedules no event of theirs.
 */
#ifndef LATSIM_FLEET_H
#define LATSIM_FLEET_H

#include <stdint.h>
#include "fleet/autoscale.h"
#include "fleet/coldstart.h"
#include "engine/evq.h"
#include "fleet/contention.h"
#include "fleet/cpunode.h"
#include "fleet/fault.h"

typedef struct fleet_cfg {
    int units;             /* the pool's units (servers or replicas): all of them when
                              not autoscaled, else the count it starts with */
    int autoscale;         /* 1: autoscaled between as.min and as.max */
    as_cfg as;             /* the autoscaler */
    fault_cfg fault;       /* failures, repairs (slow nodes and pauses are the station's) */
    int cold;              /* 1: starts take a cold-start load time */
    cold_cfg cs;           /* the cold start */
    double weight_bytes;   /* bytes each GPU of a unit loads at a start (0: none) */
    int paid_while_down;   /* 1: a DOWN (failed, in repair) unit is paid for; 0: not (not running) */
    int contention;        /* 1: service time grows with the pool's utilisation (cpu_contention) */
    contention_curve cc;   /* the curve: multiplier against busy share of the units up */
    double contention_share; /* share of the service time the multiplier applies to (overhead), (0, 1] */
    int swap;              /* 1: memory over memory_gib multiplies service times (swapping) */
    double memory_gib;     /* host memory limit of a server's process, GiB (> 0) */
    double memory_base_gib; /* resident set with nothing in service, GiB (>= 0) */
    double memory_per_request_mib; /* working set of each request in service, MiB (>= 0) */
    double swap_factor;    /* service-time multiplier while over the limit, >= 1 */
    cpu_cfg cpu;           /* CPU limits, requests and node (cpunode.h); cpu.on 0: none */
    int oom;               /* 1: memory_limit_gib: a replica over it is killed and restarts (no swapping) */
    double memory_limit_gib; /* the replica's memory limit, GiB (> 0 with oom) */
} fleet_cfg;

/* 1 when a pool of C can start units while it runs (autoscaling, failures and
 * repairs, cold starts): its requests are then told apart as cold (one that
 * waited for a start: it entered the pool before the unit that served it came
 * up, or was among a unit's first cold_requests with cold_factor > 1) or warm,
 * and reported apart (docs/fleet.md). */
static inline int fleet_starts(const fleet_cfg *c)
{
    return c && (c->autoscale || c->fault.failures || c->cold || c->oom);
}

/* What the controller asks of the station. */
typedef struct fleet_units {
    void *ctx;                                   /* the station */
    /* Unit U stops taking requests.  FAILED = 1: it crashed; the requests it held
     * are retried or failed as the station's on_failure says.  FAILED = 2: it was
     * OOM-killed (fleet_kill): its requests fail (the connection is reset; a
     * [client] may retry them), whatever on_failure says.  FAILED = 0: it is
     * draining; it finishes them and the station calls fleet_drained() when it
     * holds nothing (or the controller releases it at once when fleet_units.held
     * says 0). */
    void (*down)(void *ctx, int u, int failed);
    void (*up)(void *ctx, int u);                /* unit U can take requests */
    uint64_t (*held)(void *ctx, int u);          /* requests unit U holds now */
    double (*load)(void *ctx, as_metric m);      /* the pool's load for the autoscaler */
    /* Unit U (up) stalls for LEN ns now (a GC or stop-the-world pause): what it
     * serves is delayed by LEN and it starts nothing new meanwhile. */
    void (*pause)(void *ctx, int u, simtime_t len);
} fleet_units;

typedef enum { UNIT_OFF, UNIT_STARTING, UNIT_UP, UNIT_DOWN, UNIT_DRAINING } unit_state;

typedef struct fleet fleet;

/* Builds the controller for a pool named NAME (its units draw from streams
 * "NAME/unit I"), with units 0..initial-1 up at time 0 and their first
 * failures scheduled; the autoscaler's first evaluation is at interval_s.
 * Returns NULL when out of memory (or an event could not be scheduled). */
/* Memory one unit of a fleet takes, bytes: its record, its own random stream
 * (an MT19937 state, 5 KB) and two pending events (failure, pause), plus 64
 * bytes for the station's per-unit arrays; for scenario_check_memory. */
double fleet_unit_bytes(void);

fleet *fleet_new(const fleet_cfg *c, evq *q, uint64_t seed, const char *name,
                 const fleet_units *ops);
void fleet_free(fleet *f);

/* Units that can exist (max_replicas, or the fixed count); the station sizes
 * its per-unit state by it. */
int fleet_max_units(const fleet *f);
/* Units UP at the start (the rest are OFF): the station starts with these. */
int fleet_initial_up(const fleet *f);
unit_state fleet_state(const fleet *f, int u);

/* Unit U (UP or DRAINING) is killed now, as the kernel's OOM killer does a
 * container over its memory limit: at an event at the current time (so that
 * the station is not re-entered), the requests it holds fail (fleet_units.down
 * with FAILED = 2), and it restarts at once (a start: the cold start applies),
 * counted in oom_kills.  Nothing when it is in another state or
 * already being killed. */
void fleet_kill(fleet *f, int u);

/* The station reports that draining unit U now holds nothing. */
void fleet_drained(fleet *f, int u);

/* 1 when an event could not be scheduled (out of memory). */
int fleet_oom(const fleet *f);

/* The measured window: integrals restart at open and are read at close. */
void fleet_window_open(fleet *f);
void fleet_window_close(fleet *f);

typedef struct fleet_result {
    double availability;       /* time-mean share of UP units among UP or DOWN ones */
    double running_s;          /* unit-seconds paid for (all states but OFF), in the window */
    double powered_s;          /* unit-seconds powered on (STARTING, UP or DRAINING: drawing
                                  power; OFF and DOWN draw none), in the window */
    double up_mean;            /* time-mean number of UP units */
    uint64_t failures;         /* units that failed in the window */
    uint64_t oom_kills;        /* units killed over their memory limit in the window (fleet_kill) */
    uint64_t scale_ups, scale_downs;   /* autoscaler decisions in the window */
    int up_now;                /* units UP at the end of the window */
} fleet_result;

void fleet_results(const fleet *f, fleet_result *out);

/* Integral of UP units over time up to now, unit-ns. */
double fleet_up_area(fleet *f);

/* Units UP now, and units paid for now (the time-series gauges). */
int fleet_up(const fleet *f);
int fleet_running(const fleet *f);

/* Host CPU contention (fleet_cfg.contention) as monitors see it: folds BUSY,
 * the units busy now, as a share of the units UP (1 when none is), into *CPU,
 * averaged exponentially over 10 s since *CPU_T (which becomes now).  Returns
 * the service-time multiplier that gives: 1 - share + share x the curve at *CPU
 * (share: contention_share).  Cannot fail. */
double fleet_contention(const fleet *f, double busy, double *cpu, simtime_t *cpu_t);

/* Marks which of the N units of pool POOL are slow (fault_cfg.slow_fraction:
 * SLOW[u] = 1), drawn from the pool's own stream "pool POOL/slow" so that its
 * other draws stay as they are.  Returns 0, or -1 when out of memory (SLOW
 * untouched). */
int fleet_pick_slow(const fleet_cfg *c, uint64_t seed, const char *pool, int n, unsigned char *slow);

#endif
