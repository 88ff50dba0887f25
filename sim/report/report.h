/* report.h -- turning results into numbers, tables and JSON.
 *
 * report_flatten() lists every reported statistic as (scope, metric, stat,
 * value) rows: the one shape that the JSON printer, the table printer, the
 * database and the replication statistics all share.  Latencies of a saturated
 * pool (and the system's, when any pool is saturated) are NAN: they would not
 * mean anything.
 */
#ifndef LATSIM_REPORT_H
#define LATSIM_REPORT_H

#include <stdio.h>
#include "engine/repci.h"
#include "run/sim.h"
#include "report/row.h"

typedef struct report_cdf {   /* one point of a system latency CDF */
    const char *metric;   /* "e2e", "queue", "ttft", "tpot" (string literal) */
    double p;             /* probability, from stat_cdf_probs */
    double value;         /* the quantile, ms */
} report_cdf;

/* Scope of a class's rows: "class:" followed by the class name (pool scopes
 * are the pool names; "" is the whole system). */
#define REPORT_CLASS_SCOPE "class:"

/* One run's distribution of a latency (the rows "mean" .. "max" of a scope and
 * metric), for the intervals of its percentiles over replications (repci.h). */
typedef struct report_dist {
    size_t row;           /* index in rows of the group's "mean" row */
    repci_dist d;         /* its quantiles, ms */
} report_dist;

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
