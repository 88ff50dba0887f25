/* result.h -- what a station reports at the end of a run: one pool_result per
 * pool, the common counters the engine fills and the kind's own metrics
 * (pool_result_add), which report.c prints in the order they were added.
 * Stations include this, never the run (run/sim.h) that collects them.
 */
#ifndef LATSIM_RESULT_H
#define LATSIM_RESULT_H

#include <stdint.h>
#include "engine/stats.h"

typedef struct pool_result pool_result;

#define POOL_MAX_METRICS 48

/* One kind-specific result of a pool, e.g. an LLM pool's "steps". */
typedef struct pool_metric {
    const char *name;         /* metric name (a string literal) */
    double value;             /* its value, in the metric's unit; NAN for a name */
    const char *text;         /* a name instead of a number (a static string, e.g. the
                                 cost model's "roofline"), NULL for a number */
} pool_metric;

struct pool_result {
    char name[64];
    const char *kind;         /* the name of the pool's kind ("generic", "llm"...: its kind.h row's) */
    int saturated;            /* 1: offered load >= capacity, or the queue kept growing */
    int load_saturated;       /* 1: saturated by its offered load (>= 1 when known beforehand;
                                 beyond 1 by more than its standard error when measured) */
    int backlog_grew;         /* finite workload: its backlog grew (README, "Finite workloads"); 0 otherwise */
    uint64_t peak_queue;      /* finite workload: most requests waiting in it, seen at an arrival; 0 otherwise */
    uint64_t peak_inside;     /* finite workload: most requests in it (waiting or in service), likewise */
    int has_offered_load;     /* the kind knows its offered load (a generic pool) */
    double offered_load;      /* arrival rate x mean service / servers, NAN when unknown */
    double window_s;          /* measured window, s (as in sim_result) */
    double utilization;       /* busy share of servers (generic) or stepping share of replicas (llm) */
    stat_summary queue;       /* waiting in this pool, ms */
    stat_summary service;     /* in service in this pool, ms */
    uint64_t arrivals, served, rejected, timed_out;
    double cost_per_hour;     /* $ per hour the pool costs (GPUs), 0 when none */
    pool_metric metrics[POOL_MAX_METRICS];   /* the kind's own results, in report order */
    int nmetrics;
};

/* Appends a kind-specific result.  Returns 0, or -1 when the table is full. */
int pool_result_add(pool_result *p, const char *name, double value);

/* Appends a kind-specific result that is a name, TEXT (a static string: the
 * result points to it).  Returns 0, or -1 when the table is full. */
int pool_result_add_name(pool_result *p, const char *name, const char *text);

/* The kind-specific result NAME of P, NAN when P has none. */
double pool_metric_get(const pool_result *p, const char *name);

#endif
