/* router.h -- a router station: sends each request along one of its out-edges.
 *
 * `[pool NAME]` with `kind = router`, `policy = NAME` (route.h) and
 * `next = a, b, c` (its targets, in order).  It holds no request: a request
 * passes through it in zero time, to the target the policy picks from read-only
 * snapshots of the targets.  It reports how many requests it routed
 * (arrivals, served) and nothing else.
 */
#ifndef LATSIM_ROUTER_H
#define LATSIM_ROUTER_H

#include "kind.h"
#include "route.h"

/* A router's configuration (pool_cfg.ext). */
typedef struct router_cfg {
    const route_policy *policy;   /* its row in the policy table */
} router_cfg;

/* The kind's row (kind.h): `kind = router`. */
extern const station_kind router_kind;

#endif
