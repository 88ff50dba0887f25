/* latsim/sim.h -- one simulation run of a scenario and its results (public).
 *
 * sim_run() builds the model objects of a loaded and resolved scenario
 * (latsim/scenario.h), runs the event loop until every measured request has an
 * outcome, and fills a sim_result with the rows of the run's metric families
 * (sim_rows), its only schema of results: each pool's
 * (family "pool", scope the pool's name: kind, busy_share, saturated,
 * offered_load, arrivals, served, rejected, timed_out, its kind's own rows
 * such as an LLM pool's "steps", and its latencies queue, service, e2e, ttft,
 * tpot and itl; sim_result_pool names the pools), the run's
 * counts requests, served, rejected, timed_out, failed (a pool has fleet
 * keys), abandoned and abandoned_share (a class has patience_s) and
 * departures, its times and rates warmup_requests, warmup_s, throughput_rps,
 * output_tokens_per_s (a pool counts tokens), sim_time_s, window_s, events,
 * peak_in_system and wall_time_s, its verdicts saturated and
 * trace_exhausted (family "run", sim.c), the system's latencies
 * e2e, queue, service, network, overhead, ttft, tpot and itl, the breakdowns
 * of E2E and TTFT, each route's and each [class NAME]'s results, scopes
 * "route:ROUTER->TARGET" and "class:NAME", cold and warm, goodput, the cost
 * (cost_per_hour .. cost_per_1k_requests), the workload's facts
 * (warmup_cache_s, finite, peak_queue, repeat_token_share, achieved_rps,
 * mean_in_system...), shares over a threshold, a client's attempts, energy, a
 * run's own seed noise when the scenario asked for it (seed_noise.*:
 * scenario_set_batch_means; the report leaves those out, docs/bands.md), and
 * any registered at run time; read one with sim_result_get, e.g.
 * sim_result_get(&res, "", "e2e", "p99") or sim_result_get(&res, "",
 * "breakdown.all.queue", "value"), whether the run has one with
 * sim_result_row, a count with sim_result_count(&res, "served"), a number with
 * sim_result_value(&res, "window_s"), a latency's whole summary (its "mean"
 * row's dist) with sim_result_latency; docs/metrics.md names them).
 * report_flatten() (latsim/report.h) turns it all into rows.
 */
#ifndef LATSIM_PUBLIC_SIM_H
#define LATSIM_PUBLIC_SIM_H

#include <stddef.h>
#include <stdint.h>
#include "latsim/stats.h"

typedef struct scenario scenario;   /* latsim/scenario.h */
struct tseries;                     /* latsim/tseries.h */
struct omx;                         /* latsim/omx.h */

/* One reported number of a metric family (run collectors, run/collect.h): the
 * rows report_flatten() (latsim/report.h) copies into a report, where each
 * family's rows stand where the report puts that family (FAMILY names it);
 * a family the report does not place (one registered at run time) has its
 * rows after the report's own rows of their scope. */
typedef struct sim_row {
    char *scope;              /* "" the system, a pool name, "class:NAME"... (owned) */
    char *metric;             /* e.g. "e2e_cold", "attempts" (owned) */
    const char *stat;         /* "value", or a latency's "mean" .. "max" (a string literal) */
    double value;             /* the number, in the metric's unit (ms for latencies); NAN for a name */
    char *text;               /* a name instead of a number (owned), NULL for a number */
    const char *family;       /* the collector that added it (its row's name, a string literal) */
    int hide;                 /* 1: NAN in the report when the run is saturated (latencies, shares) */
    stat_summary *dist;       /* on a latency's "mean" row: its summary (owned), behind the intervals of
                                 its percentiles over replications; NULL otherwise */
} sim_row;

/* A run's family rows, in the order they were added. */
typedef struct sim_rows {
    sim_row *row;
    size_t n, cap;
    const char *family;       /* the family adding rows now (the engine sets it before each emit, and for its own) */
    size_t *by_key;           /* the rows' indexes sorted by scope, metric, stat, then row order: the readers'
                                 binary search (made at the end of sim_run; used while nkey == n), or NULL */
    size_t nkey;              /* how many rows by_key indexes */
    size_t *pool;             /* the index of each pool's first row (family "pool"), in pool order, or NULL */
    int npool;                /* how many pools pool holds (made with by_key) */
} sim_rows;

/* A run's results.  Everything it measured is a row (rows); what is not: the
 * seed (a 64-bit integer, which a double does not hold exactly), and two
 * objects the front end writes out whole, the time series and the
 * OpenMetrics series. */
typedef struct sim_result {
    uint64_t seed;            /* the run's seed */
    struct tseries *ts;       /* the time series (scenario ts_interval_s > 0), owned; else NULL */
    struct omx *omx;          /* run --metrics: the OpenMetrics series (latsim/omx.h), owned; else NULL */
    sim_rows rows;            /* the metric families' rows (sim_result_get), owned */
} sim_result;

/* Runs SC with SEED.  Returns 0, or -1 with a message in ERR (out of memory). */
int sim_run(const scenario *sc, uint64_t seed, sim_result *out, char *err, size_t errlen);
void sim_result_free(sim_result *r);

/* The value of the family row (SCOPE, METRIC, STAT) of R (STAT "value" for a
 * number, "mean" .. "max" for a latency), NAN when R has none. */
double sim_result_get(const sim_result *r, const char *scope, const char *metric, const char *stat);

/* The family row (SCOPE, METRIC, STAT) of R, NULL when R has none. */
const sim_row *sim_result_row(const sim_result *r, const char *scope, const char *metric, const char *stat);

/* The system's count METRIC of R (row (scope "", METRIC, "value"): "requests",
 * "served", "rejected", "timed_out", "failed", "abandoned", "departures",
 * "warmup_requests", "events", "peak_in_system"), 0
 * when R does not report it (failed without a fleet, abandoned without
 * patience_s). */
uint64_t sim_result_count(const sim_result *r, const char *metric);

/* The system's number METRIC of R (row (scope "", METRIC, "value"), e.g.
 * "window_s", "throughput_rps", "output_tokens_per_s", "wall_time_s"), NAN
 * when R does not report it (output_tokens_per_s without a pool counting
 * tokens). */
double sim_result_value(const sim_result *r, const char *metric);

/* The name of pool I of R (0-based, in the scenario's order: the scope of its
 * rows, family "pool"), NULL when R has no pool I.  Its results are rows of
 * that scope: sim_result_get(&res, sim_result_pool(&res, 0), "served",
 * "value"), a kind's own as sim_result_get(.., "steps", "value"), its
 * latencies ("queue", "service", "e2e", "ttft", "tpot", "itl") with
 * sim_result_latency. */
const char *sim_result_pool(const sim_result *r, int i);

/* The summary of latency METRIC in SCOPE of R (its "mean" row's dist) into S,
 * zeroed (n 0, as stat_summary of no sample) when it had no sample, e.g.
 * sim_result_latency(&res, "", "e2e", &s) for the system's E2E.  Returns 0,
 * or -1 when R reports no such latency (S zeroed). */
int sim_result_latency(const sim_result *r, const char *scope, const char *metric, stat_summary *s);

#endif
