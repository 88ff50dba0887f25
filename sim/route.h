/* route.h -- routing policies: which out-edge a router sends a request along.
 *
 * A policy sees read-only snapshots of the router's targets (station_snap:
 * waiting, inside, running, busy, capacity, free KV share), never the stations
 * themselves, and answers with an index.  Policies are rows of a table,
 * chosen by name (`policy =` of a router, `routing =` of an LLM pool):
 *   round_robin        targets in turn
 *   random             uniformly at random (the router's own stream)
 *   least_outstanding  fewest requests inside (waiting + in service); ties: the
 *                      first from a starting target that moves on per request
 *   power_of_two       two distinct targets at random, the one with fewer inside
 *                      (ties: the first drawn)
 *   least_kv           the largest free share of KV blocks (ties as least_outstanding)
 *   prefix_affinity    the target holding the longest cached prefix of the request
 *                      (station_snap.prefix_ids, counted only when it covers at least
 *                      half the prompt's blocks: a shared system prompt alone would
 *                      draw every request to one target); else least_outstanding
 *   complexity         two targets: the request's complexity score against a cut
 *                      (cplx.h; parameters in route_ctx.params), small model first
 * Adding a policy is one function set plus one row in route.c.
 */
#ifndef LATSIM_ROUTE_H
#define LATSIM_ROUTE_H

#include <gsl/gsl_rng.h>
#include "request.h"
#include "station.h"

struct route_policy;

/* One router's use of a policy. */
typedef struct route_ctx {
    const struct route_policy *policy;
    int n;                    /* out-edges (targets) */
    gsl_rng *rng;             /* the router's own stream ("route NAME") */
    uint64_t turn;            /* round robin: requests routed so far */
    void *state;              /* the policy's own state (init/fini), NULL when none */
    const void *params;       /* the policy's parameters, owned by the caller (complexity: cplx_cfg) */
} route_ctx;

typedef struct route_policy {
    const char *name;         /* the value of `policy =` / `routing =` */
    const char *help;         /* one line for `latsim keys` and README */
    int uses_snaps;           /* 0: pick ignores the snapshots (callers may pass NULL) */
    /* Sets up RC->state (NULL: nothing).  Returns 0 or -1 (out of memory). */
    int (*init)(route_ctx *rc);
    /* The out-edge for R, in [0, N), from the targets' snapshots SNAPS[N]. */
    int (*pick)(route_ctx *rc, const request *r, const station_snap *snaps, int n);
    /* R has been sent along EDGE (NULL: nothing to learn). */
    void (*observe)(route_ctx *rc, const request *r, int edge);
    void (*fini)(route_ctx *rc);   /* frees RC->state (NULL: nothing) */
    int uses_prefix;          /* 1: snapshots must carry prefix_ids for the request */
} route_policy;

/* The policy named NAME (case-insensitive), or NULL. */
const route_policy *route_find(const char *name);
int route_count(void);
const route_policy *route_at(int i);
/* The policies' names joined by '|', in table order. */
void route_choices(char *buf, size_t n);

/* Prepares RC for policy P over N targets, with the stream of router NAME
 * under SEED.  Returns 0, or -1 when out of memory (RC is then closed). */
int route_open(route_ctx *rc, const route_policy *p, int n, uint64_t seed, const char *name);
void route_close(route_ctx *rc);

/* Picks the out-edge for R and lets the policy observe it. */
static inline int route_pick(route_ctx *rc, const request *r, const station_snap *snaps)
{
    int e = rc->policy->pick(rc, r, snaps, rc->n);
    if (rc->policy->observe) rc->policy->observe(rc, r, e);
    return e;
}

#endif
