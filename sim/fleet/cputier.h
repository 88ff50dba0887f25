/* cputier.h -- the CPU side of a gateway-like pool (a router's overhead_ms, a
 * result cache's hit_ms / miss_ms): its `replicas` pods, each a cgroup on a
 * CPU node (cpunode.h), and each request's work a CPU job of its own in one
 * pod's cgroup, the pods taken in turn (round robin, as a Kubernetes Service
 * spreads connections).  A job uses at most one core (one request is one
 * thread of work); the jobs of a pod share its part of the node equally, and
 * the pod's CFS quota (cpu_limit_cores x cfs_period_ms per period) throttles
 * them all together, which is what makes a gateway's tail grow under its
 * limit.  Also the rows every pool with CPU keys reports (cpu_report).
 */
#ifndef LATSIM_CPUTIER_H
#define LATSIM_CPUTIER_H

#include <stdint.h>
#include "core/result.h"
#include "core/scn.h"
#include "fleet/cpunode.h"

typedef struct cpu_tier {
    cpu_node *node;           /* the node its pods run on; NULL: no CPU keys (work is a plain delay) */
    int *g;                   /* cgroup of each pod on node, [n] */
    int n;                    /* pods (the pool's `replicas`), >= 1 */
    int next;                 /* pod the next job goes to, [0, n) */
    const cpu_cfg *c;         /* the pool's CPU keys */
} cpu_tier;

/* Builds T's N pods as cgroups of C on the run's nodes NS.  Returns 0, or -1
 * when out of memory.  T must be cpu_tier_free()d either way. */
int cpu_tier_init(cpu_tier *t, const cpu_cfg *c, int n, cpu_nodes *ns);
void cpu_tier_free(cpu_tier *t);

/* Starts a job of WORK_MS ms of CPU time on one core in the next pod's cgroup;
 * DONE (CTX, ARG) is called when it is done.  Returns the job's id (> 0), or 0
 * when out of memory. */
uint64_t cpu_tier_start(cpu_tier *t, double work_ms, cpu_done_fn done, void *ctx, int64_t arg);

/* The cores N pods with CPU keys C can use at most: N x cpu_limit_cores, no
 * more than their node's cores (INFINITY: no limit on a host of their own).
 * Their offered load is arrivals/s x CPU ms per request / 1000 / this; the
 * node's other pools and background are not counted here. */
double cpu_tier_cores(const cpu_cfg *c, int n);

/* The rows of a pool with CPU keys C on node N, its cgroups' throttling summed
 * by the caller: with a limit, cpu_throttled_periods (CFS periods throttled,
 * nr_throttled) and cpu_throttled_s (s throttled with work waiting); on a
 * named node, node_cpu (its busy share of the cores) and
 * node_background_cores.  Returns 0, or -1 when out of memory (the node's or
 * OUT's). */
int cpu_report(const cpu_node *n, const cpu_cfg *c, uint64_t periods, double throttled_s, pool_result *out);

/* cpu_report over T's pods.  Returns 0 or -1. */
int cpu_tier_report(const cpu_tier *t, pool_result *out);

/* A router's or result cache's `replicas` (its pods, 1 by default) into *N:
 * only with CPU keys (cpu_limit_cores, cpu_request_cores or node), without
 * which a gateway has no capacity to divide.  Returns 0, or -1 with the error
 * at the key (scn_fail). */
int cpu_tier_replicas(scn_ctx *x, const char *sec, int *n);

/* A router's or result cache's check_fleet hook (kind.h): of the fleet keys
 * present (KEYS, NKEYS of them) it takes the CPU keys but servers_per_replica
 * (each request is its own job, not a server's); the rest (failures,
 * autoscaling, cold starts, memory) it does not model.  KIND names it in the
 * error.  Returns 0, or -1 with the error at the first key refused. */
int cpu_tier_check(scn_ctx *x, const char *sec, const char *kind, const char *const *keys, int nkeys);

#endif
