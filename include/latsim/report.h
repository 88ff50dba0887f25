/* latsim/report.h -- a run's results as rows, tables and JSON (public).
 *
 * report_flatten() lists every reported statistic of a sim_result as (scope,
 * metric, stat, value) rows: the one shape that the JSON printer, the table
 * printer, the database and the replication statistics all share.  Latencies
 * of a saturated pool (and the system's, when any pool is saturated) are NAN:
 * they would not mean anything.
 */
#ifndef LATSIM_PUBLIC_REPORT_H
#define LATSIM_PUBLIC_REPORT_H

#include <stddef.h>
#include <stdio.h>
#include "latsim/sim.h"

typedef struct store_stat {      /* one reported number */
    int replication;             /* 0-based; -1 for the aggregate over replications */
    const char *scope;           /* "" for the whole system, or a pool name */
    const char *metric;          /* e.g. "e2e", "throughput_rps", "busy_share" */
    const char *stat;            /* e.g. "p99", "mean", "value" */
    double value;                /* the number (ms for latencies); NAN for a name */
    double ci95;                 /* half-width of the 95 % interval, NAN when none */
    const char *text;            /* a name instead of a number (a pool's "kind", its
                                    "cost_model.kind" and "cost_model.source"), stored
                                    as text (run_stats.text); NULL for a number */
} store_stat;

typedef struct report_cdf {   /* one point of a system latency CDF */
    const char *metric;   /* "e2e", "queue", "ttft", "tpot" (string literal) */
    double p;             /* probability, from stat_cdf_probs */
    double value;         /* the quantile, ms */
} report_cdf;

/* Scope of a class's rows: "class:" followed by the class name (pool scopes
 * are the pool names; "" is the whole system). */
#define REPORT_CLASS_SCOPE "class:"

/* Scope of a route's rows (an out-edge of a station with several): "route:"
 * followed by ROUTER "->" TARGET, its pool names. */
#define REPORT_ROUTE_SCOPE "route:"

/* A pool's busy share (metric of its "value" row): the time-mean share of its
 * servers up that are busy (generic pools), of its replicas up that are
 * stepping (LLM pools: 1 under any continuous-batching load, so not how hard
 * the GPUs work; mfu, mbu and kv_occupancy say that).  Stored and printed as
 * "utilization" before issue 29; such rows of an older database are read as
 * "busy_share" (planstore_load_run). */
#define REPORT_BUSY_SHARE "busy_share"

/* A flattened run's latency distributions (the intervals of its percentiles
 * over replications): internal to the report (sim/report/report.h). */
typedef struct report_dist report_dist;

typedef struct report {
    store_stat *rows;     /* the statistics (their scope, metric and text strings are owned) */
    size_t n, cap;
    report_cdf *cdf;      /* quantiles to draw CDFs (none when saturated) */
    size_t ncdf;
    report_dist *dist;    /* a flattened run's latency distributions, in row order (none
                             when hidden or empty, nor in aggregates and stored runs) */
    size_t ndist, capdist;
    int replications;     /* runs aggregated (1: a single run, ci95 NAN) */
} report;

/* Flattens R (replication number REP, -1 for none) into OUT.  Returns 0 or -1. */
int report_flatten(const sim_result *r, int rep, report *out);

/* Aggregates N flattened runs: the mean of each row and the half-width of its
 * 95 % interval: Student-t, except for the percentiles (p50 .. p999) of runs that
 * all carry their distribution (report_dist), whose interval is repci.h's.
 * Returns 0 or -1. */
int report_aggregate(const report *runs, int n, report *out);

/* The value of one row, NAN when absent. */
double report_get(const report *r, const char *scope, const char *metric, const char *stat);

/* The name a row holds instead of a number (a pool's "kind", "cost_model.kind",
 * "cost_model.source"), NULL when there is no such row or it holds a number. */
const char *report_get_text(const report *r, const char *scope, const char *metric);

/* The rows of SCOPE (their run of consecutive rows: a report keeps each scope's
 * rows together) as a view of R that shares its rows, for report_get and
 * report_get_text in time proportional to the scope's rows.  The search starts
 * at row *FROM (then wraps around) and sets *FROM past the scope, so that
 * scopes looked up in report order take one pass over R in all.  A scope R
 * lacks gives an empty view. */
report report_scope(const report *r, const char *scope, size_t *from);

/* Prints the report as one JSON object.  EXTRA holds the leading members
 * ("scenario", "seed", "version"...) already formatted, without braces. */
void report_json(const report *r, const char *extra, FILE *out);

/* Prints a readable table. */
void report_table(const report *r, const char *title, FILE *out);

void report_free(report *r);

/* Writes S as a JSON string (RFC 8259): quotes and backslashes escaped, control
 * characters and DEL as \u00XX, and each byte that is not part of valid UTF-8
 * as the code point of the same value (Latin-1: 0xFF is \u00ff), so that the
 * output is always valid UTF-8 JSON.  The one JSON string writer: every JSON
 * output (run, sweep, plan, compare, cost, the stored runs) uses it. */
void report_json_str(FILE *out, const char *s);

#endif
