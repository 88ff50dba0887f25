/* report.h -- turning results into numbers, tables and JSON.
 *
 * The rows, the report and its functions are public (latsim/report.h, which
 * says what they are); this header adds the report's internal record of a
 * run's latency distributions.
 */
#ifndef LATSIM_REPORT_H
#define LATSIM_REPORT_H

#include <stdio.h>
#include "engine/repci.h"
#include "run/sim.h"
#include "report/row.h"
#include "latsim/report.h"   /* report, report_cdf, the functions: public */

/* One run's distribution of a latency (the rows "mean" .. "max" of a scope and
 * metric), for the intervals of its percentiles over replications (repci.h). */
struct report_dist {
    size_t row;           /* index in rows of the group's "mean" row */
    repci_dist d;         /* its quantiles, ms */
};

/* The stats of a latency's rows, in order: "mean", "p50" .. "p999", "max". */
extern const char *const REPORT_LAT_STATS[7];

/* Appends the row (SCOPE, METRIC, STAT) = V of replication REP to R (SCOPE and
 * METRIC copied; STAT a string literal).  Returns 0 or -1. */
int report_add(report *r, int rep, const char *scope, const char *metric, const char *stat, double v);

/* Appends a row whose value is the name TEXT (copied; value NAN).  Returns 0 or -1. */
int report_add_text(report *r, int rep, const char *scope, const char *metric, const char *text);

#endif
