/* cpunode.h -- CPU time as a mechanism: the cores of a node shared by the
 * replicas on it (processor sharing) and by other load, and the CFS quota of
 * each replica's cgroup (Kubernetes CPU limits and requests).
 *
 * A pool with `cpu_limit_cores`, `cpu_request_cores` or `node` (generic pools)
 * serves a request by running a CPU job: its service time drawn from
 * `service_ms` is the CPU time it needs on one core, run single-threaded (at
 * most one core at a time).  A replica (pod) is one cgroup holding
 * `servers_per_replica` of the pool's servers (workers; 1 by default):
 *   - sharing: at every instant the node's free cores (its `cores` less the
 *     background's) are split among the runnable cgroups in proportion to
 *     their weights (cpu_request_cores; cpu_limit_cores when no request is
 *     given, as Kubernetes sets it; else 1), no cgroup getting more than one
 *     core per job it runs, the rest going to the others (weighted max-min
 *     fairness, as CFS's shares do); a cgroup's jobs share its part equally.
 *     One core and equal weights make the node an M/M/1-PS queue for Poisson
 *     arrivals and exponential work (mean sojourn S / (1 - rho)).
 *   - throttling (CFS bandwidth control): a cgroup with a limit of L cores may
 *     use L x cfs_period_ms of CPU time in each period (periods start at
 *     multiples of cfs_period_ms from time 0); once its quota is used its jobs
 *     wait for the next period.  A lone 250 ms job on a 0.5-core limit with
 *     100 ms periods runs 50 ms in each period and ends at 450 ms.
 *   - background: other load on the node (noisy neighbours, a chaos CPU
 *     stress) takes `background_cpu` cores first, a distribution drawn afresh
 *     every `background_period_ms`, or a step function of time
 *     `series(T_S:CORES, ...)`.
 * A pool given no `node` runs on a host of its own with unlimited cores (only
 * its limits act).  The node's busy share (its pools' CPU plus background) is
 * measured over the run's window: the "node CPU" the documents speak of.
 * Events are scheduled only while jobs run (and for the background), so a
 * scenario without these keys runs exactly as before.
 */
#ifndef LATSIM_CPUNODE_H
#define LATSIM_CPUNODE_H

#include <stddef.h>
#include <stdint.h>
#include "core/dist.h"
#include "core/scn.h"
#include "engine/evq.h"

#define CPUNODE_MAX_SERIES 64

typedef enum { CPU_BG_NONE, CPU_BG_DIST, CPU_BG_SERIES } cpu_bg_kind;

/* A [node NAME] section. */
typedef struct cpu_node_cfg {
    char name[64];                /* NAME; "" for a pool's own host */
    int line;                     /* line of the section in the scenario file (0: none) */
    double cores;                 /* cores, > 0 (INFINITY for a pool's own host) */
    cpu_bg_kind bg_kind;          /* how background_cpu is given */
    dist bg;                      /* CPU_BG_DIST: background load, cores (drawn each bg_period_ms) */
    double bg_period_ms;          /* CPU_BG_DIST: how long a draw holds, ms (> 0) */
    size_t nseries;               /* CPU_BG_SERIES: points */
    double series_s[CPUNODE_MAX_SERIES];     /* CPU_BG_SERIES: from this time on, s (increasing, first >= 0) */
    double series_cores[CPUNODE_MAX_SERIES]; /* CPU_BG_SERIES: background load from then on, cores */
} cpu_node_cfg;

/* A pool's CPU keys. */
typedef struct cpu_cfg {
    int on;                       /* 1: the pool's services run as CPU jobs (any CPU key given) */
    double request_cores;         /* cpu_request_cores, cores (0: not given) */
    double limit_cores;           /* cpu_limit_cores, cores (0: no limit) */
    double period_ms;             /* cfs_period_ms, ms (> 0) */
    int servers_per_replica;      /* servers_per_replica: servers (workers) sharing one replica's cgroup, >= 1 */
    cpu_node_cfg node;            /* its node ([node NAME]; a host of its own when name is "") */
} cpu_cfg;

/* The raw value of KEY, or NULL when absent (as fleetcfg_get). */
typedef const char *(*cpucfg_get)(void *ctx, const char *key);

/* The pool keys this module reads (cpu_request_cores, cpu_limit_cores,
 * cfs_period_ms, servers_per_replica, node) and the [node NAME] keys (cores, background_cpu,
 * background_period_ms): 1 when KEY is one of them. */
int cpucfg_pool_key(const char *key);
int cpucfg_node_key(const char *key);

/* The [node NAME] keys with their defaults and help (latsim keys), ended by
 * a NULL key. */
typedef struct cpucfg_key {
    const char *key;              /* as written */
    const char *def;              /* default, as text */
    const char *help;             /* one line */
} cpucfg_key;
extern const cpucfg_key CPUCFG_NODE_KEYS[];

/* Reads a pool's CPU keys through GET into C (C->node.name set from `node`,
 * its other fields left for cpucfg_parse_node).  Returns 0, or -1 with a
 * message in ERR and the key at fault in *KEY. */
int cpucfg_parse_pool(cpu_cfg *c, cpucfg_get get, void *ctx, const char **key, char *err, size_t errlen);

/* Reads the keys of section [node NAME] through GET into N (its name kept).
 * BASEDIR resolves empirical files.  Returns 0, or -1 with a message and the
 * key at fault.  N must be cpucfg_free_node()d either way. */
int cpucfg_parse_node(cpu_node_cfg *n, cpucfg_get get, void *ctx, const char *basedir, const char **key,
                      char *err, size_t errlen);
void cpucfg_free_node(cpu_node_cfg *n);

/* Reads the [node NAME] section C's pool (section POOL_SEC) names in its
 * `node` key into C->node (nothing when it names none).  Returns 0, or -1 with
 * the one-line error in X (at the node's key, or at the pool's `node` when
 * the section is missing). */
int cpucfg_read_node(scn_ctx *x, const char *pool_sec, cpu_cfg *c);

/* ---- a run's nodes ---------------------------------------------------------- */

typedef struct cpu_node cpu_node;
typedef struct cpu_nodes cpu_nodes;

/* The nodes of one run, on calendar Q with run seed SEED (a node's background
 * draws from the stream "node NAME/background").  NULL when out of memory. */
cpu_nodes *cpu_nodes_new(evq *q, uint64_t seed);
void cpu_nodes_free(cpu_nodes *ns);

/* The node of C (C->node): the run's node of that name, built from C->node the
 * first time it is asked for; a pool's own host (name "") is new each time.
 * The node keeps a pointer to C->node, which must outlive the run.  Returns
 * NULL when out of memory. */
cpu_node *cpu_nodes_get(cpu_nodes *ns, const cpu_cfg *c);

/* A new cgroup on N for one replica (servers_per_replica servers) of C
 * (weight and quota from C).  Returns
 * its index, or -1 when out of memory. */
int cpu_group_new(cpu_node *n, const cpu_cfg *c);

/* What a job calls when its CPU work is done. */
typedef void (*cpu_done_fn)(void *ctx, int64_t arg);

/* Starts a job of WORK_MS ms of CPU time (on one core) in cgroup G of N; DONE
 * (CTX, ARG) is called when it is done.  Returns the job's id (> 0), or 0 when
 * out of memory. */
uint64_t cpu_job_start(cpu_node *n, int g, double work_ms, cpu_done_fn done, void *ctx, int64_t arg);

/* Stops job ID (its replica failed) without calling its DONE.  Nothing when it
 * is not running. */
void cpu_job_cancel(cpu_node *n, uint64_t id);

/* The measured window: counters restart at open (idempotent at one instant)
 * and are read at close. */
void cpu_node_window_open(cpu_node *n);
void cpu_node_window_close(cpu_node *n);

/* Over the window: the node's mean busy share of its cores (its jobs' CPU and
 * the background's; 0 for a host of its own, which has unlimited cores), and
 * the mean background load, cores. */
double cpu_node_busy_share(const cpu_node *n);
double cpu_node_background_mean(const cpu_node *n);

/* Over the window, of cgroup G: the CFS periods in which it was throttled
 * (nr_throttled) and its time spent throttled with work waiting, s. */
uint64_t cpu_group_throttled_periods(const cpu_node *n, int g);
double cpu_group_throttled_s(const cpu_node *n, int g);

/* 1 when an event could not be scheduled or a job not stored (out of memory). */
int cpu_node_oom(const cpu_node *n);

#endif
