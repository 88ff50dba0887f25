/* route.h -- routing policies: which out-edge a router sends a request along.
 *
 * A policy asks for read-only snapshots of the router's targets one at a time
 * (route_view.snap(i): waiting, inside, running, busy, capacity, free KV share),
 * never the stations themselves, and answers with an index.  It reads only what
 * it needs: round robin, random and complexity none, power_of_two two, so their
 * cost per request does not grow with the targets.  A least-loaded policy uses
 * the caller's route_index of its key when there is one (an LLM pool's replicas,
 * a router's out-edges for least_outstanding: O(log n) per request and per load
 * change), else it reads every target.  This module sees the snapshots
 * (core/snap.h) and the request, never a station.
 * Policies are rows of a table, chosen by name (`policy =` of a router,
 * `routing =` of an LLM pool):
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
 *                      draw every request to one target); else least_outstanding.
 *                      It reads every target (the prefixes are per request)
 *   complexity         two targets: the request's complexity score against a cut
 *                      (cplx.h; parameters in route_ctx.params), small model first
 * Adding a built-in policy is one function set plus one row in route.c; a policy
 * defined elsewhere (a test, docs/architecture.md, "Extending latsim") is added with
 * route_policy_register().
 */
#ifndef LATSIM_ROUTE_H
#define LATSIM_ROUTE_H

#include <stddef.h>
#include <gsl/gsl_rng.h>
#include "engine/request.h"
#include "core/snap.h"

struct route_policy;

/* Targets ordered by a key, smaller first: a tournament tree (each node the least
 * key below it) over the target indices.  Setting a key costs O(log n), and so
 * does the least key with ties broken as a scan from a starting target finds them
 * (the first at or after START, cyclically). */
typedef struct route_index {
    int n;                    /* targets */
    int size;                 /* leaves: the least power of two >= n */
    double *t;                /* 2 size nodes: t[size + i] target i's key, t[v] the least
                                 of t[2v] and t[2v + 1]; leaves past n are +inf */
} route_index;

/* Sets IX up over N targets, every key KEY.  Returns 0, or -1 when out of memory. */
int route_index_init(route_index *ix, int n, double key);
void route_index_free(route_index *ix);
/* Target I's key becomes KEY. */
void route_index_set(route_index *ix, int i, double key);
static inline double route_index_key(const route_index *ix, int i) { return ix->t[ix->size + i]; }
/* The target with the least key; of several, the first at or after START in the
 * order START, START + 1, ..., n - 1, 0, ..., START - 1. */
int route_index_first_min(const route_index *ix, int start);

/* What a least-loaded policy orders its targets by (route_policy.key). */
typedef enum {
    ROUTE_KEY_NONE,           /* no index: the policy reads snapshots */
    ROUTE_KEY_INSIDE,         /* requests inside, fewest first */
    ROUTE_KEY_KV,             /* minus the free KV share: the most free first */
} route_key_kind;

/* The policy's view of its targets for one request. */
typedef struct route_view {
    /* Target I's snapshot as of now (0 <= I < n), computed on each call; the
     * storage is per target and stays valid until the policy returns. */
    const station_snap *(*snap)(void *ctx, int i);
    void *ctx;                /* the caller's, passed to snap */
    /* The targets ordered by the policy's key, kept current by the caller (it
     * matches route_key of every target's snapshot); NULL: none, the policy reads
     * every snapshot. */
    const route_index *index;
} route_view;

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
    const char *help;         /* one line for `latsim keys` and docs/scenarios.md */
    route_key_kind key;       /* what a route_index for it orders by (NONE: it uses none) */
    /* Sets up RC->state (NULL: nothing).  Returns 0, or -1 (out of memory; it
     * frees what it had set up: fini is not called then). */
    int (*init)(route_ctx *rc);
    /* The out-edge for R, in [0, N), from what it reads through V. */
    int (*pick)(route_ctx *rc, const request *r, const route_view *v, int n);
    /* R has been sent along EDGE (NULL: nothing to learn). */
    void (*observe)(route_ctx *rc, const request *r, int edge);
    void (*fini)(route_ctx *rc);   /* frees RC->state (NULL: nothing) */
    int uses_prefix;          /* 1: snapshots must carry prefix_ids for the request */
    int uses_complexity;      /* 1: picks by the request's complexity score (cplx.h) between
                                 exactly two targets: a router's complexity keys, never an
                                 LLM pool's replicas */
} route_policy;

/* Process-wide counts, for tests and measurements (simulations in one process run
 * one after another, never at once). */
typedef struct route_counts {
    uint64_t picks;           /* requests routed (route_pick) */
    uint64_t snaps;           /* snapshots policies read (route_snap) */
} route_counts;
extern route_counts route_tally;

/* Target I's snapshot, for a policy (counted in route_tally). */
static inline const station_snap *route_snap(const route_view *v, int i)
{
    route_tally.snaps++;
    return v->snap(v->ctx, i);
}

/* Policy P's index key of a target whose snapshot is S (0 for ROUTE_KEY_NONE). */
static inline double route_key(const struct route_policy *p, const station_snap *s)
{
    return p->key == ROUTE_KEY_INSIDE ? (double) s->inside : p->key == ROUTE_KEY_KV ? -s->kv_free : 0;
}

/* The policy named NAME (case-insensitive), or NULL. */
const route_policy *route_find(const char *name);
/* Policies in table order: the built-in rows, then the registered ones. */
int route_count(void);
const route_policy *route_at(int i);   /* NULL when I is out of range */
/* The policies' names joined by '|', in table order. */
void route_choices(char *buf, size_t n);

/* Adds policy P (name and pick required; P must outlive every use): from now on
 * `policy =` and `routing =` accept its name.  Returns 0 (also when P is already
 * registered), or -1 when the name is taken by another row, P lacks a name or a
 * pick, or the table is full.  Not thread-safe: register before loading. */
int route_policy_register(const route_policy *p);

/* The name of the random stream of router (or routed pool) NAME: "route NAME"
 * in BUF of N bytes; the caller draws the stream (rng_stream) for route_open. */
void route_stream_name(char *buf, size_t n, const char *name);

/* Prepares RC for policy P over N targets with the router's own stream RNG,
 * which RC owns from now on (route_close frees it, as does a failed open).
 * Returns 0, or -1 when RNG is NULL or the policy's init fails (out of memory);
 * RC is then closed. */
int route_open(route_ctx *rc, const route_policy *p, int n, gsl_rng *rng);
/* Frees the policy's state and the stream; closing a closed (or zeroed) RC does nothing. */
void route_close(route_ctx *rc);

/* Picks the out-edge for R and lets the policy observe it. */
static inline int route_pick(route_ctx *rc, const request *r, const route_view *v)
{
    route_tally.picks++;
    int e = rc->policy->pick(rc, r, v, rc->n);
    if (rc->policy->observe) rc->policy->observe(rc, r, e);
    return e;
}

#endif
