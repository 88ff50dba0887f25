/* result.h -- what a station reports at the end of a run: one pool_result per
 * pool, the common counters the engine fills and the kind's own metrics
 * (pool_result_add), in the order they were added; and the rows of the run's
 * metric families (sim_rows_*: run collectors, run/collect.h), the public
 * result (latsim/sim.h), which the engine turns each pool_result into (family
 * "pool": run/simres.c, simres_pools).  Stations include this, never the run
 * (run/sim.h) that collects them.  pool_result is internal: the engine's and
 * the stations'.
 */
#ifndef LATSIM_RESULT_H
#define LATSIM_RESULT_H

#include <stdint.h>
#include "engine/stats.h"
#include "latsim/sim.h"   /* sim_rows */

typedef struct pool_result pool_result;

#define POOL_MAX_METRICS 64

/* One kind-specific result of a pool, e.g. an LLM pool's "steps". */
typedef struct pool_metric {
    const char *name;         /* metric name (a string literal) */
    double value;             /* its value, in the metric's unit; NAN for a name */
    const char *text;         /* a name instead of a number (e.g. the cost model's
                                 "roofline"; kept for the life of the process), NULL for a number */
} pool_metric;

struct pool_result {
    char name[64];
    const char *kind;         /* the name of the pool's kind ("generic", "llm"...: its kind row's) */
    int saturated;            /* 1: offered load >= capacity, or the queue kept growing */
    int load_saturated;       /* 1: saturated by its offered load (>= 1 when known beforehand;
                                 beyond 1 by more than its standard error when measured) */
    int backlog_grew;         /* finite workload: its backlog grew (docs/workloads.md, "Finite workloads"); 0 otherwise */
    uint64_t peak_queue;      /* finite workload: most requests waiting in it, seen at an arrival; 0 otherwise */
    uint64_t peak_inside;     /* finite workload: most requests in it (waiting or in service), likewise */
    int has_offered_load;     /* the kind knows its offered load (a generic pool) */
    double offered_load;      /* arrival rate x mean service / servers, NAN when unknown */
    double window_s;          /* measured window, s (as the system's row window_s) */
    double utilization;       /* busy share of servers (generic) or stepping share of replicas (llm) */
    stat_summary queue;       /* waiting in this pool, ms */
    stat_summary service;     /* in service in this pool, ms */
    stat_summary e2e;         /* E2E of the measured served requests that passed this pool (the first
                                 REQ_PATH stations of each request's path), ms */
    int has_tokens;           /* it emits tokens (an LLM or API pool): ttft and tpot are reported */
    int has_itl;              /* it decodes token by token (an LLM pool): itl is reported */
    stat_summary ttft;        /* TTFT of the measured served requests whose first token it emitted, ms */
    stat_summary tpot;        /* TPOT of those it emitted the last token of, ms */
    stat_summary itl;         /* inter-token gaps of the tokens it emitted of measured requests, ms */
    uint64_t arrivals, served, rejected, timed_out;
    double cost_per_hour;     /* $ per hour the pool costs (GPUs), 0 when none */
    pool_metric metrics[POOL_MAX_METRICS];   /* the kind's own results, in report order */
    int nmetrics;
    int has_energy;           /* the pool's GPUs have a known power (docs/metrics.md, "Energy") */
    double energy_j;          /* GPU board energy over the measured window, J (has_energy) */
};

/* The kind-specific result NAME of P, NAN when P has none. */
double pool_metric_get(const pool_result *p, const char *name);

/* Appends a kind-specific result.  Returns 0, or -1 when the table is full. */
int pool_result_add(pool_result *p, const char *name, double value);

/* Appends a kind-specific result that is a name, TEXT (copied once per
 * process and kept: the result may outlive TEXT).  Returns 0, or -1 when the
 * table is full or out of memory. */
int pool_result_add_name(pool_result *p, const char *name, const char *text);

/* Appends the row (SCOPE, METRIC, "value") = VALUE to R, of R's current family
 * (R->family); HIDE 1: the report shows NAN when the run is saturated.
 * Returns 0, or -1 when out of memory. */
int sim_rows_add(sim_rows *r, const char *scope, const char *metric, double value, int hide);

/* Appends the row (SCOPE, METRIC, "value") holding the name TEXT (copied).
 * Returns 0, or -1 when out of memory. */
int sim_rows_add_text(sim_rows *r, const char *scope, const char *metric, const char *text);

/* Appends the seven rows of latency S, stats "mean", "p50", "p90", "p95",
 * "p99", "p999", "max" (NAN when S has no sample; the report shows NAN when
 * the run is saturated), with S itself on the "mean" row for the intervals of
 * its percentiles over replications.  Returns 0, or -1 when out of memory. */
int sim_rows_add_latency(sim_rows *r, const char *scope, const char *metric, const stat_summary *s);

/* As sim_rows_add_latency, the rows' HIDE given: 1 the report shows NAN when
 * the run is saturated, 0 never (a pool's queue and service when it is not
 * saturated itself).  Returns 0, or -1 when out of memory. */
int sim_rows_add_latency_hide(sim_rows *r, const char *scope, const char *metric, const stat_summary *s, int hide);

/* Indexes R's rows for the readers (sim_result_row, sim_result_pool): a run
 * of 2048 pools has some 150 000 rows, which a scan per lookup would make
 * quadratic.  Rows added later are found by a scan.  Returns 0, or -1 when
 * out of memory (the readers then scan). */
int sim_rows_index(sim_rows *r);

/* Frees R's rows and strings and empties it. */
void sim_rows_free(sim_rows *r);

#endif
