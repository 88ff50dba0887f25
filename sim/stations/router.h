/* router.h -- a router station: sends each request along one of its out-edges.
 *
 * `[pool NAME]` with `kind = router`, `policy = NAME` (route.h) and
 * `next = a, b, c` (its targets, in order).  It holds no request: a request
 * passes through it in zero time, to the target the policy picks from read-only
 * snapshots of the targets.  It reports how many requests it routed
 * (arrivals, served).
 *
 * A gateway is a router with `overhead_ms` (work per request, a distribution):
 * the request is dispatched once it is done, and the time counts as overhead.
 * `policy = complexity` (exactly two out-edges, small model first) scores
 * requests (their class's `complexity`, else the router's `complexity`
 * distribution), runs a classifier taking `classifier_ms`, and reports per
 * out-edge how many simple and complex requests it sent there.
 * With CPU keys (cpu_limit_cores, cpu_request_cores, node: fleet/cputier.h)
 * the gateway runs as `replicas` pods on a CPU node and overhead_ms is CPU
 * time on one core, each request's a job in a pod's cgroup: it waits for its
 * share of the node's cores and for the pod's CFS quota.  The classifier
 * (its own device) stays a delay, after the CPU work.
 * `policy = prefix_affinity` asks each target's prefix caches, as they were
 * `staleness_ms` ago, how much of the request's prompt they hold.
 */
#ifndef LATSIM_ROUTER_H
#define LATSIM_ROUTER_H

#include "core/kind.h"
#include "core/cplx.h"
#include "core/dist.h"
#include "core/encoder.h"
#include "core/route.h"

/* A router's configuration (pool_cfg.ext). */
typedef struct router_cfg {
    const route_policy *policy;   /* its row in the policy table */
    dist overhead;            /* gateway work per request, ms (used when has_overhead) */
    int has_overhead;         /* 1 when overhead_ms is set */
    cplx_cfg cplx;            /* complexity: cut, classifier error, uncertain band */
    dist classifier;          /* complexity: classifier latency, ms (used when has_classifier) */
    int has_classifier;       /* 1 when classifier_ms or classifier_model is set */
    int classifier_enc;       /* 1: classifier_model is named: the classifier takes the encoder's pass
                                 over the request's prompt (enc), not classifier_ms */
    enc_cfg enc;              /* the classifier model and its device (classifier_enc) */
    dist score;               /* complexity: score of requests that carry none (clipped to [0, 1]) */
    double staleness_ms;      /* prefix_affinity: cache contents newer than this are not yet seen, ms */
    double affinity_threshold;/* prefix_affinity: least share of the prompt's blocks a cached prefix must cover to count (0..1) */
    int pauses;               /* 1 when pause_every_s is set: the gateway stalls now and then */
    dist pause_every_s;       /* running time between the gateway's pauses, s (mean > 0) */
    dist pause_s;             /* length of a pause, s */
    int replicas;             /* pods of the gateway, each a cgroup (with CPU keys; 1 otherwise) */
} router_cfg;

/* The kind's row (kind.h): `kind = router`. */
extern const station_kind router_kind;

#endif
