/* result.h -- what a station reports at the end of a run: one pool_result per
 * pool, the common counters the engine fills and the kind's own metrics
 * (pool_result_add), which report.c prints in the order they were added; and
 * the rows of the run's metric families (sim_rows_*: run collectors, run/collect.h).
 * Stations include this, never the run (run/sim.h) that collects them.  The
 * result structs are public (latsim/sim.h); pool_result_add is the stations'.
 */
#ifndef LATSIM_RESULT_H
#define LATSIM_RESULT_H

#include <stdint.h>
#include "engine/stats.h"
#include "latsim/sim.h"   /* pool_result, pool_metric, pool_metric_get: public */

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

/* Frees R's rows and strings and empties it. */
void sim_rows_free(sim_rows *r);

#endif
